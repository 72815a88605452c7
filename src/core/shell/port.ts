import type { Readable } from 'node:stream';
import type { ShellBoundary, VerdictMemo } from './boundary.ts';
import type { HostDecider, SessionHosts } from './hosts.ts';
import type { ShellReview } from './judge.ts';
import type { LayerCheck } from './layer.ts';
import type { HostVocabulary } from '../vocabulary.ts';

export type { HostAnswer, HostDecider, HostRequest } from './hosts.ts';

/** Whether the OS sandbox can run commands here, and if not, what the person installs. */
export type SandboxAvailability =
  | { readonly available: true; readonly mechanism: string }
  | { readonly available: false; readonly why: string; readonly install: string };

export interface ShellExit {
  /** null when a signal ended it. */
  readonly code: number | null;
  readonly signal: string | null;
  /** What the sandbox reported refusing during the run (network hosts; file events where the platform reports them). */
  readonly violations: readonly string[];
}

export interface ShellProcess {
  readonly stdout: Readable;
  readonly stderr: Readable;
  /** Resolves once the command and everything it started have exited and the streams closed. */
  readonly exited: Promise<ShellExit>;
  /** Ends the command and everything it started (the whole process group, then the sandbox's namespace). */
  kill(): void;
}

export interface ShellStart {
  readonly command: string;
  /** Absolute local folder. */
  readonly cwd: string;
  readonly boundary: ShellBoundary;
  /** The whole environment the command gets (already without credentials). */
  readonly env: Readonly<Record<string, string>>;
  readonly signal: AbortSignal;
  /** Wraps the sandbox's own argv (the copy-on-write layer's mount namespace); absent: run as it is. */
  readonly wrap?: (argv: readonly string[]) => string[];
  /** Asked when the command wants a host no list allows; true lets that one connection through. Absent: refused. */
  readonly askHost?: (host: string, port: number | undefined, commands: readonly string[]) => Promise<boolean>;
}

/**
 * The OS boundary a command runs in. Never runs anything without it: where it is not available,
 * `availability` says why and `start` throws.
 */
export interface ShellSandbox {
  availability(): Promise<SandboxAvailability>;
  start(spec: ShellStart): Promise<ShellProcess>;
  /** Folders the sandbox itself needs readable inside (its seccomp helper). */
  ownFolders(): Promise<readonly string[]>;
  /** Mount points the sandbox makes for the names it guards (absolute): empty ones in a change set are not the command's. */
  placeholders(): readonly string[];
  /** Stops what the sandbox keeps running between commands (its network proxies). */
  dispose(): Promise<void>;
}

/** What run_shell_command needs from the host. */
export interface ShellHost {
  readonly sandbox: ShellSandbox;
  /** The person's home folder (its credential stores are unreadable to commands). */
  readonly home: string;
  /** The environment commands start from (credential variables are removed from it). */
  readonly env: () => Readonly<Record<string, string | undefined>>;
  /** workspaceTools.shell.allowedDomains, as in force now (user scope; workspace scope only narrows). */
  readonly allowedDomains: () => readonly string[];
  /** The largest timeout_ms a call may ask for (600,000 unless the person's settings raise it). */
  readonly maxTimeoutMs: () => number;
  /** Where each call's private temp folder is made (default: the OS temp folder). */
  readonly tempRoot?: string;
  /**
   * A private folder for layers where the temp folder is on another filesystem than the workspace
   * (the workspace's state folder): a new folder a command makes then lands by one rename.
   */
  readonly layerRoot?: () => Promise<string | undefined>;
  /** Asks the person about a host a command wants to reach that no setting allows; absent: every such host is refused. */
  readonly askHost?: HostDecider;
  /** workspaceTools.shell.review, as in force now: `all` stages every change a command makes for review. */
  readonly review?: () => ShellReview;
  /** The copy-on-write layer is known not to work here (why): commands then see the workspace read-only. Absent: it is tried once. */
  readonly noLayer?: string;
  /** Folders commands may read besides the workspace and the detected toolchains (workspaceTools.shell.readFolders, user scope). */
  readonly readFolders?: () => readonly string[];
}

/** What a session gives run_shell_command: the host's sandbox and settings, and what the session keeps between calls. */
export interface ShellServices {
  readonly host: ShellHost;
  /** Hosts the person allowed for this session. */
  readonly hosts: SessionHosts;
  /** The policy's verdicts on workspace paths, kept while the policy is the same. */
  readonly memo: VerdictMemo;
  /** Whether this machine can layer the write roots, checked once a session. */
  readonly layer: LayerCheck;
  /** The host's words for what the person can change (its settings or flags). */
  readonly words: HostVocabulary;
}

export const DEFAULT_TIMEOUT_MS = 30_000;
export const DEFAULT_MAX_TIMEOUT_MS = 600_000;
