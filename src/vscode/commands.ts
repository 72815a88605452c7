import * as vscode from 'vscode';
import type { ResultFrame, SearchHit, SearchOutput } from '../core/search/results.ts';
import { isPaged } from '../core/paging/paged.ts';
import { listingsOf, type ListItem } from '../core/tools/list_directory.ts';
import { artifactUri, registerArtifactDocuments } from './artifact-documents.ts';
import type { Host } from './host.ts';
import { addressOf, fileUri } from './uri.ts';
import { displayOf } from '../core/paths.ts';
import { oneFile } from '../core/tools/open_file.ts';
import { runShellCommandCommand } from './shell-command.ts';
import { runForPerson } from './run-for-person.ts';

/** The active editor's path as the tools name it, to prefill an input box. */
export function activeModelPath(host: Host): string | undefined {
  const uri = vscode.window.activeTextEditor?.document.uri;
  if (!uri || uri.scheme !== 'file') return undefined;
  const folder = vscode.workspace.getWorkspaceFolder(uri);
  if (!folder) return undefined;
  // The session's name for the folder: two folders named "app" are "app" and "app (2)".
  const roots = host.session.roots;
  const root = roots.find((r) => r.address === addressOf(folder.uri, host.local));
  if (!root) return undefined;
  return displayOf(root.name, vscode.workspace.asRelativePath(uri, false), roots.length > 1);
}

/** Opens a workspace file (display path as the tools give it) at a 1-based line. */
export async function openAt(host: Host, display: string, line?: number): Promise<void> {
  const path = host.session.normalize(display);
  const uri = fileUri(path.root, path.rel, host.local);
  const selection = line ? new vscode.Range(line - 1, 0, line - 1, 0) : undefined;
  await vscode.window.showTextDocument(uri, { preview: true, ...(selection ? { selection } : {}) });
}

async function listDirectoryCommand(host: Host): Promise<void> {
  const path = await vscode.window.showInputBox({
    title: 'Workspace Tools: List Directory',
    prompt: 'Folder, relative to the workspace (empty: the workspace)',
    value: '',
  });
  if (path === undefined) return;
  const outcome = await runForPerson(
    host,
    'list_directory',
    path.trim() ? { path: path.trim(), max_depth: 1 } : { max_depth: 1 },
  );
  if (!outcome) return;
  // The person's page is large enough for any listing; past it, the first page is what is shown.
  const results = isPaged<ListItem>(outcome.result) ? listingsOf(outcome.result.page) : outcome.result;
  const items = results.flatMap((r) =>
    r.entries.map((e) => ({
      label: `${e.type === 'directory' ? '$(folder)' : '$(file)'} ${e.path}`,
      description: e.type === 'file' ? `${e.size ?? '?'} B` : e.type,
      target: r.path === '.' ? e.path : `${r.path}/${e.path}`,
      isFile: e.type === 'file',
    })),
  );
  const picked = await vscode.window.showQuickPick(items, {
    title: `${results.map((r) => r.path).join(', ')}: ${items.length} entries`,
  });
  if (picked?.isFile) await openAt(host, picked.target);
}

/** Shows search or find frames as a quick pick that opens the file (at the line for a match). */
async function pickResult(host: Host, title: string, output: SearchOutput): Promise<void> {
  const frames: readonly ResultFrame[] = isPaged<SearchHit>(output) ? output.page : output;
  const notes = frames
    .filter((f) => f.kind === 'note' || f.kind === 'limit')
    .map((f) => (f.kind === 'note' ? f.message : `Only the first ${f.limit} results are shown.`));
  const items = frames.flatMap((f): (vscode.QuickPickItem & { path: string; line: number | undefined })[] => {
    if (f.kind === 'match')
      return [
        { label: `$(search) ${f.path}:${f.line}`, detail: f.text.trim().slice(0, 200), path: f.path, line: f.line },
      ];
    if (f.kind === 'path') return [{ label: `$(file) ${f.path}`, path: f.path, line: undefined }];
    return [];
  });
  if (items.length === 0) {
    void vscode.window.showInformationMessage(`${title}: no results. ${notes.join(' ')}`);
    return;
  }
  const picked = await vscode.window.showQuickPick(items, {
    title: `${title}: ${items.length} result${items.length === 1 ? '' : 's'}${notes.length ? ` — ${notes.join(' ')}` : ''}`,
    matchOnDetail: true,
  });
  if (picked) await openAt(host, picked.path, picked.line);
}

async function searchFilesCommand(host: Host): Promise<void> {
  const pattern = await vscode.window.showInputBox({
    title: 'Workspace Tools: Search Files',
    prompt: 'Text to find in file contents (taken literally)',
    placeHolder: 'TODO',
  });
  if (!pattern) return;
  const outcome = await runForPerson(host, 'search_files', { pattern, literal: true, limit: 500 });
  if (outcome) await pickResult(host, `Search "${pattern}"`, outcome.result);
}

async function findFilesCommand(host: Host): Promise<void> {
  const glob = await vscode.window.showInputBox({
    title: 'Workspace Tools: Find Files',
    prompt: 'Glob for the file paths to find',
    value: '**/*',
  });
  if (!glob) return;
  const outcome = await runForPerson(host, 'find_files', { glob, limit: 500 });
  if (outcome) await pickResult(host, `Find "${glob}"`, outcome.result);
}

async function openFileAsArtifactCommand(host: Host): Promise<void> {
  const path = await vscode.window.showInputBox({
    title: 'Workspace Tools: Open File as Artifact',
    prompt: 'File, relative to the workspace',
    value: activeModelPath(host) ?? '',
  });
  if (!path?.trim()) return;
  const outcome = await runForPerson(host, 'open_file', { path: path.trim() });
  if (!outcome) return;
  const handle = oneFile(outcome.result);
  await vscode.window.showTextDocument(artifactUri(handle), { preview: true });
  void vscode.window.setStatusBarMessage(
    `$(file) artifact ${handle.callId}: ${handle.path}, ${handle.lines} lines, ${handle.bytes} bytes`,
    8000,
  );
}

export function registerCommands(host: Host): void {
  host.context.subscriptions.push(registerArtifactDocuments(host.session.artifacts));
  const register = (id: string, run: (...args: unknown[]) => unknown): void => {
    host.context.subscriptions.push(vscode.commands.registerCommand(id, run));
  };
  register('workspaceTools.showAuditLog', () => host.log.channel.show(true));
  register('workspaceTools.resetApprovals', () => {
    const count = host.gate.resetApprovals();
    void vscode.window.showInformationMessage(
      `Workspace Tools: forgot ${count} session approval${count === 1 ? '' : 's'}. Every call will be confirmed again.`,
    );
  });
  register('workspaceTools.listDirectory', () => listDirectoryCommand(host));
  register('workspaceTools.searchFiles', () => searchFilesCommand(host));
  register('workspaceTools.openFileAsArtifact', () => openFileAsArtifactCommand(host));
  register('workspaceTools.findFiles', () => findFilesCommand(host));
  register('workspaceTools.runShellCommand', () => runShellCommandCommand(host));
}
