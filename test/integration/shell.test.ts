import * as assert from 'node:assert/strict';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, readText, testApi, waitFor, workspaceUri } from './api.ts';

describe('run_shell_command through vscode.lm.invokeTool', () => {
  afterEach(async () => {
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
    api.host.gate.resetApprovals();
  });

  it('runs a command in the OS sandbox: the output and exit code come back, the .env canary never does', async function () {
    this.timeout(60_000);
    const text = await invoke('run_shell_command', {
      command: 'cat src/greet.js; cat .env; grep -r WT_CANARY . ; echo end',
    });
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
    const text = (message instanceof vscode.MarkdownString ? message.value : String(message))
      .replace(/&nbsp;/g, ' ')
      .replace(/\\(.)/g, '$1');
    assert.match(text, /echo ok\\u\{202e\} #/);
    assert.match(text, /network off/);
    assert.match(text, /Risk: \*\*exec\*\*/);
  });

  it("allow_protected_writes raises the modal every time naming the protected families: declined nothing runs, approved the command's package.json is applied; without it, staged", async function () {
    this.timeout(60_000);
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    const folder = workspaceUri('shell-protected');
    const manifest = vscode.Uri.joinPath(folder, 'package.json');
    await vscode.workspace.fs.writeFile(manifest, new TextEncoder().encode('{"name":"before"}\n'));
    try {
      const input = {
        command: 'echo \'{"name":"after"}\' > package.json',
        cwd: 'shell-protected',
        allow_protected_writes: true,
      };
      const asked = api.decider.asked.length;
      api.decider.answer = 'decline';
      const declined = await invoke('run_shell_command', input);
      assert.match(declined, /^E_SANDBOX_REFUSED: /);
      assert.equal(await readText(manifest), '{"name":"before"}\n');
      assert.equal(api.decider.asked.length, asked + 1, 'the modal asked');
      const question = api.decider.asked.at(-1)!;
      assert.equal(
        question.message,
        'Allow run_shell_command to run a command that may WRITE PROTECTED FILES in "shell-protected"?',
      );
      assert.match(
        question.detail,
        /what it writes to files matching these protected globs is applied when it ends instead of staged for your review .*: /,
      );
      // The families by name, not ~400 globs (the gate status lists each glob).
      for (const family of ['JavaScript and TypeScript package managers and runtimes', 'lock files', 'CI services'])
        assert.ok(question.detail.includes(family), `the question names ${family}`);
      assert.match(question.detail, /\d+ globs in all, each listed by the command Workspace Tools: Show Gate Status/);
      assert.ok(!question.detail.includes('*-lock.json'), 'the question lists the globs one by one');
      assert.match(
        question.detail,
        /changes to \.vscode and to every repository's hooks and config are still staged for review/,
      );
      assert.equal(question.secret, true);
      // "Allow for This Session" is not offered for it, and an answer never covers the next call.
      api.decider.answer = 'allow-session';
      const approved = await invoke('run_shell_command', input);
      assert.match(approved, /exit code 0/);
      assert.equal(await readText(manifest), '{"name":"after"}\n');
      await invoke('run_shell_command', input);
      assert.equal(api.decider.asked.length, asked + 3, 'asked again on the next call');
      // Without the flag the same write is staged for review, not applied, and nobody is asked in a modal.
      assert.match(
        await invoke('run_shell_command', { command: 'echo x > package.json', cwd: 'shell-protected' }),
        /staged for review, NOT on disk: shell-protected\/package\.json \(m\d+/,
      );
      assert.equal(api.decider.asked.length, asked + 3);
      assert.equal(await readText(manifest), '{"name":"after"}\n');
    } finally {
      api.host.session.media.discardAll();
      await vscode.workspace.fs.delete(folder, { recursive: true });
    }
  });

  it('attack: a command reaches a host nobody allowed — the modal names the host; declined, nothing reaches it', async function () {
    this.timeout(60_000);
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    let requests = 0;
    const server = createServer((_req, res) => {
      requests++;
      res.end('reached\n');
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    try {
      const port = (server.address() as AddressInfo).port;
      // Through the sandbox's proxy (loopback is otherwise reached directly, which the sandbox's network namespace cannot).
      const command = `curl --noproxy '' -sS -m 20 http://127.0.0.1:${port}/`;
      const asked = api.decider.asked.length;
      api.decider.answer = 'decline';
      const text = await invoke('run_shell_command', { command });
      assert.equal(requests, 0, text);
      assert.match(text, new RegExp(`network refused: 127\\.0\\.0\\.1:${port}`));
      assert.equal(api.decider.asked.length, asked + 1);
      assert.equal(
        api.decider.asked.at(-1)!.message,
        `Allow a sandboxed command to connect to "127.0.0.1" (port ${port})?`,
      );
      api.decider.answer = 'allow-session';
      assert.match(await invoke('run_shell_command', { command }), /^reached$/m);
      assert.match(await invoke('run_shell_command', { command }), /^reached$/m);
      assert.equal(api.decider.asked.length, asked + 2, 'allowed for the session: not asked again');
      assert.equal(requests, 2);
      await vscode.commands.executeCommand('workspaceTools.showGateStatus');
      await waitFor('the gate status naming the host allowed for the session', () =>
        vscode.workspace.textDocuments.find(
          (d) =>
            d.uri.scheme === 'workspace-tools-status' &&
            /Hosts you allowed for this session: `127\.0\.0\.1`/.test(d.getText()),
        ),
      );
    } finally {
      server.close();
    }
  });
});
