import type * as vscode from 'vscode';
import { activateWorkspaceTools } from './vscode/activate.ts';

let deactivateHook: (() => Promise<void>) | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<void> {
  deactivateHook = await activateWorkspaceTools(context);
}

export async function deactivate(): Promise<void> {
  await deactivateHook?.();
  deactivateHook = undefined;
}
