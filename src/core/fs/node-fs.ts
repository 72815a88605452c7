import { promises as fsp, constants as fsConstants, createReadStream, existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { DirEntry, EntryType, FileStat, FsCapabilities, PinnedFolder, WorkspaceFs } from '../ports.ts';

function entryType(s: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (s.isSymbolicLink()) return 'symlink';
  if (s.isFile()) return 'file';
  if (s.isDirectory()) return 'directory';
  return 'other';
}

/** The local filesystem through node:fs: addresses are absolute paths. */
export class NodeFs implements WorkspaceFs {
  readonly capabilities: FsCapabilities;

  constructor(capabilities: Partial<FsCapabilities> = {}) {
    this.capabilities = { streaming: true, symlinks: true, localPaths: true, writable: true, atomicRename: true, ...capabilities };
  }

  join(address: string, ...segments: string[]): string {
    return nodePath.join(address, ...segments);
  }

  localPath(address: string): string {
    return address;
  }

  async stat(address: string): Promise<FileStat> {
    const s = await fsp.stat(address);
    return { type: entryType(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode & 0o7777 };
  }

  async lstat(address: string): Promise<FileStat> {
    const s = await fsp.lstat(address);
    return { type: entryType(s), size: s.size, mtimeMs: s.mtimeMs, mode: s.mode & 0o7777 };
  }

  realpath(address: string): Promise<string> {
    return fsp.realpath(address);
  }

  async readDirectory(address: string): Promise<DirEntry[]> {
    const entries = await fsp.readdir(address, { withFileTypes: true });
    return entries.map((e) => ({ name: e.name, type: entryType(e) }));
  }

  async readFile(address: string, signal?: AbortSignal): Promise<Uint8Array> {
    return fsp.readFile(address, signal ? { signal } : {});
  }

  async *readStream(address: string, signal?: AbortSignal): AsyncIterable<Uint8Array> {
    const stream = createReadStream(address, { highWaterMark: 1024 * 1024, ...(signal ? { signal } : {}) });
    for await (const chunk of stream) yield chunk as Buffer;
  }

  async writeFile(address: string, data: Uint8Array): Promise<void> {
    await fsp.writeFile(address, data);
  }

  async rename(from: string, to: string): Promise<void> {
    await fsp.rename(from, to);
  }

  /**
   * Security: emulates openat(O_NOFOLLOW) through /proc/self/fd, so a save's check and its write
   * name the same folder even if a component is swapped for a symlink in between.
   */
  async pinFolder(rootAddress: string, segments: readonly string[], create: boolean): Promise<PinnedFolder | undefined> {
    if (process.platform !== 'linux' || !existsSync('/proc/self/fd')) return undefined;
    const flags = fsConstants.O_RDONLY | fsConstants.O_DIRECTORY;
    let handle = await fsp.open(rootAddress, flags);
    try {
      for (const segment of segments) {
        const child = `/proc/self/fd/${handle.fd}/${segment}`;
        if (create) await fsp.mkdir(child).catch((e: unknown) => { if ((e as { code?: string }).code !== 'EEXIST') throw e; });
        const next = await fsp.open(child, flags | fsConstants.O_NOFOLLOW);
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

  async chmod(address: string, mode: number): Promise<void> {
    await fsp.chmod(address, mode);
  }

  async mkdir(address: string): Promise<void> {
    await fsp.mkdir(address, { recursive: true });
  }

  async delete(address: string): Promise<void> {
    await fsp.rm(address, { recursive: true, force: true });
  }
}
