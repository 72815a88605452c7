import * as vscode from 'vscode';
import * as nodePath from 'node:path';
import { pathKey, type StagedMedia } from '../../core/media/types.ts';
import type { Host } from '../host.ts';
import type { DiskWrite } from '../../core/contract/tool.ts';
import { activeModelPath } from '../commands.ts';
import { runForPerson } from '../run-for-person.ts';
import { MAX_SET } from '../../core/tools/save_media.ts';
import { fileUri } from '../uri.ts';
import { registerStagedProvider, type StagedFileSystemProvider } from './provider.ts';
import { STAGED_SCHEME, emptyBaseUri } from './uris.ts';
import { StagedChangesView, mediaOfNode, type StagedNode } from './view.ts';
import { registerSavedHistory } from './saved.ts';
import { closeStaleDiffs } from './stale-tabs.ts';
import { markdownText } from '../../core/text/escape.ts';

/** `<file> (disk ↔ staged mN)`: the tab names its sides in the order it shows them (disk left), and the version it shows. */
export function stagedDiffTitle(media: StagedMedia): string {
  return `${nodePath.posix.basename(media.path.display)} (disk ↔ staged ${media.id})`;
}

/**
 * The staged side of a diff against disk (a new file diffs against an empty document, a move against its source).
 * Security: the staged side is exactly this media's bytes (the version a save of `media.id`
 * writes), never a later or sibling version of its line.
 */
export async function openStagedDiff(
  host: Host,
  provider: StagedFileSystemProvider,
  media: StagedMedia,
  options: { preserveFocus: boolean; preview: boolean; viewColumn?: vscode.ViewColumn },
): Promise<void> {
  // A move diffs against the file it moves (a rename with its content diff); a delete, the file against nothing.
  const base = media.change.kind === 'move' ? media.change.from : media.path;
  const disk = media.isNew ? emptyBaseUri(media) : fileUri(base.root, base.rel, host.local);
  const staged = provider.uriOf(media);
  // VS Code reads an unmarked file as UTF-8 unless files.encoding says otherwise: both sides of a
  // windows1252 (or other legacy) media are opened in its encoding first, and the diff reuses them.
  if (media.encoding !== 'binary' && !media.encoding.startsWith('utf')) {
    await Promise.all(
      [disk, staged].map((uri) =>
        vscode.workspace.openTextDocument(uri, { encoding: media.encoding }).then(undefined, () => undefined),
      ),
    );
  }
  await vscode.commands.executeCommand('vscode.diff', disk, staged, stagedDiffTitle(media), {
    preview: options.preview,
    preserveFocus: options.preserveFocus,
    ...(options.viewColumn ? { viewColumn: options.viewColumn } : {}),
  });
}

/**
 * After the person saved an edit through a staged document, its tab shows the new version's text
 * under the old version's name: the diff of the new version takes its place.
 */
async function followPersonEdit(
  host: Host,
  provider: StagedFileSystemProvider,
  document: vscode.TextDocument,
): Promise<void> {
  const edit = document.uri.scheme === STAGED_SCHEME ? provider.editThrough(document.uri) : undefined;
  if (!edit) return;
  const key = document.uri.toString();
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      const shown =
        input instanceof vscode.TabInputTextDiff
          ? input.modified
          : input instanceof vscode.TabInputText
            ? input.uri
            : undefined;
      if (shown?.toString() !== key || tab.isDirty) continue;
      await openStagedDiff(host, provider, edit, {
        preserveFocus: !(tab.isActive && group.isActive),
        preview: false,
        viewColumn: group.viewColumn,
      });
      await vscode.window.tabGroups.close(tab, true);
    }
  }
}

/** Watches the disk copy of every file with unsaved media, so the view marks conflicts as they happen. */
class DiskWatchers implements vscode.Disposable {
  private readonly watchers = new Map<string, vscode.Disposable>();
  private readonly host: Host;

  constructor(host: Host) {
    this.host = host;
  }

  sync(): void {
    const wanted = new Map(this.host.session.media.heads().map((m) => [pathKey(m.path), m] as const));
    for (const [key, watcher] of this.watchers)
      if (!wanted.has(key)) {
        watcher.dispose();
        this.watchers.delete(key);
      }
    for (const [key, media] of wanted) {
      if (this.watchers.has(key)) continue;
      const uri = fileUri(media.path.root, media.path.rel, this.host.local);
      const folder = vscode.Uri.joinPath(uri, '..');
      const watcher = vscode.workspace.createFileSystemWatcher(
        new vscode.RelativePattern(folder, nodePath.posix.basename(uri.path)),
      );
      const recheck = (): void => {
        void this.recheck(media, uri);
      };
      watcher.onDidChange(recheck);
      watcher.onDidCreate(recheck);
      watcher.onDidDelete(recheck);
      this.watchers.set(key, watcher);
    }
  }

  private async recheck(media: StagedMedia, uri: vscode.Uri): Promise<void> {
    let disk: Uint8Array | undefined;
    try {
      disk = await vscode.workspace.fs.readFile(uri);
    } catch {
      disk = undefined;
    }
    this.host.session.media.noteDisk(media.path, disk);
  }

  dispose(): void {
    for (const watcher of this.watchers.values()) watcher.dispose();
    this.watchers.clear();
  }
}

/** A command argument: a media id, a tree node, or nothing (then a quick pick). */
async function pickMedia(host: Host, arg: unknown, placeHolder: string): Promise<StagedMedia | undefined> {
  const store = host.session.media;
  if (typeof arg === 'string') return store.find(arg);
  let heads = store.heads();
  if (typeof arg === 'object' && arg !== null && 'kind' in arg) {
    const node = arg as StagedNode;
    const media = mediaOfNode(node);
    if (media) return media;
    if (node.kind !== 'file') return undefined;
    heads = [...node.heads];
  }
  if (heads.length === 0) {
    void vscode.window.showInformationMessage('Workspace Tools: nothing is staged.');
    return undefined;
  }
  if (heads.length === 1) return heads[0];
  const picked = await vscode.window.showQuickPick(
    heads.map((media) => {
      const { added, removed } = store.changes(media.id);
      return { label: media.path.display, description: `+${added} −${removed} · ${media.id}`, media };
    }),
    { placeHolder },
  );
  return picked?.media;
}

async function save(host: Host, input: { media_id: string } | { media_ids: string[] }): Promise<boolean> {
  const outcome = await runForPerson(host, 'save_media', input);
  const lines = outcome?.text.split('\n') ?? [];
  if (outcome)
    void vscode.window.setStatusBarMessage(`$(check) ${lines.find((l) => l.startsWith('Saved:')) ?? lines[0]}`, 5000);
  return outcome !== undefined;
}

/**
 * Save All: every staged file as one set (one confirmation, all or nothing, one Undo Save).
 * A file staged in several versions has the person pick the one to save; Escape saves nothing.
 */
async function saveAll(host: Host): Promise<void> {
  const byFile = new Map<string, StagedMedia[]>();
  for (const media of host.session.media.heads())
    byFile.set(pathKey(media.path), [...(byFile.get(pathKey(media.path)) ?? []), media]);
  const chosen: StagedMedia[] = [];
  for (const versions of byFile.values()) {
    const picked =
      versions.length === 1
        ? versions[0]
        : await pickMedia(
            host,
            { kind: 'file', key: '', heads: versions },
            `${versions[0]!.path.display} is staged in ${versions.length} versions: which one to save with the others?`,
          );
    if (!picked) return;
    chosen.push(picked);
  }
  if (chosen.length === 0) {
    void vscode.window.showInformationMessage('Workspace Tools: nothing is staged.');
    return;
  }
  // save_media takes at most MAX_SET media a set: more than that are saved as several sets, in order.
  for (let i = 0; i < chosen.length; i += MAX_SET) {
    const ids = chosen.slice(i, i + MAX_SET).map((m) => m.id);
    if (!(await save(host, ids.length === 1 ? { media_id: ids[0]! } : { media_ids: ids }))) return;
  }
}

/** Discard: one version, or every version of a file (its node in the view). */
async function discard(host: Host, arg: unknown): Promise<void> {
  const store = host.session.media;
  if (typeof arg === 'object' && arg !== null && (arg as StagedNode).kind === 'file') {
    for (const media of (arg as { heads: readonly StagedMedia[] }).heads) store.discard(media.id);
    return;
  }
  const media = await pickMedia(host, arg, 'Staged change to discard');
  if (media) store.discard(media.id);
}

/** Registers the staged review (view, documents, commands); returns the staged documents' provider. */
export function registerStagedReview(host: Host): StagedFileSystemProvider {
  const store = host.session.media;
  const view = new StagedChangesView(
    store,
    host.session.saves,
    host.recovered.map((set) => set.message),
  );
  const watchers = new DiskWatchers(host);
  const { provider, registration } = registerStagedProvider(store);
  host.context.subscriptions.push(view, watchers, registration);
  host.context.subscriptions.push(
    vscode.workspace.onDidSaveTextDocument((document) => {
      void followPersonEdit(host, provider, document).catch((e: unknown) =>
        host.log.warn(`Could not show the edited staged version: ${String(e)}`),
      );
    }),
  );
  host.context.subscriptions.push(
    store.onDidChange((change) => {
      watchers.sync();
      if (change.kind !== 'added' && change.kind !== 'stale')
        void closeStaleDiffs(host).catch((e: unknown) => host.log.warn(`Could not close a staged diff: ${String(e)}`));
      if (change.kind === 'added' && change.media.origin === 'model' && host.settings().openDiffOnStage) {
        void openStagedDiff(host, provider, change.media, { preserveFocus: true, preview: true }).catch((e: unknown) =>
          host.log.warn(`Could not open the staged diff: ${String(e)}`),
        );
      }
    }),
  );

  registerSavedHistory(host);
  const register = (id: string, run: (...args: unknown[]) => unknown): void => {
    host.context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  register('workspaceTools.stageCurrentFile', async () => {
    const path = activeModelPath(host);
    if (!path) {
      void vscode.window.showInformationMessage('Workspace Tools: open a workspace file in the editor to stage it.');
      return;
    }
    await runForPerson(host, 'stage_file', { path });
  });
  register('workspaceTools.reviewStaged', async () => {
    await view.reveal();
    const first = store.heads()[0];
    if (first) await openStagedDiff(host, provider, first, { preserveFocus: false, preview: true });
  });
  register('workspaceTools.openStagedDiff', async (arg: unknown) => {
    const media = await pickMedia(host, arg, 'Staged change to review');
    if (media) await openStagedDiff(host, provider, media, { preserveFocus: false, preview: true });
  });
  register('workspaceTools.saveStaged', async (arg: unknown) => {
    const media = await pickMedia(host, arg, 'Staged change to save to disk');
    if (media) await save(host, { media_id: media.id });
  });
  register('workspaceTools.saveAllStaged', () => saveAll(host));
  register('workspaceTools.discardStaged', (arg: unknown) => discard(host, arg));
  register('workspaceTools.discardAllStaged', async () => {
    const count = store.heads().length;
    if (count === 0) return;
    const answer = await vscode.window.showWarningMessage(
      `Discard ${count} staged change${count === 1 ? '' : 's'}? Nothing on disk changes.`,
      { modal: true },
      'Discard All',
    );
    if (answer === 'Discard All') store.discardAll();
  });
  return provider;
}

/** save_media's confirmation: for each file it writes, the +/− counts and a link that opens that staged diff. */
export function saveConfirmationExtras(
  host: Pick<Host, 'session'>,
  writes: readonly DiskWrite[],
): vscode.MarkdownString | undefined {
  const lines = writes.flatMap((write) => {
    const media = host.session.media.find(write.mediaId);
    return media ? [changeLine(host, media, writes.length > 1)] : [];
  });
  if (lines.length === 0) return undefined;
  const text = new vscode.MarkdownString(lines.join(''));
  text.isTrusted = { enabledCommands: ['workspaceTools.openStagedDiff'] };
  return text;
}

/** One file of a save: what it does, its counts, and its diff (security: of this very media, the bytes the save writes). */
function changeLine(host: Pick<Host, 'session'>, media: StagedMedia, named: boolean): string {
  const { added, removed } = host.session.media.changes(media.id);
  const person = host.session.media.personChange(media.id);
  const args = encodeURIComponent(JSON.stringify([media.id]));
  // Security: this Markdown is trusted with a command: the paths (the model's) go through markdownText, so none can add a link.
  const kind =
    media.change.kind === 'delete'
      ? ' (**deletes the file**)'
      : media.change.kind === 'move'
        ? ` (**moves** ${markdownText(media.change.from.display)} → ${markdownText(media.path.display)})`
        : media.isNew
          ? ' (new file)'
          : '';
  const who = named ? `${markdownText(media.path.display)}: ` : '';
  return `- ${who}Change: **+${added} −${removed}** lines${kind}${person ? `, including your own edit (+${person.added} −${person.removed})` : ''}\n- Version: **${media.id}**, exactly what is written: [Open the staged diff](command:workspaceTools.openStagedDiff?${args})\n`;
}
