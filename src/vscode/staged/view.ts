import * as vscode from 'vscode';
import { madeThing } from '../../core/media/tree.ts';
import type { MediaStore } from '../../core/media/store.ts';
import { pathKey, type StagedMedia } from '../../core/media/types.ts';
import type { SaveHistory, SaveRecord } from '../../core/media/history.ts';

export const VIEW_ID = 'workspaceTools.staged';

export type StagedNode =
  | { readonly kind: 'file'; readonly key: string; readonly heads: readonly StagedMedia[] }
  | { readonly kind: 'media'; readonly media: StagedMedia }
  /** This window's saves, newest first. */
  | { readonly kind: 'saved-group' }
  /** A save of several files (one save_media call with media_ids, or a move): undone as a whole, or file by file. */
  | { readonly kind: 'saved-set'; readonly set: string; readonly records: readonly SaveRecord[] }
  | { readonly kind: 'saved'; readonly record: SaveRecord; readonly inSet: boolean };

/** The saves of this window grouped by their set, newest first. */
export function savedSets(history: SaveHistory): SaveRecord[][] {
  const sets = new Map<string, SaveRecord[]>();
  for (const record of [...history.list()].reverse()) sets.set(record.set, [...(sets.get(record.set) ?? []), record]);
  return [...sets.values()].reverse();
}

/** What a save did to one file, in a few words. */
function savedNotes(record: SaveRecord): string[] {
  const state =
    record.lost !== undefined
      ? 'cannot be undone'
      : record.undone?.kind === 'staged'
        ? `undo staged as ${record.undone.mediaId}`
        : record.undone
          ? 'undone'
          : '';
  const moved =
    record.moved && 'from' in record.moved
      ? `moved from ${record.moved.from.display}`
      : record.moved
        ? `moved to ${record.moved.to.display}`
        : '';
  return [
    moved ||
      (record.tree
        ? madeThing(record.tree) === 'folder'
          ? `new folder of ${record.tree.files} files`
          : 'new symbolic link'
        : record.created
          ? 'new file'
          : record.kind === 'delete'
            ? 'deleted'
            : ''),
    state,
  ].filter(Boolean);
}

/** The media a node stands for: a file with one line of edits stands for that line's head. */
export function mediaOfNode(node: StagedNode): StagedMedia | undefined {
  if (node.kind === 'media') return node.media;
  return node.kind === 'file' && node.heads.length === 1 ? node.heads[0] : undefined;
}

function describe(store: MediaStore, media: StagedMedia): { description: string; tooltip: string } {
  const { added, removed } = store.changes(media.id);
  const person = store.personChange(media.id);
  const notes = [
    media.change.kind === 'delete'
      ? 'deletes the file'
      : media.change.kind === 'move'
        ? `moved from ${media.change.from.display}`
        : media.isNew
          ? 'new file'
          : '',
    person ? `edited by you (+${person.added} −${person.removed})` : '',
    media.stale
      ? media.stale.kind === 'saved'
        ? `conflicts: ${media.stale.by} was saved`
        : 'conflicts: the file changed on disk'
      : '',
  ].filter(Boolean);
  return {
    description: [`+${added} −${removed}`, media.id, ...notes].join(' · '),
    tooltip: `${media.path.display}\nmedia ${media.id}${media.parentId ? ` (from ${media.parentId})` : ''}\n+${added} −${removed} lines against disk${notes.length ? `\n${notes.join('\n')}` : ''}\nNot on disk until saved.`,
  };
}

function savedItem(record: SaveRecord, inSet: boolean): vscode.TreeItem {
  const item = new vscode.TreeItem(record.path.display, vscode.TreeItemCollapsibleState.None);
  const notes = savedNotes(record);
  item.description = [
    ...(inSet ? [] : [record.id]),
    `+${record.added} −${record.removed}`,
    ...(inSet ? [] : [new Date(record.at).toLocaleTimeString()]),
    ...notes,
  ].join(' · ');
  item.tooltip = `${record.path.display}\nsave ${record.id} of media ${record.mediaId} at ${new Date(record.at).toLocaleString()}\n+${record.added} −${record.removed} lines${notes.length ? `\n${notes.join('\n')}` : ''}${record.lost !== undefined ? `\nIts previous bytes were not kept: ${record.lost}.` : ''}`;
  item.id = `saved:${record.id}`;
  // In a set, "saved-part": Undo This File (the set's other files stay as saved).
  item.contextValue =
    record.lost !== undefined ? 'saved-lost' : record.undone ? 'saved-undone' : inSet ? 'saved-part' : 'saved';
  item.iconPath = new vscode.ThemeIcon(record.undone ? 'discard' : 'check');
  if (record.lost === undefined && record.tree === undefined)
    item.command = { command: 'workspaceTools.openSavedDiff', title: 'Open Diff', arguments: [record.id] };
  return item;
}

/** A set's `+added −removed`, over all its files. */
export function setChange(records: readonly SaveRecord[]): string {
  return `+${records.reduce((n, r) => n + r.added, 0)} −${records.reduce((n, r) => n + r.removed, 0)}`;
}

function savedSetItem(set: string, records: readonly SaveRecord[]): vscode.TreeItem {
  const item = new vscode.TreeItem(`save ${set}: ${records.length} files`, vscode.TreeItemCollapsibleState.Expanded);
  const open = records.filter((r) => r.lost === undefined && r.undone === undefined).length;
  const state = open === 0 ? 'undone' : open < records.length ? `${records.length - open} undone` : '';
  item.description = [setChange(records), new Date(records[0]?.at ?? 0).toLocaleTimeString(), state]
    .filter(Boolean)
    .join(' · ');
  item.tooltip = `save ${set}: one save_media of ${records.length} files, written together\n${records.map((r) => `${r.path.display} (${[`+${r.added} −${r.removed}`, ...savedNotes(r)].join(', ')})`).join('\n')}\nUndo Save puts every file back; Undo This File on one of them puts back that file alone.`;
  item.id = `saved-set:${set}`;
  item.contextValue = open === 0 ? 'saved-set-undone' : 'saved-set';
  item.iconPath = new vscode.ThemeIcon(open === 0 ? 'discard' : 'check-all');
  return item;
}

/** "Staged Changes": unsaved media grouped by file, with +/− counts, a badge and a status bar item; then this window's saves. */
export class StagedChangesView implements vscode.TreeDataProvider<StagedNode>, vscode.Disposable {
  private readonly changed = new vscode.EventEmitter<StagedNode | undefined>();
  readonly onDidChangeTreeData = this.changed.event;
  private readonly store: MediaStore;
  private readonly history: SaveHistory;
  private readonly view: vscode.TreeView<StagedNode>;
  private readonly status: vscode.StatusBarItem;
  private readonly subscription: { dispose(): void };
  private readonly historySubscription: { dispose(): void };

  /** What became of the change sets an earlier process left half applied: shown atop the view for this window's life. */
  private readonly notices: readonly string[];

  constructor(store: MediaStore, history: SaveHistory, notices: readonly string[] = []) {
    this.store = store;
    this.history = history;
    this.notices = notices;
    this.view = vscode.window.createTreeView(VIEW_ID, { treeDataProvider: this, showCollapseAll: false });
    this.status = vscode.window.createStatusBarItem('workspaceTools.staged', vscode.StatusBarAlignment.Left, 50);
    this.status.name = 'Workspace Tools: Staged Changes';
    this.status.command = 'workspaceTools.reviewStaged';
    this.subscription = store.onDidChange(() => this.refresh());
    this.historySubscription = history.onDidChange(() => this.refresh());
    this.refresh();
  }

  refresh(): void {
    this.changed.fire(undefined);
    const count = this.store.heads().length;
    this.view.badge = count
      ? { value: count, tooltip: `${count} staged change${count === 1 ? '' : 's'} not saved` }
      : undefined;
    this.view.message = this.notices.length ? this.notices.join('\n') : undefined;
    this.status.text = `$(diff) ${count} staged`;
    this.status.tooltip = 'Staged changes that are not on disk yet: open the Staged Changes view';
    if (count) this.status.show();
    else this.status.hide();
  }

  getChildren(node?: StagedNode): StagedNode[] {
    if (node?.kind === 'media' || node?.kind === 'saved') return [];
    if (node?.kind === 'saved-set') return node.records.map((record) => ({ kind: 'saved', record, inSet: true }));
    if (node?.kind === 'saved-group') {
      return savedSets(this.history).map((records): StagedNode =>
        records.length === 1
          ? { kind: 'saved', record: records[0]!, inSet: false }
          : { kind: 'saved-set', set: records[0]!.set, records },
      );
    }
    if (node?.kind === 'file')
      return node.heads.length > 1 ? node.heads.map((media) => ({ kind: 'media', media })) : [];
    const byFile = new Map<string, StagedMedia[]>();
    for (const media of this.store.heads()) {
      const key = pathKey(media.path);
      byFile.set(key, [...(byFile.get(key) ?? []), media]);
    }
    const files = [...byFile.entries()]
      .sort(([, a], [, b]) => (a[0]!.path.display < b[0]!.path.display ? -1 : 1))
      .map(([key, heads]): StagedNode => ({ kind: 'file', key, heads }));
    return this.history.list().length > 0 ? [...files, { kind: 'saved-group' }] : files;
  }

  getTreeItem(node: StagedNode): vscode.TreeItem {
    if (node.kind === 'saved') return savedItem(node.record, node.inSet);
    if (node.kind === 'saved-set') return savedSetItem(node.set, node.records);
    if (node.kind === 'saved-group') {
      const item = new vscode.TreeItem('Saved', vscode.TreeItemCollapsibleState.Expanded);
      item.id = 'saved-group';
      item.description = 'this window';
      item.tooltip = 'Saves made with Workspace Tools in this window: undo one, or compare before ↔ after.';
      item.contextValue = 'saved-group';
      return item;
    }
    const media = mediaOfNode(node);
    if (!media) {
      const file = (node as { heads: readonly StagedMedia[] }).heads[0]!;
      const item = new vscode.TreeItem(file.path.display, vscode.TreeItemCollapsibleState.Expanded);
      item.description = `${(node as { heads: readonly StagedMedia[] }).heads.length} versions`;
      // Discard on it discards every version of the file.
      item.contextValue = 'staged-versions';
      item.iconPath = vscode.ThemeIcon.File;
      item.resourceUri = vscode.Uri.file(`/${file.path.display}`);
      return item;
    }
    const label = node.kind === 'file' ? media.path.display : media.id;
    const item = new vscode.TreeItem(label, vscode.TreeItemCollapsibleState.None);
    const { description, tooltip } = describe(this.store, media);
    item.description = description;
    item.tooltip = tooltip;
    item.id = `${node.kind}:${media.id}`;
    item.contextValue = media.stale ? 'staged-conflict' : 'staged';
    item.iconPath = media.stale
      ? new vscode.ThemeIcon('warning', new vscode.ThemeColor('list.warningForeground'))
      : new vscode.ThemeIcon(
          media.change.kind === 'delete'
            ? 'diff-removed'
            : media.change.kind === 'move'
              ? 'diff-renamed'
              : media.isNew
                ? 'diff-added'
                : 'diff-modified',
        );
    item.command = { command: 'workspaceTools.openStagedDiff', title: 'Open Staged Diff', arguments: [media.id] };
    return item;
  }

  async reveal(): Promise<void> {
    await vscode.commands.executeCommand(`${VIEW_ID}.focus`);
  }

  dispose(): void {
    this.subscription.dispose();
    this.historySubscription.dispose();
    this.view.dispose();
    this.status.dispose();
    this.changed.dispose();
  }
}
