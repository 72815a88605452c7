import type * as vscode from 'vscode';

/** Wires the VS Code adapters to the core; returns the cleanup to run on deactivate. */
export async function activateWorkspaceTools(_context: vscode.ExtensionContext): Promise<() => Promise<void>> {
  return async () => {};
}
