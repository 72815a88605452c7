import type * as vscode from 'vscode';
import { activateWorkspaceTools } from './vscode/activate.ts';
import type { TestApi } from './vscode/host.ts';

let cleanup: (() => Promise<void>) | undefined;

export async function activate(context: vscode.ExtensionContext): Promise<TestApi | undefined> {
  const started = performance.now();
  const activated = await activateWorkspaceTools(context);
  cleanup = activated.dispose;
  return activated.exports ? { ...activated.exports, activateMs: performance.now() - started } : undefined;
}

export async function deactivate(): Promise<void> {
  await cleanup?.();
  cleanup = undefined;
}
