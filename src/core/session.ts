import * as nodePath from 'node:path';
import { SandboxError, cancelled, isSandboxError, refused } from './errors.ts';
import type { CallOrigin, GateCall, GateTarget, Verdict } from './gate.ts';
import { normalizeModelPath, resolveOnDisk, type ModelPath, type ResolvedPath, type ResolveOptions, type WorkspaceRoot } from './paths.ts';
import { strictest, type Policy } from './policy.ts';
import type { Clock, Gate, Log, WorkspaceFs } from './ports.ts';
import type { SandboxSearch } from './search/port.ts';
import type { DirectoryLister } from './list/port.ts';
import { fsLister } from './list/fs-lister.ts';
import type { Capability, Risk, SchemaDeclaration, Tool, ToolContext, ToolOutcome } from './tool.ts';
import { validateInput } from './schema.ts';
import { ArtifactStore } from './artifacts/store.ts';
import { MediaStore } from './media/store.ts';
import { SaveHistory } from './media/history.ts';
import type { OpenEditors } from './media/editors.ts';
import type { WriteRoots } from './media/write-roots.ts';
import { DEFAULT_PAGE, type PageBudget } from './results/budget.ts';

export interface SessionLimits {
  /** Disk budget for artifact spool files, in bytes; least-recently-used artifacts are evicted beyond it. */
  readonly artifactBudgetBytes: number;
  /** Memory budget for staged media, in bytes. */
  readonly mediaBudgetBytes: number;
  /** Largest file a backend without streaming may read, in bytes. */
  readonly nonStreamingMaxBytes: number;
  /** Disk budget for the bytes saves replaced (and wrote), kept so that saves can be undone. */
  readonly undoBudgetBytes: number;
}

export const DEFAULT_LIMITS: SessionLimits = {
  artifactBudgetBytes: 4 * 1024 ** 3,
  mediaBudgetBytes: 256 * 1024 ** 2,
  nonStreamingMaxBytes: 64 * 1024 ** 2,
  undoBudgetBytes: 256 * 1024 ** 2,
};

export interface SessionOptions {
  readonly fs: WorkspaceFs;
  readonly roots: () => readonly WorkspaceRoot[];
  readonly gate: Gate;
  /** Read on every call, so changed settings apply to the next call. */
  readonly policy: () => Policy;
  readonly search?: SandboxSearch;
  /** The directory-listing backend (default: walking the WorkspaceFs). */
  readonly lister?: DirectoryLister;
  /** The ripgrep binary artifact_grep runs (the same one the search backend uses). */
  readonly ripgrepPath?: string;
  readonly clock: Clock;
  readonly log: Log;
  /** A private folder for artifact spool files (the extension's storage, or a temp folder). */
  readonly spoolDir: string;
  readonly limits?: () => SessionLimits;
  /** Where save_media may write, read on every save; absent: every workspace folder. */
  readonly writeRoots?: () => WriteRoots;
  /** Tools the host allows at all (e.g. no write tools in an untrusted workspace). */
  readonly allowWrites?: () => boolean;
  /** The host's open editors: a save never writes under unsaved changes. */
  readonly editors?: OpenEditors;
}

/** What a host passes along with one call. */
export interface InvokeOptions {
  /** One page of result for the model (default: 50 KiB); the host's token budget makes it smaller. */
  readonly page?: PageBudget;
}

/** The outcome of the validate → policy steps: what the gate will be asked. */
export interface PreparedCall {
  readonly tool: Tool;
  readonly call: GateCall;
  /** The risks the policy judged the targets by: the tool's own, and `read` when a write also reads. */
  readonly risks: readonly Risk[];
  readonly paths: readonly ModelPath[];
  execute(ctx: ToolContext): Promise<ToolOutcome>;
}

/**
 * One host's tool session: the ports, the stores that live across calls (artifacts, media), and
 * the pipeline every call runs: validate → policy → gate → translate path → open.
 */
export class Session {
  readonly fs: WorkspaceFs;
  readonly gate: Gate;
  readonly search: SandboxSearch | undefined;
  readonly lister: DirectoryLister;
  readonly clock: Clock;
  readonly log: Log;
  readonly artifacts: ArtifactStore;
  readonly media: MediaStore;
  /** This window's saves, with what they replaced, for undo. */
  readonly saves: SaveHistory;
  readonly editors: OpenEditors | undefined;
  private readonly options: SessionOptions;

  constructor(options: SessionOptions) {
    this.options = options;
    this.fs = options.fs;
    this.gate = options.gate;
    this.search = options.search;
    this.lister = options.lister ?? fsLister(options.fs);
    this.editors = options.editors;
    this.clock = options.clock;
    this.log = options.log;
    this.artifacts = new ArtifactStore({ fs: options.fs, dir: options.spoolDir, clock: options.clock, budgetBytes: () => this.limits.artifactBudgetBytes, nonStreamingMaxBytes: () => this.limits.nonStreamingMaxBytes, ripgrepPath: () => options.ripgrepPath });
    this.media = new MediaStore({ clock: options.clock, budgetBytes: () => this.limits.mediaBudgetBytes, ...(options.writeRoots ? { writeRoots: options.writeRoots } : {}) });
    this.saves = new SaveHistory({
      dir: async () => { await this.artifacts.start(); return nodePath.join(this.artifacts.spoolDir, 'saves'); },
      budgetBytes: () => this.limits.undoBudgetBytes,
      clock: options.clock,
    });
  }

  get roots(): readonly WorkspaceRoot[] { return this.options.roots(); }
  /** The policy in force, knowing the workspace folders (so nested folders and absolute paths are judged). */
  get policy(): Policy {
    const policy = this.options.policy();
    const folders = this.roots.map((r) => r.localPath);
    const key = folders.join('\u0000');
    if (this.placed?.policy !== policy || this.placed.key !== key) this.placed = { policy, key, placed: policy.within(folders) };
    return this.placed.placed;
  }
  private placed: { readonly policy: Policy; readonly key: string; readonly placed: Policy } | undefined;
  get limits(): SessionLimits { return this.options.limits?.() ?? DEFAULT_LIMITS; }
  get declaration(): SchemaDeclaration { return { supportsFollow: this.search?.supportsFollow ?? false }; }

  /** Pure lexical translation of a model path against the current workspace folders. */
  normalize(raw: string): ModelPath { return normalizeModelPath(raw, this.roots); }

  /** The folder a search or listing covers: `path`, or every workspace folder when it is omitted. */
  folderScope(path: string | undefined): ModelPath[] {
    return path === undefined ? this.allRoots() : [this.normalize(path)];
  }

  /** Every workspace folder as a target (for tools whose `path` is optional). */
  allRoots(): ModelPath[] {
    const roots = this.roots;
    return roots.map((root) => ({ root, rel: '', display: roots.length > 1 ? root.name : '.' }));
  }

  hasCapability(capability: Capability): boolean {
    const caps = this.fs.capabilities;
    switch (capability) {
      case 'streaming': return caps.streaming;
      case 'symlinks': return caps.symlinks;
      case 'writable': return caps.writable && (this.options.allowWrites?.() ?? true);
      case 'search': return this.search !== undefined && caps.localPaths;
      case 'ripgrep': return this.artifacts.ripgrepAvailable();
    }
  }

  /** Validates and classifies a call without touching the filesystem. */
  prepare(tool: Tool, raw: unknown, origin: CallOrigin = 'headless'): PreparedCall {
    const input = validateInput(tool.name, tool.inputSchema(this.declaration), raw);
    const prepared = tool.prepare(input, this);
    const policy = this.policy;
    const risks: Risk[] = prepared.targets.reads && tool.risk === 'write' ? ['write', 'read'] : [tool.risk];
    const targets: GateTarget[] = prepared.targets.paths.map((p) => {
      // Staging a file's current bytes changes nothing yet: the protected list asks when its content is changed.
      const decisions = risks.map((risk) => policy.decide(p.rel, risk, p.root.localPath)).filter((d) => !(prepared.targets.reads && d.source === 'protected'));
      const { action, rule, source, reason } = strictest(decisions);
      return { display: p.display, action, ...(rule ? { rule } : {}), ...(source ? { source } : {}), ...(reason ? { reason } : {}) };
    });
    const taint = prepared.targets.taint;
    const call: GateCall = { tool: tool.name, origin, risk: tool.risk, summary: prepared.targets.summary, targets, secret: taint !== undefined || targets.some((t) => t.action === 'ask'), ...(taint ? { taint } : {}) };
    return { tool, call, risks, paths: prepared.targets.paths, execute: (ctx) => prepared.execute(ctx) };
  }

  /** Runs one call through the whole pipeline. Throws a SandboxError on refusal or failure. */
  async invoke(tool: Tool, raw: unknown, signal: AbortSignal = new AbortController().signal, origin: CallOrigin = 'headless', options: InvokeOptions = {}): Promise<ToolOutcome> {
    const started = this.clock.now();
    let prepared: PreparedCall | undefined;
    let verdict: Verdict | undefined;
    try {
      // A call that cannot run is refused before anyone is asked to approve it.
      const missing = tool.requires.filter((c) => !this.hasCapability(c));
      if (missing.includes('writable')) {
        throw refused(`${tool.name} is not available here: this workspace is read-only or not trusted. Tell the user what you wanted to change instead.`);
      }
      if (missing.length > 0) {
        const why = missing.includes('ripgrep') ? ': ripgrep was not found' : missing.includes('search') ? ': ripgrep was not found, or the workspace is not on a local disk' : '';
        throw new SandboxError('E_SANDBOX_UNSUPPORTED', `${tool.name} is not available in this workspace (it needs ${missing.join(', ')}${why}). Use list_directory and open_file instead.`);
      }
      prepared = this.prepare(tool, raw, origin);
      const deniedAt = prepared.call.targets.findIndex((t) => t.action === 'deny');
      if (deniedAt !== -1) {
        verdict = { allow: false, decidedBy: 'rule' };
        const denied = prepared.call.targets[deniedAt]!;
        const path = prepared.paths[deniedAt]!;
        const risk = prepared.risks.find((r) => this.policy.decide(path.rel, r, path.root.localPath).action === 'deny') ?? tool.risk;
        throw refused(`${tool.name} on "${denied.display}" was refused by the rule "${denied.rule}" (${risk} denied). Do not retry this path; work with other files or ask the user to change workspaceTools.rules.`);
      }
      if (signal.aborted) throw cancelled();
      verdict = await this.gate(prepared.call, signal);
      if (!verdict.allow) {
        const target = prepared.call.targets[0]?.display;
        throw refused(verdict.reason ?? `The user declined ${tool.name}${target ? ` on "${target}"` : ''}. Do not retry the same call; ask the user what they want instead.`);
      }
      if (signal.aborted) throw cancelled();
      const ctx = this.context(prepared, signal, options.page ?? DEFAULT_PAGE);
      const outcome = await prepared.execute(ctx);
      this.audit(tool, prepared, verdict, started, `ok ${Buffer.byteLength(outcome.text)} bytes`);
      return outcome;
    } catch (e) {
      const code = isSandboxError(e) ? e.code : 'E_BUG';
      this.audit(tool, prepared, verdict, started, code, prepared === undefined ? 'invalid' : undefined);
      throw e;
    }
  }

  private context(prepared: PreparedCall, signal: AbortSignal, page: PageBudget): ToolContext {
    const gated = new Set(prepared.paths.map((p) => `${p.root.name}\u0000${p.rel}`));
    const linksConfirmed = new Set<string>();
    return {
      session: this,
      signal,
      page,
      resolve: async (path: ModelPath, options: ResolveOptions = {}): Promise<ResolvedPath> => {
        // Security: a tool may only open what the gate was asked about (or something below it).
        const covered = [...gated].some((key) => {
          const [rootName, rel] = key.split('\u0000') as [string, string];
          return rootName === path.root.name && (rel === '' || path.rel === rel || path.rel.startsWith(rel + '/'));
        });
        if (!covered) throw new SandboxError('E_SANDBOX_REFUSED', `"${path.display}" was not part of the approved call. Call the tool again naming that path.`);
        if (signal.aborted) throw cancelled();
        const resolved = await resolveOnDisk(path, this.fs, options);
        const moved = resolved.realRel !== resolved.rel || (resolved.realRoot !== undefined && resolved.realRoot !== resolved.root.localPath);
        if (moved) for (const risk of prepared.risks) this.checkRealTarget(risk, resolved);
        await this.confirmLinks(prepared, resolved, linksConfirmed, signal);
        return resolved;
      },
    };
  }

  /**
   * Security: a file with several names (hard links) can be a protected file under an innocent name,
   * and no rule sees the other names. So the person is asked again, told how many names it has
   * (the first question named only this one), before it is read or written.
   */
  private async confirmLinks(prepared: PreparedCall, resolved: ResolvedPath, confirmed: Set<string>, signal: AbortSignal): Promise<void> {
    const links = resolved.checked?.type === 'file' ? resolved.checked.nlink ?? 1 : 1;
    if (links <= 1 || confirmed.has(resolved.display)) return;
    const named = prepared.call.targets.some((t) => t.display === resolved.display);
    const targets = named
      ? prepared.call.targets.map((t) => (t.display === resolved.display ? { ...t, links } : t))
      : [...prepared.call.targets, { display: resolved.display, action: 'default' as const, links }];
    const call: GateCall = { ...prepared.call, targets };
    if (signal.aborted) throw cancelled();
    const verdict = await this.gate(call, signal);
    if (!verdict.allow) throw refused(`The user declined ${prepared.tool.name} on "${resolved.display}", a file with ${links} names (hard links): another of its names may be protected. Do not retry it under another name; ask the user what they want instead.`);
    confirmed.add(resolved.display);
  }

  /** The rule protecting a resolved path from reading (ask or deny), by its name or by where it leads; undefined when none does. */
  readProtection(resolved: ResolvedPath): string | undefined {
    const policy = this.policy;
    const decision = strictest([
      policy.decide(resolved.rel, 'read', resolved.root.localPath),
      policy.decide(resolved.realRel, 'read', resolved.realRoot ?? resolved.root.localPath),
    ]);
    return decision.action === 'ask' || decision.action === 'deny' ? decision.rule : undefined;
  }

  /** Security: a link inside the workspace must not launder a denied or secret path. */
  private checkRealTarget(risk: Risk, resolved: ResolvedPath): void {
    const policy = this.policy;
    const lexical = policy.decide(resolved.rel, risk, resolved.root.localPath).action;
    const real = policy.decide(resolved.realRel, risk, resolved.realRoot ?? resolved.root.localPath);
    if (real.action === 'deny' || (real.action === 'ask' && lexical !== 'ask')) {
      if (resolved.realRel === resolved.rel) {
        throw refused(`"${resolved.display}" is really "${[resolved.realRoot, resolved.realRel].filter(Boolean).join('/')}" (the workspace folder "${resolved.root.name}" is a link), which the rule "${real.rule}" protects (${real.action} for ${risk}). Ask the user to open the real folder instead.`);
      }
      throw refused(`"${resolved.display}" is a link to a path that the rule "${real.rule}" protects (${real.action} for ${risk}). Use the real path so the user is asked about it.`);
    }
  }

  private audit(tool: Tool, prepared: PreparedCall | undefined, verdict: Verdict | undefined, started: number, outcome: string, forced?: 'invalid'): void {
    this.log.audit({
      tool: tool.name,
      target: prepared?.call.targets.map((t) => t.display).join(', ') ?? '',
      verdict: forced ?? (verdict?.allow ? 'allowed' : 'refused'),
      decidedBy: verdict?.decidedBy ?? (forced ? 'validation' : 'rule'),
      durationMs: this.clock.now() - started,
      outcome,
    });
  }

  async dispose(): Promise<void> {
    await this.saves.dispose();
    await this.artifacts.dispose();
    this.media.clear();
  }
}
