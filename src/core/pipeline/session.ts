import * as nodePath from 'node:path';
import { SandboxError, cancelled, isSandboxError, refused } from '../errors.ts';
import { VSCODE_VOCABULARY, type HostVocabulary } from '../vocabulary.ts';
import { confirmationOf, type CallOrigin, type GateCall, type Verdict } from '../gate.ts';
import { displayOf, normalizeModelPath, resolveOnDisk, withDistinctNames, type ModelPath, type WorkspaceRoot } from '../paths.ts';
import type { Policy } from '../policy.ts';
import type { Clock, Gate, Log, WorkspaceFs } from '../ports.ts';
import type { SandboxSearch } from '../search/port.ts';
import type { Ripgrep } from '../search/ripgrep-process.ts';
import type { DirectoryLister } from '../list/port.ts';
import { fsLister } from '../list/fs-lister.ts';
import type { CallContext, CallServices, Capability, DiskWrite, SchemaDeclaration, TargetScope, Tool, ToolOutcome } from '../contract/tool.ts';
import type { Risk } from '../types.ts';
import { callContext, checkOpenFolder, confirmRejudged, deniedBy, judge, risksOf, type Denial, type Judgement } from './steps.ts';
import { confirmEach, planBatch, type BatchPlan } from './batch-gate.ts';
import { resolvedFs, type ResolvedFs } from '../fs/resolved-fs.ts';
import { validateInput } from '../contract/schema.ts';
import { ArtifactStore } from '../artifacts/store.ts';
import { MediaStore } from '../media/store.ts';
import { SaveHistory } from '../media/history.ts';
import { SetJournal } from '../media/journal.ts';
import { journalFolder } from '../state-dir.ts';
import { recoverSets, type RecoveredSet } from '../media/recover-sets.ts';
import { SaveGuard } from '../media/save-guard.ts';
import type { OpenEditors } from '../media/editors.ts';
import { DEFAULT_PAGE, type PageBudget } from '../results/budget.ts';
import type { ProgressReporter } from '../results/progress.ts';
import type { LinkIndex } from '../links/link-index.ts';
import { LinkCache } from '../links/walk.ts';
import { boundaryLineOf, protectedWriteGlobs, VerdictMemo } from '../shell/boundary.ts';
import { LayerCheck } from '../shell/layer.ts';
import { SessionHosts } from '../shell/hosts.ts';
import type { ShellServices } from '../shell/port.ts';
import { DEFAULT_LIMITS, type SessionLimits, type SessionOptions } from './session-options.ts';

export { DEFAULT_LIMITS, type SessionLimits, type SessionOptions };

/** How old a walk of the workspace's links a call that does not write to disk may be judged with. */
const LINKS_MAX_AGE_MS = 5_000;


/** What a host passes along with one call. */
export interface InvokeOptions {
  /** One page of result for the model (default: 50 KiB); the host's token budget makes it smaller. */
  readonly page?: PageBudget;
  /**
   * `confirmationOf` the call as the host had it confirmed before running it (VS Code's chat
   * confirmation). Security: a call whose targets changed since (undo_save of "the latest save",
   * after another save landed) is refused, not run on what nobody confirmed.
   */
  readonly confirmed?: string;
  /** Where a long call reports how far it got (throttled by the caller as it needs). */
  readonly progress?: ProgressReporter;
}

/** The outcome of the validate → policy steps: what the gate will be asked. */
export interface PreparedCall<R = unknown> {
  readonly tool: Tool<R>;
  readonly call: GateCall;
  /** The risks the policy judged the targets by: the tool's own, and `read` when a write also reads. */
  readonly risks: readonly Risk[];
  readonly paths: readonly ModelPath[];
  /** What the call writes to disk (`CallTargets.writes`). */
  readonly writes: readonly DiskWrite[];
  /** The first target a rule denies, with that rule and the risk it denies. */
  readonly denial: Denial | undefined;
  /** The policy's verdicts on the targets again, by the policy in force now. */
  rejudge(): Judgement;
  /**
   * A batch (`CallTargets.each`): each path judged alone. `call` names only the paths its one
   * confirmation covers; these are the others, each with its own summary: the ones a rule denies
   * (they fail alone, nobody is asked) and the ones an `ask` rule protects (each asked in its own modal).
   */
  readonly batch?: BatchPlan;
  execute(call: CallContext, services: CallServices): Promise<ToolOutcome<R>>;
}

/**
 * One host's tool session: the ports, the stores that live across calls (artifacts, media), and
 * the pipeline every call runs: validate → policy → gate → translate path → open.
 */
export class Session implements TargetScope {
  readonly fs: WorkspaceFs;
  readonly gate: Gate;
  readonly search: SandboxSearch | undefined;
  readonly ripgrep: Ripgrep | undefined;
  readonly lister: DirectoryLister;
  readonly clock: Clock;
  readonly log: Log;
  readonly artifacts: ArtifactStore;
  readonly media: MediaStore;
  /** This window's saves, with what they replaced, for undo. */
  readonly saves: SaveHistory;
  /** The workspace's journal of change sets: a set interrupted by the process's end is finished or rolled back at the next start. */
  readonly journal: SetJournal;
  /** Write roots and one save of a file at a time, for save_media and undo_save. */
  readonly saveGuard: SaveGuard;
  readonly editors: OpenEditors | undefined;
  /** run_shell_command's sandbox and what the session keeps for it (hosts allowed for the session). */
  readonly shell: ShellServices | undefined;
  /** The host's words for what the person can change (its settings or flags), for the messages. */
  readonly vocabulary: HostVocabulary;
  private readonly options: SessionOptions;
  /** The same fs, typed for resolved addresses only: what a call's tool gets. */
  private readonly resolvedFs: ResolvedFs;

  constructor(options: SessionOptions) {
    this.options = options;
    this.vocabulary = options.vocabulary ?? VSCODE_VOCABULARY;
    this.fs = options.fs;
    this.resolvedFs = resolvedFs(options.fs);
    this.gate = options.gate;
    this.search = options.search;
    this.ripgrep = options.ripgrep;
    this.lister = options.lister ?? fsLister(options.fs);
    this.editors = options.editors;
    this.shell = options.shell ? { host: options.shell, hosts: new SessionHosts(), memo: new VerdictMemo(), layer: new LayerCheck(), words: this.vocabulary } : undefined;
    this.clock = options.clock;
    this.log = options.log;
    this.artifacts = new ArtifactStore({ lifetime: this.vocabulary.session, fs: options.fs, dir: options.spoolDir, clock: options.clock, budgetBytes: () => this.limits.artifactBudgetBytes, nonStreamingMaxBytes: () => this.limits.nonStreamingMaxBytes, ...(options.encodingOf ? { encodingOf: options.encodingOf } : {}) });
    this.media = new MediaStore({ budgetSetting: this.vocabulary.budget('media'), clock: options.clock, budgetBytes: () => this.limits.mediaBudgetBytes, ...(options.encodingOf ? { encodingOf: options.encodingOf } : {}) });
    this.saveGuard = new SaveGuard(options.writeRoots);
    this.links = new LinkCache(options.fs, options.clock, options.log);
    const spoolFolder = async (name: string): Promise<string> => { await this.artifacts.start(); return nodePath.join(this.artifacts.spoolDir, name); };
    this.saves = new SaveHistory({ dir: () => spoolFolder('saves'), budgetBytes: () => this.limits.undoBudgetBytes, budgetSetting: this.vocabulary.budget('undo'), clock: options.clock });
    this.journal = new SetJournal({ dir: () => journalFolder(options.stateDir, this.roots, this.log, () => spoolFolder('state')), clock: options.clock });
  }

  /** The workspace folders, under distinct names (two folders named "app" are "app" and "app (2)"). */
  get roots(): readonly WorkspaceRoot[] { return withDistinctNames(this.options.roots()); }
  /**
   * The policy in force, knowing the workspace folders (so nested folders and absolute paths are
   * judged) and the links in them (so a path is also judged by the names links give it).
   */
  get policy(): Policy {
    const policy = this.options.policy();
    const links = this.links.current;
    const folders = this.roots.map((r) => r.localPath);
    const reals = folders.map((f) => (f === undefined ? undefined : links.realOf(f)));
    const key = [...folders, ...reals].join('\u0000');
    if (this.placed?.policy !== policy || this.placed.key !== key) this.placed = { policy, key, placed: policy.within(folders, reals) };
    if (this.linked?.placed !== this.placed.placed || this.linked.links !== links) this.linked = { placed: this.placed.placed, links, linked: this.placed.placed.withLinks(links) };
    return this.linked.linked;
  }
  private placed: { readonly policy: Policy; readonly key: string; readonly placed: Policy } | undefined;
  private linked: { readonly placed: Policy; readonly links: LinkIndex; readonly linked: Policy } | undefined;
  /** The links of the workspace folders, walked again as calls need (see `LinkCache`). */
  private readonly links: LinkCache;
  get limits(): SessionLimits { return this.options.limits?.() ?? DEFAULT_LIMITS; }
  get declaration(): SchemaDeclaration { return { supportsFollow: this.search?.supportsFollow ?? false }; }

  /** Pure lexical translation of a model path against the current workspace folders. */
  normalize(raw: string): ModelPath { return normalizeModelPath(raw, this.roots, this.vocabulary.noFolder); }

  /** The folder a search or listing covers: `path`, or every workspace folder when it is omitted. */
  folderScope(path: string | undefined): ModelPath[] {
    return path === undefined ? this.allRoots() : [this.normalize(path)];
  }

  /** Every workspace folder as a target (for tools whose `path` is optional). */
  allRoots(): ModelPath[] {
    const roots = this.roots;
    return roots.map((root) => ({ root, rel: '', display: displayOf(root.name, '', roots.length > 1) }));
  }

  /** One line describing the shell sandbox's boundary as the settings are now. */
  shellBoundaryLine(allowProtectedWrites = false): string {
    return boundaryLineOf(this.shell, this.saveGuard.current() ?? this.allRoots(), allowProtectedWrites);
  }

  hasCapability(capability: Capability): boolean {
    const caps = this.fs.capabilities;
    switch (capability) {
      case 'streaming': return caps.streaming;
      case 'symlinks': return caps.symlinks;
      case 'writable': return caps.writable && (this.options.allowWrites?.() ?? true);
      case 'search': return this.search !== undefined && caps.localPaths;
      case 'ripgrep': return this.ripgrep !== undefined;
      case 'shell': return this.options.shell !== undefined && this.ripgrep !== undefined && caps.localPaths;
    }
  }

  /** Validates and classifies a call without touching the filesystem. */
  prepare<R>(tool: Tool<R>, raw: unknown, origin: CallOrigin = 'headless'): PreparedCall<R> {
    const input = validateInput(tool.name, tool.inputSchema(this.declaration), raw);
    const prepared = tool.prepare(input, this);
    for (const path of prepared.targets.paths) checkOpenFolder(path, this.roots, tool.name);
    const risks = risksOf(tool.risk, prepared.targets);
    const { targets, denial: ruled } = judge(this.policy, prepared.targets, risks);
    const taint = prepared.targets.taint;
    // Security: bytes from a read-denied path stay denied whatever the target's own rules say.
    const denial = ruled ?? (taint?.action === 'deny' ? { display: taint.from, rule: taint.rule, risk: 'read' as const, taintOf: targets[0]?.display ?? taint.from } : undefined);
    const each = prepared.targets.each;
    const rejudge = (): Judgement => judge(this.policy, prepared.targets, risks);
    if (each !== undefined && taint === undefined) {
      const { confirmed, batch } = planBatch(targets, judge(this.policy, prepared.targets, risks).denials, each, prepared.targets.summary);
      const call: GateCall = { tool: tool.name, origin, risk: tool.risk, summary: prepared.targets.summary, targets: confirmed, secret: false };
      return { tool, call, risks, paths: prepared.targets.paths, denial: undefined, rejudge, batch, writes: prepared.targets.writes ?? [], execute: (ctx, services) => prepared.execute(ctx, services) };
    }
    // Security: lifting the protection of protected files is asked every time, naming what it lifts.
    const protectedWrites = prepared.targets.protectedWrites ? protectedWriteGlobs(this.policy) : undefined;
    const call: GateCall = {
      tool: tool.name, origin, risk: tool.risk, summary: prepared.targets.summary, targets,
      secret: taint !== undefined || protectedWrites !== undefined || targets.some((t) => t.action === 'ask'),
      ...(taint ? { taint: { from: taint.from, rule: taint.rule } } : {}), ...(protectedWrites ? { protectedWrites } : {}),
      ...(prepared.targets.writes?.length ? { writesDisk: true } : {}),
    };
    return { tool, call, risks, paths: prepared.targets.paths, denial, rejudge, writes: prepared.targets.writes ?? [], execute: (ctx, services) => prepared.execute(ctx, services) };
  }

  /** What a call's tool may be given (each tool gets the ones it declares). */
  private get services(): CallServices {
    return { fs: this.resolvedFs, artifacts: this.artifacts, media: this.media, saves: this.saves, journal: this.journal, saveGuard: this.saveGuard, search: this.search, ripgrep: this.ripgrep, lister: this.lister, editors: this.editors, problems: this.options.problems, outline: this.options.outline, policy: this.policy, roots: this.roots, clock: this.clock, log: this.log, shell: this.shell };
  }

  /** Runs one call through the whole pipeline. Throws a SandboxError on refusal or failure. */
  async invoke<R>(tool: Tool<R>, raw: unknown, signal: AbortSignal = new AbortController().signal, origin: CallOrigin = 'headless', options: InvokeOptions = {}): Promise<ToolOutcome<R>> {
    const started = this.clock.now();
    let prepared: PreparedCall<R> | undefined;
    let verdict: Verdict | undefined;
    try {
      // A call that cannot run is refused before anyone is asked to approve it.
      const missing = tool.requires.filter((c) => !this.hasCapability(c));
      if (missing.includes('writable')) {
        throw refused(`${tool.name} is not available here: this workspace is read-only or not trusted.`, `Tell the user what you wanted to change instead.`);
      }
      if (missing.length > 0) {
        const why = missing.includes('ripgrep') ? ': ripgrep was not found' : missing.includes('search') ? ': ripgrep was not found, or the workspace is not on a local disk' : missing.includes('shell') ? ': this host runs no commands, or the workspace is not on a local disk' : '';
        throw new SandboxError('E_SANDBOX_UNSUPPORTED', `${tool.name} is not available in this workspace (it needs ${missing.join(', ')}${why}).`, `Use list_directory and open_file instead.`);
      }
      prepared = this.prepare(tool, raw, origin);
      const denial = prepared.denial;
      if (denial !== undefined) {
        verdict = { allow: false, decidedBy: 'rule' };
        throw deniedBy(tool.name, denial, this.vocabulary);
      }
      if (options.confirmed !== undefined && options.confirmed !== confirmationOf(prepared.call)) {
        verdict = { allow: false, decidedBy: 'rule' };
        throw new SandboxError('E_SANDBOX_CONFLICT', `${tool.name} changed after the user confirmed it: they confirmed "${options.confirmed}", and it would now ${confirmationOf(prepared.call)}; nothing was done.`, 'Call it again, so the user confirms what it does now.');
      }
      if (signal.aborted) throw cancelled();
      // A batch whose every path is denied or asked alone has nothing for one confirmation to cover.
      verdict = prepared.batch && prepared.call.targets.length === 0 ? { allow: true, decidedBy: 'rule' } : await this.gate(prepared.call, signal);
      if (!verdict.allow) {
        const target = prepared.call.targets[0]?.display;
        throw verdict.reason
          ? refused(verdict.reason.what, verdict.reason.next)
          : refused(`The user declined ${tool.name}${target ? ` on "${target}"` : ''}.`, 'Do not retry the same call; ask the user what they want instead.');
      }
      if (signal.aborted) throw cancelled();
      // A call that writes to disk is judged with the links as they are now; others with a recent walk.
      // A command's writes are held by the kernel, which follows links itself: its cwd is judged as a read.
      await this.links.refresh(this.roots, tool.needs.includes('saveGuard') && tool.risk !== 'exec' ? 0 : LINKS_MAX_AGE_MS);
      const refusals = prepared.batch ? await confirmEach(this.gate, prepared.call, prepared.batch, prepared.rejudge(), signal, this.vocabulary) : undefined;
      if (!prepared.batch) await confirmRejudged(this.gate, tool.name, prepared.call, prepared.rejudge(), signal, this.vocabulary);
      if (signal.aborted) throw cancelled();
      const ctx = callContext({ fs: this.fs, gate: this.gate, policy: () => this.policy, roots: () => this.roots }, { toolName: tool.name, call: prepared.call, risks: prepared.risks, paths: prepared.paths, ...(refusals ? { refusals } : {}) }, signal, options.page ?? DEFAULT_PAGE, options.progress);
      const outcome = await prepared.execute(ctx, this.services);
      this.audit(tool, prepared, verdict, started, `ok ${Buffer.byteLength(outcome.text)} bytes`);
      return outcome;
    } catch (e) {
      const code = isSandboxError(e) ? e.code : 'E_BUG';
      this.audit(tool, prepared, verdict, started, code, prepared === undefined ? 'invalid' : undefined);
      throw e;
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

  /**
   * Finishes or rolls back the change sets a process's end interrupted (a crash, kill -9, a window
   * reloaded), and logs what became of each. Hosts call it once as they start, before the first call.
   * `roots`: the folders to recover in (default: the workspace folders; the MCP server's --root).
   */
  async recoverInterruptedSets(roots: readonly WorkspaceRoot[] = this.roots): Promise<RecoveredSet[]> {
    return recoverSets({
      media: this.media, saveGuard: this.saveGuard, fs: this.resolvedFs, clock: this.clock, signal: new AbortController().signal,
      journal: this.journal, saves: this.saves, log: this.log, roots,
      resolve: (path, options) => { checkOpenFolder(path, roots, 'recovery'); return resolveOnDisk(path, this.fs, options); },
      // Recovery reveals nothing to a model: it only puts files back.
      readProtection: () => undefined,
    });
  }

  async dispose(): Promise<void> {
    await this.saves.dispose();
    await this.artifacts.dispose();
    this.media.clear();
  }
}
