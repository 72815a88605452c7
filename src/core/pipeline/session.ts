import {
  displayOf,
  normalizeModelPath,
  resolveOnDisk,
  withDistinctNames,
  type ModelPath,
  type WorkspaceRoot,
} from '../paths.ts';
import type { Policy } from '../policy/policy.ts';
import type { Clock, Gate, Log, WorkspaceFs } from '../ports.ts';
import type { SandboxSearch } from '../search/port.ts';
import type { Ripgrep } from '../ripgrep/process.ts';
import type { DirectoryLister } from '../list/port.ts';
import type { CallServices, Capability, SchemaDeclaration, TargetScope } from '../contract/tool.ts';
import type { HostVocabulary } from '../vocabulary.ts';
import { checkOpenFolder } from './steps.ts';
import type { ResolvedFs } from '../fs/resolved-fs.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import type { MediaStore } from '../media/store.ts';
import type { SaveHistory } from '../media/history.ts';
import type { SetJournal } from '../media/journal.ts';
import { recoverSets, type RecoveredSet } from '../media/recover-sets.ts';
import type { SaveGuard } from '../media/save-guard.ts';
import type { OpenEditors } from '../media/editors.ts';
import type { LinkIndex } from '../links/link-index.ts';
import type { LinkCache } from '../links/walk.ts';
import { boundaryLineOf } from '../shell/boundary.ts';
import type { ShellServices } from '../shell/port.ts';
import { DEFAULT_LIMITS, type Environment, type SessionLimits, type SessionOptions } from './session-options.ts';

export { DEFAULT_LIMITS, type SessionLimits, type SessionOptions };

/** What `assemble` builds for a session from a host's options: the stores that live across calls, and the shell's keeping. */
export interface SessionParts {
  /** The same fs as the options', typed for resolved addresses only: what a call's tool gets. */
  readonly resolvedFs: ResolvedFs;
  readonly lister: DirectoryLister;
  readonly artifacts: ArtifactStore;
  readonly media: MediaStore;
  readonly saves: SaveHistory;
  readonly journal: SetJournal;
  readonly saveGuard: SaveGuard;
  readonly links: LinkCache;
  readonly shell: ShellServices | undefined;
  readonly vocabulary: HostVocabulary;
}

/**
 * One host's tool session: the ports, the stores that live across calls (artifacts, media), and what
 * a call is judged and run with. `assemble` builds it; `invoke` (invoke.ts) runs a call on it.
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
  /** The person's home folder and environment, as the host gives them (git's own configuration is found through them). */
  readonly environment: Environment;
  /** The links of the workspace folders, walked again as calls need (see `LinkCache`). */
  readonly links: LinkCache;
  private readonly options: SessionOptions;
  private readonly resolvedFs: ResolvedFs;

  constructor(options: SessionOptions, parts: SessionParts) {
    this.options = options;
    this.vocabulary = parts.vocabulary;
    this.environment = { home: options.home, env: options.env };
    this.fs = options.fs;
    this.resolvedFs = parts.resolvedFs;
    this.gate = options.gate;
    this.search = options.search;
    this.ripgrep = options.ripgrep;
    this.lister = parts.lister;
    this.editors = options.editors;
    this.shell = parts.shell;
    this.clock = options.clock;
    this.log = options.log;
    this.artifacts = parts.artifacts;
    this.media = parts.media;
    this.saveGuard = parts.saveGuard;
    this.links = parts.links;
    this.saves = parts.saves;
    this.journal = parts.journal;
  }

  /** The workspace folders, under distinct names (two folders named "app" are "app" and "app (2)"). */
  get roots(): readonly WorkspaceRoot[] {
    return withDistinctNames(this.options.roots());
  }
  /**
   * The workspace folders and the folders whose rules and links judge them too
   * (`SessionOptions.ruleFolders`: the `--root` folders a client's roots narrowed).
   */
  get ruleRoots(): readonly WorkspaceRoot[] {
    const roots = this.roots;
    const outer = (this.options.ruleFolders?.() ?? []).filter(
      (o) => !roots.some((r) => r.localPath === o.localPath && r.address === o.address),
    );
    return outer.length === 0 ? roots : [...roots, ...outer];
  }
  /**
   * The policy in force, knowing the workspace folders and the folders whose rules judge them too
   * (so nested folders and absolute paths are judged) and the links in them (so a path is also
   * judged by the names links give it).
   */
  get policy(): Policy {
    const policy = this.options.policy();
    const links = this.links.current;
    const folders = this.ruleRoots.map((r) => r.localPath);
    const reals = folders.map((f) => (f === undefined ? undefined : links.realOf(f)));
    const key = [...folders, ...reals].join('\u0000');
    if (this.placed?.policy !== policy || this.placed.key !== key)
      this.placed = { policy, key, placed: policy.within(folders, reals) };
    if (this.linked?.placed !== this.placed.placed || this.linked.links !== links)
      this.linked = { placed: this.placed.placed, links, linked: this.placed.placed.withLinks(links) };
    return this.linked.linked;
  }
  private placed: { readonly policy: Policy; readonly key: string; readonly placed: Policy } | undefined;
  private linked: { readonly placed: Policy; readonly links: LinkIndex; readonly linked: Policy } | undefined;
  get limits(): SessionLimits {
    return this.options.limits?.() ?? DEFAULT_LIMITS;
  }
  get declaration(): SchemaDeclaration {
    return { supportsFollow: this.search?.supportsFollow ?? false };
  }

  /** Pure lexical translation of a model path against the current workspace folders. */
  normalize(raw: string): ModelPath {
    return normalizeModelPath(raw, this.roots, this.vocabulary.noFolder);
  }

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
      case 'streaming':
        return caps.streaming;
      case 'symlinks':
        return caps.symlinks;
      case 'writable':
        return caps.writable && (this.options.allowWrites?.() ?? true);
      case 'search':
        return this.search !== undefined && caps.localPaths;
      case 'ripgrep':
        return this.ripgrep !== undefined;
      case 'shell':
        return this.options.shell !== undefined && this.ripgrep !== undefined && caps.localPaths;
    }
  }

  /** What a call's tool may be given (each tool gets the ones it declares). */
  get services(): CallServices {
    return {
      fs: this.resolvedFs,
      artifacts: this.artifacts,
      media: this.media,
      saves: this.saves,
      journal: this.journal,
      saveGuard: this.saveGuard,
      search: this.search,
      ripgrep: this.ripgrep,
      lister: this.lister,
      editors: this.editors,
      problems: this.options.problems,
      outline: this.options.outline,
      policy: this.policy,
      roots: this.roots,
      clock: this.clock,
      log: this.log,
      shell: this.shell,
    };
  }

  /**
   * Finishes or rolls back the change sets a process's end interrupted (a crash, kill -9, a window
   * reloaded), and logs what became of each. Hosts call it once as they start, before the first call.
   * `roots`: the folders to recover in (default: the workspace folders; the MCP server's --root).
   */
  async recoverInterruptedSets(roots: readonly WorkspaceRoot[] = this.roots): Promise<RecoveredSet[]> {
    return recoverSets({
      media: this.media,
      saveGuard: this.saveGuard,
      fs: this.resolvedFs,
      clock: this.clock,
      signal: new AbortController().signal,
      journal: this.journal,
      saves: this.saves,
      log: this.log,
      roots,
      resolve: (path, options) => {
        checkOpenFolder(path, roots, 'recovery');
        return resolveOnDisk(path, this.fs, options);
      },
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
