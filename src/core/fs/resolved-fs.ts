import type { DirEntry, FileStat, FsCapabilities, WorkspaceFs, WriteOptions } from '../ports.ts';
import type { ResolvedAddress, ResolvedPath } from '../paths.ts';
import { openChecked } from './open-checked.ts';
import { sameBytes } from '../text/bytes.ts';

export interface ResolvedPinned {
  readonly address: ResolvedAddress;
  release(): Promise<void>;
}

export interface ResolvedOpenedFile extends ResolvedPinned {
  /** Its stat when it was opened, when pinned. */
  readonly stat: FileStat | undefined;
}

/**
 * The filesystem a tool's call sees: every operation takes a resolved address, so "only what the
 * gate approved is opened" is a type, not a convention. The same backend as the session's
 * `WorkspaceFs`, typed narrower.
 */
export interface ResolvedFs {
  readonly capabilities: FsCapabilities;
  join(address: ResolvedAddress, ...segments: string[]): ResolvedAddress;
  /** The local filesystem path of the workspace folder holding a resolved path, when `capabilities.localPaths`. */
  rootLocalPath(path: ResolvedPath): string | undefined;
  /** The folder holding a resolved path (its parent, by name). */
  folderOf(path: ResolvedPath): ResolvedAddress;
  stat(address: ResolvedAddress): Promise<FileStat>;
  lstat(address: ResolvedAddress): Promise<FileStat>;
  readDirectory(address: ResolvedAddress): Promise<DirEntry[]>;
  readFile(address: ResolvedAddress, signal?: AbortSignal): Promise<Uint8Array>;
  /** Whether the file holds exactly `bytes` (see `WorkspaceFs.holds`; read whole and compared where the backend has no such read). */
  holds(address: ResolvedAddress, bytes: Uint8Array, signal?: AbortSignal): Promise<boolean>;
  writeFile(address: ResolvedAddress, data: Uint8Array, options?: WriteOptions): Promise<void>;
  rename(from: ResolvedAddress, to: ResolvedAddress): Promise<void>;
  mkdir(address: ResolvedAddress): Promise<void>;
  delete(address: ResolvedAddress): Promise<void>;
  removeEmptyFolder(address: ResolvedAddress): Promise<void>;
  /** The checked file, opened where the check found it (see `openChecked`). */
  open(path: ResolvedPath): Promise<ResolvedOpenedFile>;
  /** `WorkspaceFs.pinFolder` for the folder holding `path` (or `up` folders above it); undefined where the backend cannot pin. */
  pinFolderOf(path: ResolvedPath, create: boolean, up?: number): Promise<ResolvedPinned | undefined>;
  /** The folder holding `path`, or `up` folders above it (by name). */
  folderAbove(path: ResolvedPath, up: number): ResolvedAddress;
}

// The one place a backend address becomes a resolved one: every caller below derives it from a resolved path.
const mint = (address: string): ResolvedAddress => address as ResolvedAddress;

export function resolvedFs(fs: WorkspaceFs): ResolvedFs {
  return {
    capabilities: fs.capabilities,
    join: (address, ...segments) => mint(fs.join(address, ...segments)),
    rootLocalPath: (path) => path.root.localPath ?? fs.localPath(path.root.address),
    folderOf: (path) => mint(fs.join(path.root.address, ...path.rel.split('/').slice(0, -1))),
    stat: (address) => fs.stat(address),
    lstat: (address) => fs.lstat(address),
    readDirectory: (address) => fs.readDirectory(address),
    readFile: (address, signal) => fs.readFile(address, signal),
    holds: async (address, bytes, signal) =>
      fs.holds ? fs.holds(address, bytes, signal) : sameBytes(await fs.readFile(address, signal), bytes),
    writeFile: (address, data, options) => fs.writeFile(address, data, options),
    rename: (from, to) => fs.rename(from, to),
    mkdir: (address) => fs.mkdir(address),
    delete: (address) => fs.delete(address),
    removeEmptyFolder: (address) => fs.removeEmptyFolder(address),
    async open(path) {
      const opened = await openChecked(fs, path);
      return { address: mint(opened.address), stat: opened.stat, release: () => opened.release() };
    },
    folderAbove: (path, up) => mint(fs.join(path.root.address, ...path.rel.split('/').slice(0, -1 - up))),
    async pinFolderOf(path, create, up = 0) {
      const pinned = await fs.pinFolder?.(path.root.address, path.rel.split('/').slice(0, -1 - up), create);
      return pinned && { address: mint(pinned.address), release: () => pinned.release() };
    },
  };
}
