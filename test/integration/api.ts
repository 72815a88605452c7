import * as assert from 'node:assert/strict';
import * as vscode from 'vscode';
import type { TestApi } from '../../src/vscode/host.ts';

export const EXTENSION_ID = 'workspace-tools.workspace-tools';

/** The extension's test-only API (exported only under the test runner). */
export async function testApi(): Promise<TestApi> {
  const ext = vscode.extensions.getExtension<TestApi | undefined>(EXTENSION_ID);
  assert.ok(ext, `${EXTENSION_ID} is not installed`);
  const api = await ext.activate();
  assert.ok(api, 'the extension exports no test API: is it running under the test runner?');
  return api;
}

export function workspaceUri(...segments: string[]): vscode.Uri {
  const folder = vscode.workspace.workspaceFolders?.[0];
  assert.ok(folder, 'no workspace folder is open');
  return vscode.Uri.joinPath(folder.uri, ...segments);
}

export async function readText(uri: vscode.Uri): Promise<string> {
  return new TextDecoder().decode(await vscode.workspace.fs.readFile(uri));
}

/** Invokes a tool the way another extension would (no chat token) and returns its text. */
export async function invoke(name: string, input: object): Promise<string> {
  const result = await vscode.lm.invokeTool(name, { input, toolInvocationToken: undefined });
  return result.content.map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : '')).join('');
}

/**
 * Invokes a tool expecting a failure; returns its text. Invalid arguments (and VS Code's own errors)
 * are thrown; other outcomes (refused, conflict, not found) come back as a result led by their code.
 */
export async function invokeFailing(name: string, input: object): Promise<string> {
  let text: string;
  try {
    text = await invoke(name, input);
  } catch (e) {
    return e instanceof Error ? e.message : String(e);
  }
  assert.match(text, /^E_(SANDBOX|READER)_[A-Z_]+: /, `${name} was expected to fail, and returned: ${text}`);
  assert.doesNotMatch(text, /^E_SANDBOX_INVALID_INPUT/, 'invalid input is thrown, not returned');
  return text;
}

export async function waitFor<T>(
  what: string,
  probe: () => T | undefined | Promise<T | undefined>,
  timeoutMs = 10_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) assert.fail(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

export async function setSetting(key: string, value: unknown): Promise<void> {
  await vscode.workspace.getConfiguration('workspaceTools').update(key, value, vscode.ConfigurationTarget.Workspace);
}
