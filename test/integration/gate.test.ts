import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, invokeFailing, setSetting, testApi } from './api.ts';

describe('gate in VS Code', () => {
  afterEach(async () => {
    await setSetting('rules', undefined);
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
  });

  it('prepareInvocation names the tool, the target and the risk, and opens nothing', async () => {
    const api = await testApi();
    const before = api.host.log.entries.length;
    const prepared = api.prepare('list_directory', { path: 'src', max_depth: 1 });
    assert.equal(prepared.invocationMessage, 'List src (depth 1)');
    assert.equal(prepared.confirmationMessages?.title, 'List Directory: src');
    const message = prepared.confirmationMessages?.message;
    const text = typeof message === 'string' ? message : message?.value ?? '';
    assert.match(text, /Path: src\n/);
    assert.match(text, /Risk: \*\*read\*\*/);
    assert.equal(api.host.log.entries.length, before, 'prepareInvocation must not run the tool');
  });

  it('every tool\'s prepareInvocation names its target', async () => {
    const api = await testApi();
    const inputs: Record<string, object> = {
      open_file: { path: 'README.md' }, open_json_file: { path: 'data/config.json' }, open_markdown_file: { path: 'docs/notes.md' },
      list_directory: { path: 'src' }, search_files: { pattern: 'x', path: 'src' }, find_files: { glob: '*.js', path: 'src' },
      stage_file: { path: 'src/main.js' },
    };
    for (const [name, input] of Object.entries(inputs)) {
      const prepared = api.prepare(name as never, input);
      const title = prepared.confirmationMessages?.title ?? '';
      const target = 'path' in input ? String(input.path) : '';
      assert.ok(title.includes(target), `${name}: ${title}`);
    }
  });

  it('a secret path raises the modal every time, and declining is E_SANDBOX_REFUSED', async () => {
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    const asked = api.decider.asked.length;
    api.decider.answer = 'decline';
    // A refusal is returned as the tool's result (not thrown), led by its code.
    const message = await invoke('open_file', { path: '.env' });
    assert.match(message, /^E_SANDBOX_REFUSED: The user declined open_file on the protected file "\.env"/);
    assert.equal(api.decider.asked.length, asked + 1);
    const last = api.decider.asked.at(-1)!;
    assert.equal(last.message, 'Allow open_file to read the protected file ".env"?');
    assert.equal(last.secret, true);
    assert.doesNotMatch(JSON.stringify(api.host.log.entries), /WT_CANARY_ENV_7f3a/);
  });

  it('a deny rule refuses without a dialog, and a rules change applies to the next call', async () => {
    const api = await testApi();
    assert.ok(api.decider);
    await invoke('list_directory', { path: 'src', max_depth: 1 });
    await setSetting('rules', [{ glob: 'src/**', read: 'deny' }]);
    const asked = api.decider.asked.length;
    const message = await invokeFailing('list_directory', { path: 'src' });
    assert.match(message, /^E_SANDBOX_REFUSED: list_directory on "src" was refused by the rule "src\/\*\*"/);
    assert.equal(api.decider.asked.length, asked, 'a deny rule shows no dialog');
    await setSetting('rules', [{ glob: 'src/**', read: 'allow' }]);
    assert.match(await invoke('list_directory', { path: 'src', max_depth: 1 }), /^src: \d+ entries/);
    assert.equal(api.decider.asked.length, asked, 'an allow rule skips the confirmation');
  });

  it('an invalid rule falls back to asking for everything', async () => {
    const api = await testApi();
    await setSetting('rules', [{ glob: 'src/**', read: 'sometimes' }]);
    assert.equal(api.host.settings().policy.decide('README.md', 'read').action, 'ask');
    assert.ok(api.host.settings().ruleErrors.length > 0);
  });

  it('the audit log has one line per call and no file contents', async () => {
    const api = await testApi();
    const before = api.host.log.entries.length;
    await invoke('list_directory', { path: 'docs' });
    await invokeFailing('list_directory', { path: '../outside' });
    const entries = api.host.log.entries.slice(before);
    assert.equal(entries.length, 2);
    assert.deepEqual(entries.map((e) => [e.tool, e.verdict]), [['list_directory', 'allowed'], ['list_directory', 'invalid']]);
  });

  it('lists the write tools in a trusted workspace', () => {
    const names = vscode.lm.tools.map((t) => t.name);
    for (const name of ['stage_file', 'media_apply_patch', 'save_media']) assert.ok(names.includes(name), name);
  });
});

describe('confirmation text', () => {
  it('the model\'s glob cannot reshape the confirmation markdown', async () => {
    const api = await testApi();
    const prepared = api.prepare('find_files', { glob: '**/*.js', path: 'src' });
    const message = prepared.confirmationMessages?.message;
    assert.ok(message instanceof vscode.MarkdownString);
    // appendText escapes the glob's "*" and keeps its spaces as &nbsp;: it renders as typed.
    assert.match(message.value, /^\*\*find&nbsp;"\\\*\\\*\/\\\*\.js"&nbsp;in&nbsp;src\*\*\n/);
    assert.equal(api.prepare('find_files', { glob: '*.js' }).confirmationMessages?.title, 'Find Files: the workspace');
  });
});
