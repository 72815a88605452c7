import type * as z from 'zod';
import { BugError, type SandboxError } from '../errors.ts';
import type { GatedPath, ModelPath, ResolvedPath, ResolveOptions, WorkspaceRoot } from '../paths.ts';
import type { ProgressReporter } from '../results/progress.ts';
import type { PageBudget } from '../paging/budget.ts';
import type { ToolName } from './names.ts';
import type { ToolRisk } from '../types.ts';
import type { ImagePart } from '../images/part.ts';
import type { SchemaDeclaration } from './schema.ts';
import type { ReadProtection, ReadTaint } from '../gate.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { MediaStore } from '../media/store.ts';
import type { PlannedWrite } from '../media/types.ts';
import type { SaveHistory } from '../media/history.ts';
import type { SetJournal } from '../media/journal.ts';
import type { SaveGuard } from '../media/save-guard.ts';
import type { OpenEditors } from '../media/editors.ts';
import type { SandboxSearch } from '../search/port.ts';
import type { Ripgrep } from '../ripgrep/process.ts';
import type { DirectoryLister } from '../list/port.ts';
import type { Policy } from '../policy/policy.ts';
import type { ProblemsPort } from '../problems/port.ts';
import type { OutlinePort } from '../outline/port.ts';
import type { Clock, Log } from '../ports.ts';
import type { ResolvedFs } from '../fs/resolved-fs.ts';
import type { ShellServices } from '../shell/port.ts';

export type { Risk, ToolRisk } from '../types.ts';

/** What a tool needs from the host; a tool whose needs are missing is not registered. */
/** `search`: a search backend over local paths; `ripgrep`: an rg binary (artifact spools are always local). */
/** `shell`: the host can run commands (it has a sandbox port; whether the OS sandbox is there is asked per call). */
export type Capability = 'streaming' | 'symlinks' | 'search' | 'ripgrep' | 'writable' | 'shell';

export type { SchemaDeclaration } from './schema.ts';

export interface ToolMeta {
  readonly name: ToolName;
  readonly displayName: string;
  /** For the person (manifest userDescription). */
  readonly userDescription: string;
  /** For the model (manifest modelDescription). */
  readonly description: string;
  readonly risk: ToolRisk;
  readonly requires: readonly Capability[];
  /** A codicon id, e.g. "file". */
  readonly icon: string;
  /** The services its `run` is given (nothing else of the session reaches it). */
  readonly needs: readonly Need[];
}

/** What a write call does with a target's current bytes (see `CallTargets.reads`). */
export type CurrentBytesUse = 'none' | 'keep' | 'change';

/** How the call at `targets` uses the current bytes of its path number `index`. */
export function readsAt(targets: Pick<CallTargets, 'reads'>, index: number): CurrentBytesUse {
  const reads = targets.reads;
  return reads === undefined ? 'none' : typeof reads === 'string' ? reads : (reads[index] ?? 'none');
}

/** The paths a call addresses, known before any I/O, for the gate to decide on. */
export interface CallTargets {
  /**
   * What the call writes, by kind, with its media and `+added −removed`: hosts render the
   * confirmation and diff links from this (any write tool that declares it gets them).
   */
  readonly writes?: readonly PlannedWrite[];
  readonly paths: readonly ModelPath[];
  /** One line for the person: what the call does, e.g. `search "TODO" in src`. */
  readonly summary: string;
  /**
   * What a write call does with its targets' current bytes, one value for all or one per path in
   * the order of `paths`. `keep`: reads them and stages them unchanged (stage_file with neither
   * content nor patch); `change`: reads and changes them (a patch, a move). Both are judged by the
   * read rules too, so a read-denied file cannot be staged and read back; only `keep` skips the
   * protected list, which guards changes. Absent or `none`: writes given bytes (write rules only).
   */
  readonly reads?: CurrentBytesUse | readonly CurrentBytesUse[];
  /**
   * The bytes this call reveals or writes came from a protected path (a tainted media): a `deny`
   * taint refuses the call, an `ask` taint asks the person every time.
   */
  readonly taint?: ReadTaint;
  /**
   * A batch (several files in one call): each path's own summary, in the order of `paths`. Each path
   * is judged alone: a denied one fails only its entry, an `ask` one is asked on its own (a modal
   * naming it), and the one confirmation covers the rest.
   */
  readonly each?: readonly string[];
  /**
   * The call lifts the read-only protection of protected files (run_shell_command's
   * `allow_protected_writes`): asked every time, like a protected write, naming the globs.
   */
  readonly protectedWrites?: boolean;
}

/** One entry of a batch call: its approved path, or why it alone was refused (denied by a rule, or declined). */
export type BatchEntry = { readonly path: GatedPath } | { readonly refusal: SandboxError };

/** What a call may use beyond its targets; a tool is given only the ones it declares in `needs`. */
export interface CallServices {
  /** The filesystem, for resolved addresses only. */
  readonly fs: ResolvedFs;
  readonly artifacts: ArtifactStore;
  readonly media: MediaStore;
  /** This window's saves, for undo. */
  readonly saves: SaveHistory;
  /** The workspace's journal of change sets (save_media and undo_save of a set, a command's change set). */
  readonly journal: SetJournal;
  /** Write roots and one save of a file at a time. */
  readonly saveGuard: SaveGuard;
  readonly search: SandboxSearch | undefined;
  /** ripgrep, for artifact_grep. */
  readonly ripgrep: Ripgrep | undefined;
  readonly lister: DirectoryLister;
  readonly editors: OpenEditors | undefined;
  /** The host's language services (VS Code's diagnostics); none in the CLI. */
  readonly problems: ProblemsPort | undefined;
  /** The host's document symbol providers (VS Code's outline); none in the CLI. */
  readonly outline: OutlinePort | undefined;
  /** The rules in force, knowing the workspace folders. */
  readonly policy: Policy;
  readonly roots: readonly WorkspaceRoot[];
  readonly clock: Clock;
  readonly log: Log;
  /** The OS sandbox, its settings and what the session keeps for it, for run_shell_command. */
  readonly shell: ShellServices | undefined;
}

export type Need = keyof CallServices;

/** What every call's `run` gets: its approved targets and the pipeline's steps on them. */
export interface CallContext {
  /** The call's paths as the gate approved them (normalized once, in `targets`). */
  readonly targets: readonly GatedPath[];
  /** A batch call (`CallTargets.each`): every entry in order, approved or refused alone. */
  readonly batch?: readonly BatchEntry[];
  readonly signal: AbortSignal;
  /** How much of a result reaches the model in one piece; a larger result goes to a result artifact. */
  readonly page: PageBudget;
  /** Where a long call reports how far it got, when its host listens (MCP progress notifications). */
  readonly progress?: ProgressReporter;
  /**
   * The I/O step of path translation for one of this call's gated targets: re-checks the policy on
   * where the path really leads, and asks again about a file with several names.
   */
  resolve(path: GatedPath, options?: ResolveOptions): Promise<ResolvedPath>;
  /**
   * For a command the person approved (risk `exec`): the paths its change set wrote under the write
   * roots, made targets of the call so it can apply them (undefined for every other tool).
   */
  approveChangeSet?(paths: readonly ModelPath[]): readonly GatedPath[];
  /** The rule protecting a resolved path from reading (ask or deny), by its name or by where it leads; undefined when none does. */
  readProtection(resolved: ResolvedPath): ReadProtection | undefined;
}

export type ToolContext<N extends Need = Need> = CallContext & Pick<CallServices, N>;

/** The call's one target (for tools that address exactly one path). */
export function soleTarget(ctx: CallContext): GatedPath {
  const [target, ...more] = ctx.targets;
  if (target === undefined || more.length > 0)
    throw new BugError(`expected one target, the call has ${ctx.targets.length}`);
  return target;
}

/** What `targets` may read (in memory, no I/O): path translation and the stores' records. */
export interface TargetScope {
  /** Pure lexical translation of a model path against the current workspace folders. */
  normalize(raw: string): ModelPath;
  /** The folder a search or listing covers: `path`, or every workspace folder when it is omitted. */
  folderScope(path: string | undefined): ModelPath[];
  readonly artifacts: Pick<ArtifactStore, 'target'>;
  readonly media: Pick<MediaStore, 'get' | 'target' | 'changes'>;
  readonly saves: Pick<SaveHistory, 'get' | 'latest' | 'setOf'>;
  /** One line describing the shell sandbox's boundary as the settings are now (for the confirmation). */
  shellBoundaryLine(allowProtectedWrites?: boolean): string;
}

/** What `targets` returns: the call's targets, and a typed plan that `run` is given as it was decided (what the person was asked about). */
export interface PlannedTargets<P> extends CallTargets {
  readonly plan?: P;
}

export interface ToolDefinition<S extends z.ZodType, R, N extends Need, P = undefined> extends Omit<ToolMeta, 'needs'> {
  readonly schema: (declaration: SchemaDeclaration) => S;
  /** Pure: no disk I/O (in-memory stores may be read). Throws a SandboxError for a path it refuses. */
  readonly targets: (input: z.infer<S>, scope: TargetScope) => PlannedTargets<P>;
  readonly needs: readonly N[];
  /** `plan`: what `targets` planned for this very call (undefined when it planned nothing). */
  readonly run: (input: z.infer<S>, ctx: ToolContext<N>, plan: P | undefined) => Promise<R>;
  /** The compact text the model receives. */
  readonly render: (result: R) => string;
  /**
   * Images the result shows the model beside its text (a host that can pass images does), read once
   * the call ran; or why the image the text announces could not be made after all (added to the text).
   */
  readonly images?: (result: R, ctx: ToolContext<N>) => Promise<readonly ImagePart[] | { readonly unshown: string }>;
}

export type { ImagePart } from '../images/part.ts';
/** What a call writes to disk, as hosts read it (a confirmation's diff links, the problems after a save). */
export type DiskWrite = PlannedWrite;

/** A prepared, validated call: input parsed, targets known, nothing touched yet. */
export interface PreparedInput<R = unknown> {
  readonly targets: CallTargets;
  /** Runs the call with its approved targets and the session's services (the tool gets those it needs). */
  execute(call: CallContext, services: CallServices): Promise<ToolOutcome<R>>;
}

export interface ToolOutcome<R = unknown> {
  /** The typed result, as JSON (what the CLI prints). */
  readonly result: R;
  /** The rendering for the model. */
  readonly text: string;
  /** Images to show the model beside the text (VS Code passes them as image parts; the CLI prints the result's metadata). */
  readonly images?: readonly ImagePart[];
}

/**
 * A tool with its input type erased (input is validated at run time) and its result type kept:
 * `Tool` alone is any tool, as hosts that only pass text along hold it.
 */
export interface Tool<R = unknown> extends ToolMeta {
  inputSchema(declaration: SchemaDeclaration): z.ZodType;
  /** `input` must already be validated against `inputSchema`. */
  prepare(input: unknown, scope: TargetScope): PreparedInput<R>;
}

/** The result type of a tool. */
export type ResultOf<T> = T extends Tool<infer R> ? R : never;

/** The services a tool declared, and no others. */
function granted<N extends Need>(services: CallServices, needs: readonly N[]): Pick<CallServices, N> {
  return Object.fromEntries(needs.map((need) => [need, services[need]])) as Pick<CallServices, N>;
}

export function defineTool<S extends z.ZodType, R, N extends Need, P = undefined>(
  definition: ToolDefinition<S, R, N, P>,
): Tool<R> {
  const { schema, targets, run, render, images, ...meta } = definition;
  // Built once per declaration: building a zod schema, and its first parse, cost ~1-2 ms a call.
  const built = new Map<string, S>();
  return {
    ...meta,
    inputSchema(declaration) {
      const key = JSON.stringify(declaration);
      let s = built.get(key);
      if (s === undefined) built.set(key, (s = schema(declaration)));
      return s;
    },
    prepare(input, scope) {
      const typed = input as z.infer<S>;
      const { plan, ...planned } = targets(typed, scope);
      return {
        targets: planned,
        async execute(call, services) {
          const ctx = { ...call, ...granted(services, meta.needs) };
          const result = await run(typed, ctx, plan);
          const shown = images ? await images(result, ctx) : [];
          if ('unshown' in shown) return { result, text: `${render(result)}\n${shown.unshown}` };
          return { result, text: render(result), ...(shown.length > 0 ? { images: shown } : {}) };
        },
      };
    },
  };
}
