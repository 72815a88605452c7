import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, testApi } from './api.ts';

describe('run_shell_command through vscode.lm.invokeTool', () => {
  it('runs a command in the OS sandbox: the output and exit code come back, the .env canary never does', async function () {
    this.timeout(60_000);
    const text = await invoke('run_shell_command', { command: 'cat src/greet.js; cat .env; grep -r WT_CANARY . ; echo end' });
    assert.match(text, /export function greet/);
    assert.match(text, /^\[stderr\] cat: \.env: Permission denied$/m);
    assert.match(text, /^end$/m);
    assert.match(text, /exit code \d+ after \d+ ms/);
    assert.doesNotMatch(text, /7f3a/);
  });

  it('the chat confirmation shows the whole command with hidden characters made visible, and the boundary', async () => {
    const api = await testApi();
    const prepared = api.prepare('run_shell_command', { command: 'echo ok\u202e #' });
    const message = prepared.confirmationMessages?.message;
    // The summary is appended as text: Markdown escapes it (spaces as &nbsp;, punctuation behind "\\").
    const text = (message instanceof vscode.MarkdownString ? message.value : String(message)).replace(/&nbsp;/g, ' ').replace(/\\(.)/g, '$1');
    assert.match(text, /echo ok\\u\{202e\} #/);
    assert.match(text, /network off/);
    assert.match(text, /Risk: \*\*exec\*\*/);
  });
});
