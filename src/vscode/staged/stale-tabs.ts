import * as vscode from 'vscode';
import type { Host } from '../host.ts';
import { fileUri } from '../uri.ts';
import { lineOf, parseStagedUri } from './uris.ts';

/**
 * Closes the `(disk ↔ staged mN)` diff tabs whose media is gone or saved, or whose line of edits
 * has nothing unsaved left (saved or discarded): a diff of a media that no longer waits for review
 * is a stale review. A tab the person had focused is replaced by the file's own editor in the same place.
 */
export async function closeStaleDiffs(host: Host): Promise<void> {
  const open = new Set(host.session.media.heads().map(lineOf));
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      const named = input instanceof vscode.TabInputTextDiff ? parseStagedUri(input.modified) : undefined;
      if (!named || named.base) continue;
      const media = host.session.media.find(named.mediaId);
      if (media && !media.saved && open.has(lineOf(media))) continue;
      if (tab.isActive && group.isActive)
        await showFile(host, (input as vscode.TabInputTextDiff).modified.path.slice(1), group.viewColumn);
      await vscode.window.tabGroups.close(tab, true);
    }
  }
}

async function showFile(host: Host, display: string, viewColumn: vscode.ViewColumn): Promise<void> {
  try {
    const path = host.session.normalize(display);
    await vscode.window.showTextDocument(fileUri(path.root, path.rel, host.local), { viewColumn, preview: false });
  } catch {
    // The file is gone (a discarded new file, an undone creation): closing the diff is all there is to do.
  }
}
