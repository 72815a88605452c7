import { promises as fsp, constants as fsConstants, createReadStream, existsSync, lstatSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { Stats } from 'node:fs';

import type {
  DirEntry,
  FileStat,
  FsCapabilities,
  PackedFolder,
  PinnedFile,
  PinnedFolder,
  WorkspaceFs,
  WriteOptions,
} from '../ports.ts';
import { FolderReader, type FolderReaderOptions } from './folder-reader.ts';
import { entryTypeOf } from './packed-folder.ts';
import { SyncSlice } from '../sync-slice.ts';
import { errnoCode } from '../errors.ts';

function fileStat(s: Stats): FileStat {
  return {
    type: entryTypeOf(s),
    size: s.size,
    mtimeMs: s.mtimeMs,
    ctimeMs: s.ctimeMs,
    mode: s.mode & 0o7777,
    dev: s.dev,
    ino: s.ino,
    nlink: s.nlink,
    uid: s.uid,
    gid: s.gid,
  };
}

const HOLDS_CHUNK = 1024 * 1024;
/** `holds`' chunks, kept for the next call (one per call in flight, up to a few). */
const spareChunks: Buffer[] = [];
const MAX_SPARE_CHUNKS = 2;

/** The local filesystem through node:fs: addresses are absolute paths. */
export class NodeFs implements WorkspaceFs {
  readonly capabilities: FsCapabilities;
  /** Reads folders for listings (on a worker thread once a listing is big). */
  readonly folders: FolderReader;

  constructor(capabilities: Partial<FsCapabilities> = {}, options: FolderReaderOptions = {}) {
    this.capabilities = {
      streaming: true,
      symlinks: true,
      localPaths: true,
      writable: true,
      atomicRename: true,
      ...capabilities,
    };
    this.folders = new FolderReader(options);
  }

  join(address: string, ...segments: string[]): string {
    return nodePath.join(address, ...segments);
  }

  localPath(address: string): string {
    return address;
  }

  async stat(address: string): Promise<FileStat> {
    return fileStat(await fsp.stat(address));
  }

  async lstat(address: string): Promise<FileStat> {
    return fileStat(await fsp.lstat(address));
  }

  /** Synchronously, in slices (see SyncSlice). */
  async lstatMany(addresses: readonly string[]): Promise<(FileStat | undefined)[]> {
    const stats: (FileStat | undefined)[] = [];
    const slice = new SyncSlice();
    for (const address of addresses) {
      if (slice.over) await slice.next();
      let stat: Stats | undefined;
      try {
        stat = lstatSync(address, { throwIfNoEntry: false });
      } catch {
        stat = undefined;
      }
      stats.push(stat === undefined ? undefined : fileStat(stat));
    }
    return stats;
  }

  realpath(address: string): Promise<string> {
    return fsp.realpath(address);
  }

  readDirectorySized(address: string): Promise<PackedFolder> {
    return this.folders.read(address);
  }

  async readDirectory(address: string): Promise<DirEntry[]> {
    const entries = await fsp.readdir(address, { withFileTypes: true });
    return entries.map((e) => ({ name: e.name, type: entryTypeOf(e) }));
  }

  async readFile(address: string, signal?: AbortSignal): Promise<Uint8Array> {
    return fsp.readFile(address, signal ? { signal } : {});
  }

  /** Reads into a reused chunk, so a 10 MB file costs no fresh 10 MB (first writes to new memory are what a big read pays most for). */
  async holds(address: string, bytes: Uint8Array, signal?: AbortSignal): Promise<boolean> {
    const handle = await fsp.open(address, fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK);
    const chunk = spareChunks.pop() ?? Buffer.allocUnsafeSlow(HOLDS_CHUNK);
    try {
      const expected = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
      for (let at = 0; ;) {
        signal?.throwIfAborted();
        const { bytesRead } = await handle.read(chunk, 0, chunk.length, at);
        if (bytesRead === 0) return at === expected.length;
        if (
          at + bytesRead > expected.length ||
          !chunk.subarray(0, bytesRead).equals(expected.subarray(at, at + bytesRead))
        )
          return false;
        at += bytesRead;
      }
    } finally {
      if (spareChunks.length < MAX_SPARE_CHUNKS) spareChunks.push(chunk);
      await handle.close();
    }
  }

  async *readStream(address: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    const stream = createReadStream(address, { highWaterMark: 1024 * 1024, ...(signal ? { signal } : {}) });
    for await (const chunk of stream) yield chunk as Buffer;
  }

  async writeFile(address: string, data: Uint8Array, options: WriteOptions = {}): Promise<void> {
    const flags =
      fsConstants.O_WRONLY |
      fsConstants.O_CREAT |
      (options.exclusive ? fsConstants.O_EXCL : fsConstants.O_TRUNC) |
      (options.noFollow ? fsConstants.O_NOFOLLOW : 0);
    const handle = await fsp.open(address, flags, options.mode ?? 0o666);
    try {
      // fchown before fchmod: a change of owner clears setuid and setgid. Only where allowed: an unprivileged process keeps the file.
      if (options.owner !== undefined)
        await handle.chown(options.owner.uid, options.owner.gid).catch((e: unknown) => {
          if (errnoCode(e) !== 'EPERM' && errnoCode(e) !== 'EINVAL') throw e;
        });
      // fchmod on the open file: the umask may have narrowed a new file, and an existing one drops bits (setuid) before it gets new bytes.
      if (options.mode !== undefined) await handle.chmod(options.mode);
      await handle.writeFile(data);
    } finally {
      await handle.close();
    }
  }

  async rename(from: string, to: string): Promise<void> {
    await fsp.rename(from, to);
  }

  /**
   * Security: emulates openat(O_NOFOLLOW) through /proc/self/fd, so a save's check and its write
   * name the same folder even if a component is swapped for a symlink in between.
   */
  async pinFolder(
    rootAddress: string,
    segments: readonly string[],
    create: boolean,
  ): Promise<PinnedFolder | undefined> {
    if (process.platform !== 'linux' || !existsSync('/proc/self/fd')) return undefined;
    const flags = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY;
    let handle = await fsp.open(rootAddress, flags);
    try {
      for (const segment of segments) {
        const child = `/proc/self/fd/${handle.fd}/${segment}`;
        const open = (): Promise<fsp.FileHandle> => fsp.open(child, flags | fsConstants.O_NOFOLLOW);
        // Opened first: a folder that exists (nearly always) costs one call, not a refused mkdir and an open.
        const next = await open().catch(async (e: unknown) => {
          if (!create || errnoCode(e) !== 'ENOENT') throw e;
          await fsp.mkdir(child).catch((made: unknown) => {
            if (errnoCode(made) !== 'EEXIST') throw made;
          });
          return open();
        });
        await handle.close();
        handle = next;
      }
    } catch (e) {
      await handle.close();
      throw e;
    }
    const pinned = handle;
    return { address: `/proc/self/fd/${pinned.fd}`, release: () => pinned.close() };
  }

  /**
   * Security: the read-side twin of `pinFolder`: the folder is pinned, then the file opened in it
   * with O_NOFOLLOW (and O_NONBLOCK, so a FIFO swapped in cannot hang the open), so what is read is
   * the file that was checked even if a component or the file itself is swapped for a link.
   */
  async openPinned(rootAddress: string, segments: readonly string[]): Promise<PinnedFile | undefined> {
    const name = segments[segments.length - 1];
    if (name === undefined) return undefined;
    const folder = await this.pinFolder(rootAddress, segments.slice(0, -1), false);
    if (!folder) return undefined;
    let handle: fsp.FileHandle;
    try {
      handle = await fsp.open(
        `${folder.address}/${name}`,
        fsConstants.O_RDONLY | fsConstants.O_NOFOLLOW | fsConstants.O_NONBLOCK,
      );
    } finally {
      await folder.release();
    }
    try {
      const stat = fileStat(await handle.stat());
      return { address: `/proc/self/fd/${handle.fd}`, stat, release: () => handle.close() };
    } catch (e) {
      await handle.close();
      throw e;
    }
  }

  async mkdir(address: string): Promise<void> {
    await fsp.mkdir(address, { recursive: true });
  }

  async delete(address: string): Promise<void> {
    await fsp.unlink(address);
  }

  async removeEmptyFolder(address: string): Promise<void> {
    await fsp.rmdir(address);
  }
}
