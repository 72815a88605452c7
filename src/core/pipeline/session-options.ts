import type { ModelPath, WorkspaceRoot } from '../paths.ts';
import type { Policy } from '../policy/policy.ts';
import type { Clock, Gate, Log, WorkspaceFs } from '../ports.ts';
import type { SandboxSearch } from '../search/port.ts';
import type { Ripgrep } from '../ripgrep/process.ts';
import type { DirectoryLister } from '../list/port.ts';
import type { OpenEditors } from '../media/editors.ts';
import type { ProblemsPort } from '../problems/port.ts';
import type { OutlinePort } from '../outline/port.ts';
import type { WriteRoots } from '../media/write-roots.ts';
import type { TextEncoding } from '../text/encoding.ts';
import type { ShellHost } from '../shell/port.ts';
import type { HostVocabulary } from '../vocabulary.ts';

/* What a host gives a Session: its ports, the policy, the limits. */
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

/** The person's home folder and the process's environment, as the host gives them to the core (never read deep inside it). */
export interface Environment {
  readonly home: string;
  readonly env: () => Readonly<Record<string, string | undefined>>;
}

/** What run_shell_command needs from the host beyond the session's environment. */
export type ShellSpec = Omit<ShellHost, 'home' | 'env'>;

export interface SessionOptions extends Environment {
  readonly fs: WorkspaceFs;
  readonly roots: () => readonly WorkspaceRoot[];
  /**
   * Security: folders whose rules judge the roots' paths too: the folders the person gave (`--root`)
   * when a client's roots narrowed them, so that a narrowed root inside one is judged by its rules
   * (`secrets/**` still denies `secrets/key.txt` with a root at `secrets`).
   */
  readonly ruleFolders?: () => readonly WorkspaceRoot[];
  readonly gate: Gate;
  /** Read on every call, so changed settings apply to the next call. */
  readonly policy: () => Policy;
  readonly search?: SandboxSearch;
  /** The directory-listing backend (default: walking the WorkspaceFs). */
  readonly lister?: DirectoryLister;
  /** ripgrep for artifact_grep (the host's one Ripgrep, which its search backend runs too). */
  readonly ripgrep?: Ripgrep;
  readonly clock: Clock;
  readonly log: Log;
  /** A private folder for artifact spool files (the extension's storage, or a temp folder). */
  readonly spoolDir: string;
  /**
   * The workspace's own state folder, kept across sessions (private to the user; see
   * `workspaceStateDir`): change sets are journaled there, so the next session finishes or rolls back
   * one the process's end interrupted. Absent: a folder of the spool, which ends with the session.
   */
  readonly stateDir?: string;
  readonly limits?: () => SessionLimits;
  /** Where save_media may write, read on every save; absent: every workspace folder. */
  readonly writeRoots?: () => WriteRoots;
  /** Tools the host allows at all (e.g. no write tools in an untrusted workspace). */
  readonly allowWrites?: () => boolean;
  /** The host's open editors: a save never writes under unsaved changes. */
  readonly editors?: OpenEditors;
  /** The host's language services, for list_problems (VS Code's diagnostics; the CLI has none). */
  readonly problems?: ProblemsPort;
  /** The host's document symbol providers, for open_file's outline of a source file (VS Code; the CLI has none). */
  readonly outline?: OutlinePort;
  /** The encoding the user's settings give a file (VS Code's files.encoding); it decides how open, stage and save read and write it. */
  readonly encodingOf?: (path: ModelPath) => TextEncoding | undefined;
  /** The OS sandbox for run_shell_command (it gets the session's home and environment); absent: the tool is not offered. */
  readonly shell?: ShellSpec;
  /** The host's words for what the person can change, in the messages (default: VS Code's). */
  readonly vocabulary?: HostVocabulary;
}
