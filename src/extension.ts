import type * as vscode from 'vscode';
import { activateWorkspaceTools, type TestApi } from './vscode/activate.ts';

let cleanup: (() => Promise<void>) | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<TestApi | undefined> {
  const activated = await activateWorkspaceTools(context);
  cleanup = activated.dispose;
  return activated.exports;
}

export async function deactivate(): Promise<void> {
  await cleanup?.();
  cleanup = undefined;
}
