import type { Verdict, GateCall } from './gate.ts';

export type EntryType = 'file' | 'directory' | 'symlink' | 'other';

export interface FileStat {
  readonly type: EntryType;
  readonly size: number;
  readonly mtimeMs: number;
  /** When the file's status last changed (for a folder: an entry was added, removed or renamed), where the backend has it. Unlike mtime, nobody can set it back. */
  readonly ctimeMs?: number;
  /** POSIX permission bits, where the backend has them (kept when a save replaces the file). */
  readonly mode?: number;
  /** The file's identity (device and inode), where the backend has them. */
  readonly dev?: number;
  readonly ino?: number;
  /** How many names (hard links) the file has, where the backend knows. */
  readonly nlink?: number;
  /** Owner and group ids, where the backend has them. */
  readonly uid?: number;
  readonly gid?: number;
}

export interface DirEntry {
  readonly name: string;
  readonly type: EntryType;
}

/** A folder's entry with its lstat size: none for a folder, nor for an entry that could not be stat'ed. */
export interface SizedDirEntry extends DirEntry {
  readonly size?: number;
}

/**
 * A folder's sized entries packed in one string (src/core/fs/packed-folder.ts): cheap to pass
 * between threads, and one object however many entries, so folders read ahead of a listing wait
 * in memory without costing the garbage collector.
 */
export interface PackedFolder {
  readonly text: string;
}

/** What a filesystem backend can do. A tool whose needs are missing is not registered. */
export interface FsCapabilities {
  /** Reads can be streamed in chunks (bounded memory for any file size). */
  readonly streaming: boolean;
  /** lstat/realpath exist, so symlinks can be detected and refused. */
  readonly symlinks: boolean;
  /** Addresses are local filesystem paths that ripgrep can search. */
  readonly localPaths: boolean;
  readonly writable: boolean;
  /** rename() within a folder is atomic. */
  readonly atomicRename: boolean;
}

/**
 * The filesystem as the core sees it. An address is whatever the backend uses to name a
 * location (an absolute path for node fs, a URI string for VS Code); the core never parses it,
 * it only builds children with `join`.
 */
export interface WorkspaceFs {
  readonly capabilities: FsCapabilities;
  join(address: string, ...segments: string[]): string;
  /** The local filesystem path of an address, when `capabilities.localPaths`. */
  localPath(address: string): string | undefined;
  stat(address: string): Promise<FileStat>;
  /** Does not follow a final symlink. Only when `capabilities.symlinks`. */
  lstat(address: string): Promise<FileStat>;
  /** Only when `capabilities.symlinks`. */
  realpath(address: string): Promise<string>;
  /**
   * `lstat` of many paths at once, undefined for one that cannot be stat'ed: the links walk checks
   * every folder for a change this way. A backend may run them synchronously, in slices that yield.
   */
  lstatMany?(addresses: readonly string[]): Promise<(FileStat | undefined)[]>;
  readDirectory(address: string): Promise<DirEntry[]>;
  /**
   * A folder's entries, each that is not a folder with its lstat size, for a listing: where a
   * backend has a cheaper way than `readDirectory` and one `lstat` call each. Only when `capabilities.symlinks`.
   */
  readDirectorySized?(address: string): Promise<PackedFolder>;
  readFile(address: string, signal?: AbortSignal): Promise<Uint8Array>;
  /**
   * Whether the file at `address` (no link followed at its own name) holds exactly `bytes`, read in
   * chunks that are compared as they come: where a backend can do that without reading the whole
   * file into fresh memory. Absent, callers read the file and compare.
   */
  holds?(address: string, bytes: Uint8Array, signal?: AbortSignal): Promise<boolean>;
  /** Chunks of the file; only when `capabilities.streaming`. */
  readStream(address: string, signal?: AbortSignal): AsyncIterable<Uint8Array>;
  writeFile(address: string, data: Uint8Array, options?: WriteOptions): Promise<void>;
  rename(from: string, to: string): Promise<void>;
  /**
   * Opens the folder `segments` below `rootAddress` one component at a time without following any
   * link (creating missing folders when `create`), and returns an address that names that exact
   * folder until `release`, even if a component is swapped for a link meanwhile. Undefined when the
   * platform cannot pin folders; a link on the way rejects with ELOOP.
   */
  pinFolder?(rootAddress: string, segments: readonly string[], create: boolean): Promise<PinnedFolder | undefined>;
  /**
   * Opens the file `segments` below `rootAddress` for reading, one component at a time without
   * following any link (the file's own name included), and returns an address that names that
   * exact file until `release`, with its stat. Undefined when the platform cannot pin; a link on the
   * way rejects with ELOOP.
   */
  openPinned?(rootAddress: string, segments: readonly string[]): Promise<PinnedFile | undefined>;
  mkdir(address: string): Promise<void>;
  /** Removes one file, or a link itself: never a folder, never recursively. */
  delete(address: string): Promise<void>;
  /** Removes a folder that holds nothing (fails with ENOTEMPTY otherwise, ENOTDIR for anything but a folder): never recursively. */
  removeEmptyFolder(address: string): Promise<void>;
}

/** How `writeFile` writes, where the backend can honour it (POSIX backends). */
export interface WriteOptions {
  /** The file's permission bits: a new file is created with them (never wider), an existing one set to them before it is written. */
  readonly mode?: number;
  /** The owner and group to give the file, where the process may (an unprivileged process can give only its own uid and its groups; refusals are ignored). */
  readonly owner?: { readonly uid: number; readonly gid: number };
  /** Fail with EEXIST instead of writing an existing file (O_EXCL). */
  readonly exclusive?: boolean;
  /** Fail with ELOOP instead of writing through a link at the address itself (O_NOFOLLOW). */
  readonly noFollow?: boolean;
}

export interface PinnedFolder {
  readonly address: string;
  release(): Promise<void>;
}

export interface PinnedFile {
  readonly address: string;
  readonly stat: FileStat;
  release(): Promise<void>;
}

export interface Clock {
  now(): number;
}

export interface AuditEntry {
  readonly tool: string;
  readonly target: string;
  readonly verdict: 'allowed' | 'refused' | 'invalid';
  readonly decidedBy: string;
  readonly durationMs: number;
  readonly outcome: string;
}

/** The audit trail: every call, its verdict, its duration. Never file contents. */
export interface Log {
  audit(entry: AuditEntry): void;
  info(message: string): void;
  warn(message: string): void;
}

/** The decider. The core ships no default: every host wires one. */
export type Gate = (call: GateCall, signal: AbortSignal) => Promise<Verdict>;

export const systemClock: Clock = { now: () => Date.now() };
