import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, setSetting, testApi, waitFor, workspaceUri } from './api.ts';

const TYPE_ERROR =
  /src\/typed-wrong\.ts\n {2}2:7-\d+ error ts\(2322\): Type 'string' is not assignable to type 'number'\./;

describe('list_problems in VS Code', function () {
  // The TypeScript server may start cold: the first problems can take a while to be reported.
  this.timeout(120_000);
  const file = workspaceUri('src', 'typed-wrong.ts');

  afterEach(async () => {
    await setSetting('rules', undefined);
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
    api.host.session.media.discardAll();
    await vscode.workspace.fs.delete(file).then(undefined, () => undefined);
  });

  it('after the model saves a TypeScript file with a type error, list_problems returns it with its line; a denied path never appears', async () => {
    const staged = await invoke('stage_file', {
      path: 'src/typed-wrong.ts',
      content: "// a type error on line 2\nconst count: number = 'many';\nexport { count };\n",
    });
    const mediaId = /"media_id":"(m\d+)"/.exec(staged)?.[1];
    assert.ok(mediaId, staged);
    const saved = await invoke('save_media', { media_id: mediaId });
    assert.match(saved, /"path":"src\/typed-wrong\.ts".*"new":true/, saved);
    // The real TypeScript language features of the workbench report it once their server has checked the file.
    const listed = await waitFor(
      'the type error in list_problems',
      async () => {
        const text = await invoke('list_problems', { paths: ['src/typed-wrong.ts'] });
        return TYPE_ERROR.test(text) ? text : undefined;
      },
      90_000,
    );
    console.log(`list_problems: ${listed.split('\n').slice(0, 3).join(' | ')}`);
    const workspace = await invoke('list_problems', {});
    assert.match(workspace, TYPE_ERROR, "the workspace's problems include it");
    await setSetting('rules', [{ glob: 'src/typed-wrong.ts', read: 'deny' }]);
    const denied = await invoke('list_problems', {});
    assert.doesNotMatch(denied, /typed-wrong/, 'a denied path never appears');
    const named = await invoke('list_problems', { paths: ['src/typed-wrong.ts', 'src'] });
    assert.match(
      named,
      /src\/typed-wrong\.ts: E_SANDBOX_REFUSED: list_problems on "src\/typed-wrong\.ts" was refused by the rule "src\/typed-wrong\.ts" \(read denied\)/,
    );
    assert.doesNotMatch(named.replace(/src\/typed-wrong\.ts: E_SANDBOX_REFUSED[^\n]*/, ''), /typed-wrong/);
  });

  it('language services do not check a staged document: its problems are known after its save', async () => {
    const wrong = "// a type error on line 2\nconst count: number = 'many';\nexport { count };\n";
    const stagedText = await invoke('stage_file', { path: 'src/staged-wrong.ts', content: wrong });
    const stagedId = /"media_id":"(m\d+)"/.exec(stagedText)?.[1];
    assert.ok(stagedId, stagedText);
    const stagedDoc = await vscode.workspace.openTextDocument(
      vscode.Uri.from({ scheme: 'staged', path: '/src/staged-wrong.ts', query: stagedId }),
    );
    assert.equal(stagedDoc.languageId, 'typescript', 'the staged document is TypeScript to VS Code');
    await vscode.window.showTextDocument(stagedDoc, { preview: false });
    // The same text saved and opened beside it: once the TypeScript server has reported that file,
    // it has had its chance at the staged document too.
    const savedId = /"media_id":"(m\d+)"/.exec(
      await invoke('stage_file', { path: 'src/typed-wrong.ts', content: wrong }),
    )?.[1];
    assert.ok(savedId);
    await invoke('save_media', { media_id: savedId });
    await vscode.window.showTextDocument(await vscode.workspace.openTextDocument(file), { preview: false });
    await waitFor(
      "the saved file's type error",
      () => (vscode.languages.getDiagnostics(file).length > 0 ? true : undefined),
      90_000,
    );
    assert.deepEqual(vscode.languages.getDiagnostics(stagedDoc.uri), [], 'the staged document has no problems');
    assert.doesNotMatch(await invoke('list_problems', {}), /staged-wrong/);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });
});

describe('open_file with several files in VS Code', () => {
  afterEach(async () => {
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
  });

  it('attack: a batch of five with the secret .env: its own modal, declined the canary never reaches the model, the four are read', async () => {
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    api.decider.answer = 'decline';
    const asked = api.decider.asked.length;
    const files = [
      { path: 'README.md', limit: 5 },
      { path: 'src/greet.js' },
      { path: '.env' },
      { path: 'src/main.js', offset: 1, limit: 3 },
      { path: 'data/config.json' },
    ];
    const prepared = api.prepare('open_file', { files });
    const message = prepared.confirmationMessages?.message;
    const confirmation = (typeof message === 'string' ? message : (message?.value ?? '')).replace(/&nbsp;/g, ' ');
    assert.match(confirmation, /Path: README\.md, src\/greet\.js, src\/main\.js, data\/config\.json\n/);
    assert.match(confirmation, /Not covered here: "\.env" matches the built-in secret rule/);
    const text = await invoke('open_file', { files });
    assert.doesNotMatch(text, /WT_CANARY_ENV_7f3a/);
    assert.match(text, /^Opened 4 of 5 files\./);
    assert.match(text, /== \.env ==\nE_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"/);
    assert.match(text, /== src\/greet\.js ==\nlines 1-3 of 3, artifact \S+\nexport function greet\(name\) \{/);
    const modals = api.decider.asked.slice(asked);
    assert.deepEqual(
      modals.map((m) => [m.message, m.secret]),
      [['Allow open_file to read the protected file ".env"?', true]],
      'only the secret raised a modal',
    );
  });
});
