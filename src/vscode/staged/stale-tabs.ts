import * as vscode from 'vscode';
import type { Host } from '../activate.ts';
import { fileUri } from '../uri.ts';
import { STAGED_SCHEME } from './uris.ts';
import { lineOf } from './uris.ts';

/**
 * Closes the `(staged ↔ disk)` diff tabs whose line of edits has nothing unsaved left (saved or
 * discarded): a diff of a media that no longer waits for review is a stale review. A tab the person
 * had focused is replaced by the file's own editor in the same place.
 */
export async function closeStaleDiffs(host: Host): Promise<void> {
  const open = new Set(host.session.media.heads().map(lineOf));
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      const input = tab.input;
      if (!(input instanceof vscode.TabInputTextDiff) || input.modified.scheme !== STAGED_SCHEME || open.has(input.modified.query)) continue;
      if (tab.isActive && group.isActive) await showFile(host, input.modified.path.slice(1), group.viewColumn);
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
