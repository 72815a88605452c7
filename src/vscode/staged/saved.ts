import * as vscode from 'vscode';
import * as nodePath from 'node:path';
import type { SaveHistory, SaveRecord } from '../../core/media/history.ts';
import type { Host } from '../host.ts';
import { runForPerson } from '../run-for-person.ts';
import { savedSets, setChange, type StagedNode } from './view.ts';

export const SAVED_SCHEME = 'wt-saved';

/** `wt-saved:/<display path>?<save id>.before|after`: what a save replaced, and what it wrote. */
export function savedUri(record: SaveRecord, side: 'before' | 'after'): vscode.Uri {
  return vscode.Uri.from({ scheme: SAVED_SCHEME, path: `/${record.path.display}`, query: `${record.id}.${side}` });
}

/** Serves the kept bytes of this window's saves, read-only, for the before ↔ after diff. */
class SavedFileSystemProvider implements vscode.FileSystemProvider {
  private readonly changed = new vscode.EventEmitter<vscode.FileChangeEvent[]>();
  readonly onDidChangeFile = this.changed.event;
  private readonly history: SaveHistory;

  constructor(history: SaveHistory) {
    this.history = history;
  }

  private async bytes(uri: vscode.Uri): Promise<Uint8Array> {
    const [id, side] = uri.query.split('.');
    try {
      if (side === 'after') return await this.history.after(id ?? '');
      return (await this.history.before(id ?? '')) ?? new Uint8Array(0);
    } catch {
      throw vscode.FileSystemError.FileNotFound(uri);
    }
  }

  async stat(uri: vscode.Uri): Promise<vscode.FileStat> {
    const at = this.history.list().find((r) => uri.query.startsWith(`${r.id}.`))?.at ?? 0;
    return {
      type: vscode.FileType.File,
      size: (await this.bytes(uri)).byteLength,
      mtime: at,
      ctime: at,
      permissions: vscode.FilePermission.Readonly,
    };
  }

  readFile(uri: vscode.Uri): Promise<Uint8Array> {
    return this.bytes(uri);
  }
  watch(): vscode.Disposable {
    return new vscode.Disposable(() => undefined);
  }
  readDirectory(): [string, vscode.FileType][] {
    return [];
  }
  createDirectory(): void {
    throw vscode.FileSystemError.NoPermissions('A saved version has no folders.');
  }
  writeFile(): void {
    throw vscode.FileSystemError.NoPermissions('A saved version is read-only; use Undo Save to put it back.');
  }
  delete(): void {
    throw vscode.FileSystemError.NoPermissions('A saved version is read-only.');
  }
  rename(): void {
    throw vscode.FileSystemError.NoPermissions('A saved version is read-only.');
  }
  dispose(): void {
    this.changed.dispose();
  }
}

/** Opens `<file> (before ↔ after save sN)`. */
export async function openSavedDiff(record: SaveRecord): Promise<void> {
  const title = `${nodePath.posix.basename(record.path.display)} (before ↔ after save ${record.id})`;
  await vscode.commands.executeCommand('vscode.diff', savedUri(record, 'before'), savedUri(record, 'after'), title, {
    preview: true,
  });
}

/** What Undo Save undoes: a whole save (a set: every file of it), or one file of a set. */
type UndoTarget = { readonly save_id: string; readonly path?: string };

/** A command argument: a save id, a tree node (a save, a set, or one file of a set), or nothing (then a quick pick of the saves). */
async function pickSave(host: Host, arg: unknown, placeHolder: string): Promise<UndoTarget | undefined> {
  if (typeof arg === 'string') return { save_id: arg };
  if (typeof arg === 'object' && arg !== null && 'kind' in arg) {
    const node = arg as StagedNode;
    if (node.kind === 'saved-set') return { save_id: node.set };
    if (node.kind === 'saved')
      return node.inSet ? { save_id: node.record.set, path: node.record.path.display } : { save_id: node.record.id };
  }
  const sets = savedSets(host.session.saves).filter((records) =>
    records.some((r) => r.lost === undefined && r.undone === undefined),
  );
  if (sets.length === 0) {
    void vscode.window.showInformationMessage('Workspace Tools: no save of this window can be undone.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    sets.map((records) => {
      const first = records[0]!;
      return {
        label: records.map((r) => r.path.display).join(', '),
        description: `${first.set} · ${setChange(records)} · ${new Date(first.at).toLocaleTimeString()}`,
        set: first.set,
      };
    }),
    { placeHolder },
  );
  return picked && { save_id: picked.set };
}

/** The save record a diff command shows: a save id, or a file's node; else a quick pick of every file saved. */
async function pickRecord(host: Host, arg: unknown): Promise<SaveRecord | undefined> {
  const history = host.session.saves;
  if (typeof arg === 'string') return history.list().find((r) => r.id === arg);
  if (typeof arg === 'object' && arg !== null && 'record' in arg) return (arg as { record: SaveRecord }).record;
  const records = history.list().filter((r) => r.lost === undefined);
  if (records.length === 0) {
    void vscode.window.showInformationMessage('Workspace Tools: no save of this window to compare.');
    return undefined;
  }
  const picked = await vscode.window.showQuickPick(
    records.map((record) => ({
      label: record.path.display,
      description: `${record.id} · +${record.added} −${record.removed} · ${new Date(record.at).toLocaleTimeString()}`,
      record,
    })),
    { placeHolder: 'Save to compare (before ↔ after)' },
  );
  return picked?.record;
}

async function undo(host: Host, input: Partial<UndoTarget>): Promise<void> {
  const outcome = await runForPerson(host, 'undo_save', input);
  if (!outcome) return;
  const { result } = outcome;
  if (result.action === 'staged') {
    void vscode.window.showInformationMessage(
      `Workspace Tools: "${result.path}" changed after save ${result.save_id}, so nothing was overwritten. The undo is staged as ${result.media_id ?? 'a media'}: review it in Staged Changes and save it to finish.`,
    );
  } else if (result.action === 'reverted') {
    void vscode.window.setStatusBarMessage(
      `$(discard) Undid save ${result.save_id}: ${(result.files ?? [result.path]).join(', ')} back as before`,
      5000,
    );
  } else {
    void vscode.window.setStatusBarMessage(
      `$(discard) Undid save ${result.save_id}: ${result.path} ${result.action === 'removed' ? 'removed' : 'restored'}`,
      5000,
    );
  }
}

export function registerSavedHistory(host: Host): void {
  const register = (id: string, run: (...args: unknown[]) => unknown): void => {
    host.context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  const provider = new SavedFileSystemProvider(host.session.saves);
  host.context.subscriptions.push(
    provider,
    vscode.workspace.registerFileSystemProvider(SAVED_SCHEME, provider, { isCaseSensitive: true, isReadonly: true }),
  );
  register('workspaceTools.undoLastSave', () => undo(host, {}));
  const undoPicked = async (arg: unknown): Promise<void> => {
    const target = await pickSave(host, arg, 'Save to undo (a set is undone as a whole)');
    if (target) await undo(host, target);
  };
  register('workspaceTools.undoSave', undoPicked);
  // The view's "Undo This File" on one file of a set: the same command, its own title.
  register('workspaceTools.undoSavedFile', undoPicked);
  register('workspaceTools.openSavedDiff', async (arg: unknown) => {
    const record = await pickRecord(host, arg);
    if (record) await openSavedDiff(record);
  });
}
