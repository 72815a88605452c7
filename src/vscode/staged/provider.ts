import * as vscode from 'vscode';
import type { MediaStore } from '../../core/media/store.ts';
import { STAGED_SCHEME, headOfLine, lineOf, stagedUri } from './uris.ts';

/**
 * Serves staged media as documents under `staged:`. Saving such a document (Ctrl+S) is the person
 * editing what the model staged: it becomes a new media version, and nothing reaches disk.
 */
export class StagedFileSystemProvider implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly subscription: { dispose(): void };
  private readonly store: MediaStore;

  constructor(store: MediaStore) {
    this.store = store;
    this.subscription = store.onDidChange((change) => {
      if (change.kind === 'added' || change.kind === 'saved') this.changed.fire([{ type: vscode.FileChangeType.Changed, uri: stagedUri(change.media) }]);
    });
  }

  private resolve(uri: vscode.Uri): { bytes: Uint8Array; mtime: number; ctime: number } {
    const isBase = uri.query.endsWith('.base');
    const line = isBase ? uri.query.slice(0, -'.base'.length) : uri.query;
    const head = headOfLine(this.store, line);
    if (!head) throw vscode.FileSystemError.FileNotFound(uri);
    return { bytes: isBase ? head.base.bytes : head.bytes, mtime: head.createdAt, ctime: head.createdAt };
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const { bytes, mtime, ctime } = this.resolve(uri);
    return { type: vscode.FileType.File, size: bytes.byteLength, mtime, ctime };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return this.resolve(uri).bytes;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    if (uri.query.endsWith('.base')) throw vscode.FileSystemError.NoPermissions('The disk side of a staged diff is read-only.');
    const head = headOfLine(this.store, uri.query);
    if (!head || head.saved) throw vscode.FileSystemError.FileNotFound(uri);
    const edited = this.store.stagePersonEdit(head.id, content);
    if (lineOf(edited) !== uri.query) throw vscode.FileSystemError.Unavailable('The staged version changed while saving; reopen the staged document.');
  }

  watch(): vscode.Disposable { return new vscode.Disposable(() => undefined); }
  readDirectory(): [string, vscode.FileType][] { return []; }
  createDirectory(): void { throw vscode.FileSystemError.NoPermissions('Staged documents have no folders.'); }
  delete(): void { throw vscode.FileSystemError.NoPermissions('Discard a staged change from the Staged Changes view.'); }
  rename(): void { throw vscode.FileSystemError.NoPermissions('Staged documents cannot be renamed.'); }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

export function registerStagedProvider(store: MediaStore): vscode.Disposable {
  const provider = new StagedFileSystemProvider(store);
  return vscode.Disposable.from(provider, vscode.workspace.registerFileSystemProvider(STAGED_SCHEME, provider, { isCaseSensitive: true }));
}
