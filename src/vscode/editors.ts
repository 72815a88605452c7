import * as vscode from 'vscode';
import * as nodePath from 'node:path';
import type { OpenEditors } from '../core/media/editors.ts';
import { fileUri } from './uri.ts';

/** VS Code's text documents as the core's OpenEditors: which file has unsaved changes, and the tab that shows them. */
export function openEditors(local: boolean): OpenEditors {
  return {
    unsavedEditor(path) {
      const uri = fileUri(path.root, path.rel, local).toString();
      const document = vscode.workspace.textDocuments.find((d) => d.isDirty && d.uri.toString() === uri);
      if (!document) return undefined;
      for (const group of vscode.window.tabGroups.all) {
        for (const tab of group.tabs)
          if (tab.input instanceof vscode.TabInputText && tab.input.uri.toString() === uri) return tab.label;
      }
      return nodePath.posix.basename(document.uri.path);
    },
  };
}
