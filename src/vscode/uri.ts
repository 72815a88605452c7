import * as vscode from 'vscode';
import { withDistinctNames, type WorkspaceRoot } from '../core/paths.ts';

/**
 * The one place where VS Code URIs and core addresses meet. With the node fast path, an address is
 * the folder's filesystem path; otherwise it is the URI's string form.
 */
export function addressOf(uri: vscode.Uri, nodeFastPath: boolean): string {
  return nodeFastPath ? uri.fsPath : uri.toString();
}

export function uriOf(address: string, nodeFastPath: boolean): vscode.Uri {
  return nodeFastPath ? vscode.Uri.file(address) : vscode.Uri.parse(address, true);
}

/** True when every folder is on the local disk, so node:fs (streaming, lstat, ripgrep) can serve it. */
export function allFoldersLocal(folders: readonly vscode.WorkspaceFolder[]): boolean {
  return folders.length > 0 && folders.every((f) => f.uri.scheme === 'file');
}

/** Folder names, de-duplicated: two folders named "app" become "app" and "app (2)". */
export function workspaceRoots(folders: readonly vscode.WorkspaceFolder[], nodeFastPath: boolean): WorkspaceRoot[] {
  return withDistinctNames(
    folders.map((folder) => ({
      name: folder.name,
      address: addressOf(folder.uri, nodeFastPath),
      ...(folder.uri.scheme === 'file' ? { localPath: folder.uri.fsPath } : {}),
    })),
  );
}

/** The VS Code URI of a workspace-relative display path's file, given the roots. */
export function fileUri(root: WorkspaceRoot, rel: string, nodeFastPath: boolean): vscode.Uri {
  const base = uriOf(root.address, nodeFastPath);
  return rel === '' ? base : vscode.Uri.joinPath(base, ...rel.split('/'));
}
