import * as vscode from 'vscode';
import type { WatchGit } from '../core/shell/port.ts';

/**
 * Changes in the workspace, from the workbench's own file watcher: the events VS Code's git
 * extension opens new repositories on, arriving here when they arrive there. One watcher, made on
 * the first command and kept; each command listens while it runs.
 */
export function vscodeWatchGit(subscriptions: vscode.Disposable[]): WatchGit {
  const listeners = new Set<(path: string) => void>();
  let watcher: vscode.FileSystemWatcher | undefined;
  const start = (): void => {
    watcher = vscode.workspace.createFileSystemWatcher('**');
    const report = (uri: vscode.Uri): void => {
      if (uri.scheme === 'file') for (const listener of listeners) listener(uri.fsPath);
    };
    subscriptions.push(watcher, watcher.onDidCreate(report), watcher.onDidChange(report), watcher.onDidDelete(report));
  };
  return (_folders, changed) => {
    if (watcher === undefined) start();
    listeners.add(changed);
    return { dispose: () => listeners.delete(changed) };
  };
}
