import * as vscode from 'vscode';
import type { MediaStore } from '../../core/media/store.ts';
import type { StagedMedia } from '../../core/media/types.ts';
import { STAGED_SCHEME, emptyBaseUri, parseStagedUri, stagedUri } from './uris.ts';

/**
 * Serves staged media as documents under `staged:`, each URI exactly one media's bytes. Saving such
 * a document (Ctrl+S) is the person editing what the model staged: it becomes a new media version,
 * and nothing reaches disk.
 */
export class StagedFileSystemProvider implements vscode.FileSystemProvider, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly subscription: { dispose(): void };
  private readonly store: MediaStore;
  /** Per media id: how many times the person saved an edit through one of its documents. */
  private readonly generations = new Map<string, number>();
  /** Per document (URI): the media its last save made, which the next save of that document continues. */
  private readonly edits = new Map<string, string>();

  constructor(store: MediaStore) {
    this.store = store;
    this.subscription = store.onDidChange((change) => {
      // A media's bytes never change; the base of a new file's diff does when its line is saved.
      if (change.kind === 'saved')
        this.changed.fire(
          [change.media.id, ...change.rebased]
            .map((id) => this.store.find(id))
            .filter((m) => m !== undefined)
            .map((m) => ({ type: vscode.FileChangeType.Changed, uri: emptyBaseUri(m) })),
        );
    });
  }

  /** The document to open for `media`: a name no earlier edit of the person was saved through. */
  uriOf(media: StagedMedia): vscode.Uri {
    return stagedUri(media, this.generations.get(media.id) ?? 0);
  }

  /** The version the person's last save through the document `uri` made, while it is unsaved (the document's name still says the one it was opened as). */
  editThrough(uri: vscode.Uri): StagedMedia | undefined {
    const media = this.store.find(this.edits.get(uri.toString()) ?? '');
    return media && !media.saved ? media : undefined;
  }

  private resolve(uri: vscode.Uri): { bytes: Uint8Array; mtime: number } {
    const named = parseStagedUri(uri);
    const media = named && this.store.find(named.mediaId);
    if (!named || !media) throw vscode.FileSystemError.FileNotFound(uri);
    return { bytes: named.base ? media.base.bytes : media.bytes, mtime: media.createdAt };
  }

  stat(uri: vscode.Uri): vscode.FileStat {
    const { bytes, mtime } = this.resolve(uri);
    return {
      type: vscode.FileType.File,
      size: bytes.byteLength,
      mtime,
      ctime: mtime,
      ...(parseStagedUri(uri)?.base ? { permissions: vscode.FilePermission.Readonly } : {}),
    };
  }

  readFile(uri: vscode.Uri): Uint8Array {
    return this.resolve(uri).bytes;
  }

  writeFile(uri: vscode.Uri, content: Uint8Array): void {
    const named = parseStagedUri(uri);
    if (!named) throw vscode.FileSystemError.FileNotFound(uri);
    if (named.base) throw vscode.FileSystemError.NoPermissions('The disk side of a staged diff is read-only.');
    // A document saved before continues from the version its last save made.
    const parent = this.editThrough(uri) ?? this.store.find(named.mediaId);
    if (!parent || parent.saved) throw vscode.FileSystemError.FileNotFound(uri);
    const edit = this.store.stagePersonEdit(parent.id, content);
    if (edit === parent) return;
    this.edits.set(uri.toString(), edit.id);
    // Security: this document now holds the edit's text under the parent's name; the parent is
    // opened under a fresh name from now on, so a diff of it never shows VS Code's copy of the edit.
    this.generations.set(named.mediaId, (this.generations.get(named.mediaId) ?? 0) + 1);
  }

  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('Staged documents have no folders.');
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions('Discard a staged change from the Staged Changes view.');
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('Staged documents cannot be renamed.');
  }

  dispose(): void {
    this.subscription.dispose();
    this.changed.dispose();
  }
}

export function registerStagedProvider(store: MediaStore): {
  readonly provider: StagedFileSystemProvider;
  readonly registration: vscode.Disposable;
} {
  const provider = new StagedFileSystemProvider(store);
  return {
    provider,
    registration: vscode.Disposable.from(
      provider,
      vscode.workspace.registerFileSystemProvider(STAGED_SCHEME, provider, { isCaseSensitive: true }),
    ),
  };
}
