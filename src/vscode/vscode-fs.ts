import * as vscode from 'vscode';
import type { DirEntry, EntryType, FileStat, FsCapabilities, WorkspaceFs } from '../core/ports.ts';
import { uriOf } from './uri.ts';

function typeOf(type: vscode.FileType): EntryType {
  if (type & vscode.FileType.SymbolicLink) return 'symlink';
  if (type & vscode.FileType.Directory) return 'directory';
  if (type & vscode.FileType.File) return 'file';
  return 'other';
}

/** Maps VS Code's FileSystemError codes onto the errno names the core narrates. */
function normalizeError(e: unknown): unknown {
  if (e instanceof vscode.FileSystemError) {
    const errno: Record<string, string> = {
      FileNotFound: 'ENOENT',
      FileExists: 'EEXIST',
      FileNotADirectory: 'ENOTDIR',
      FileIsADirectory: 'EISDIR',
      NoPermissions: 'EACCES',
    };
    return Object.assign(new Error(e.message), { code: errno[e.code] ?? e.code });
  }
  return e;
}

async function wrap<T>(work: () => Thenable<T>): Promise<T> {
  try {
    return await work();
  } catch (e) {
    throw normalizeError(e);
  }
}

/**
 * `vscode.workspace.fs` for remote and virtual workspaces: addresses are URI strings; no streaming,
 * no symlink inspection, no ripgrep. Reads are whole-file and bounded by nonStreamingMaxBytes.
 */
export class VscodeWorkspaceFs implements WorkspaceFs {
  readonly capabilities: FsCapabilities;

  constructor(writable: boolean) {
    this.capabilities = { streaming: false, symlinks: false, localPaths: false, writable, atomicRename: false };
  }

  join(address: string, ...segments: string[]): string {
    return segments.length === 0 ? address : vscode.Uri.joinPath(uriOf(address, false), ...segments).toString();
  }
  localPath(): undefined {
    return undefined;
  }
  async stat(address: string): Promise<FileStat> {
    const s = await wrap(() => vscode.workspace.fs.stat(uriOf(address, false)));
    return { type: typeOf(s.type), size: s.size, mtimeMs: s.mtime };
  }
  lstat(address: string): Promise<FileStat> {
    return this.stat(address);
  }
  realpath(address: string): Promise<string> {
    return Promise.resolve(address);
  }
  async readDirectory(address: string): Promise<DirEntry[]> {
    const entries = await wrap(() => vscode.workspace.fs.readDirectory(uriOf(address, false)));
    return entries.map(([name, type]) => ({ name, type: typeOf(type) }));
  }
  readFile(address: string): Promise<Uint8Array> {
    return wrap(() => vscode.workspace.fs.readFile(uriOf(address, false)));
  }
  // eslint-disable-next-line require-yield
  async *readStream(): AsyncIterable<Uint8Array> {
    throw new Error('streaming is not available on this workspace');
  }
  writeFile(address: string, data: Uint8Array): Promise<void> {
    return wrap(() => vscode.workspace.fs.writeFile(uriOf(address, false), data));
  }
  rename(from: string, to: string): Promise<void> {
    return wrap(() => vscode.workspace.fs.rename(uriOf(from, false), uriOf(to, false), { overwrite: true }));
  }
  mkdir(address: string): Promise<void> {
    return wrap(() => vscode.workspace.fs.createDirectory(uriOf(address, false)));
  }
  delete(address: string): Promise<void> {
    return wrap(() => vscode.workspace.fs.delete(uriOf(address, false), { recursive: false, useTrash: false }));
  }
  async removeEmptyFolder(address: string): Promise<void> {
    // workspace.fs.delete removes a file too: only a folder, and (recursive: false) only an empty one.
    if ((await this.stat(address)).type !== 'directory')
      throw Object.assign(new Error(`not a folder: ${address}`), { code: 'ENOTDIR' });
    if ((await this.readDirectory(address)).length > 0)
      throw Object.assign(new Error(`folder not empty: ${address}`), { code: 'ENOTEMPTY' });
    await this.delete(address);
  }
}
