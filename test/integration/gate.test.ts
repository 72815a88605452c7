import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, invokeFailing, readText, setSetting, testApi, workspaceUri } from './api.ts';

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
    const text = typeof message === 'string' ? message : (message?.value ?? '');
    assert.match(text, /Path: src\n/);
    assert.match(text, /Risk: \*\*read\*\*/);
    assert.equal(api.host.log.entries.length, before, 'prepareInvocation must not run the tool');
  });

  it("every tool's prepareInvocation names its target", async () => {
    const api = await testApi();
    const inputs: Record<string, object> = {
      open_file: { path: 'README.md' },
      open_json_file: { path: 'data/config.json' },
      open_markdown_file: { path: 'docs/notes.md' },
      list_directory: { path: 'src' },
      search_files: { pattern: 'x', path: 'src' },
      find_files: { glob: '*.js', path: 'src' },
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
    assert.match(message, /^E_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"/);
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
    assert.deepEqual(
      entries.map((e) => [e.tool, e.verdict]),
      [
        ['list_directory', 'allowed'],
        ['list_directory', 'invalid'],
      ],
    );
  });

  it('lists the write tools in a trusted workspace', () => {
    const names = vscode.lm.tools.map((t) => t.name);
    for (const name of ['stage_file', 'media_apply_patch', 'save_media']) assert.ok(names.includes(name), name);
  });
});

describe('confirmation text', () => {
  it("the model's glob cannot reshape the confirmation markdown", async () => {
    const api = await testApi();
    const prepared = api.prepare('find_files', { glob: '**/*.js', path: 'src' });
    const message = prepared.confirmationMessages?.message;
    assert.ok(message instanceof vscode.MarkdownString);
    // markdownText escapes the glob's "*": it renders as typed.
    assert.match(message.value, /^\*\*find "\\\*\\\*\/\\\*\.js" in src\*\*\n/);
    assert.equal(api.prepare('find_files', { glob: '*.js' }).confirmationMessages?.title, 'Find Files: the workspace');
  });
});

/** The text of a tool result. */
function textOf(result: vscode.LanguageModelToolResult | null | undefined): string {
  return (result?.content ?? [])
    .map((part) => (part instanceof vscode.LanguageModelTextPart ? part.value : ''))
    .join('');
}

async function deleteIfThere(uri: vscode.Uri): Promise<void> {
  try {
    await vscode.workspace.fs.delete(uri);
  } catch {
    /* not there */
  }
}

describe('confirmations are bound to the call VS Code showed them for', () => {
  const none = new vscode.CancellationTokenSource().token;
  const chatA = vscode.Uri.parse('vscode-chat-session://local/chat-a');
  const chatB = vscode.Uri.parse('vscode-chat-session://local/chat-b');
  // What VS Code passes beyond its typed API (see lm-tools.ts chatOf).
  const prepareIn = (chat: vscode.Uri | undefined, input: object) =>
    ({ input, chatSessionResource: chat }) as vscode.LanguageModelToolInvocationPrepareOptions<unknown>;
  const invokeIn = (chat: vscode.Uri | undefined, input: object) =>
    ({
      input,
      toolInvocationToken: chat ? { sessionResource: chat } : undefined,
    }) as unknown as vscode.LanguageModelToolInvocationOptions<unknown>;
  const mediaId = (text: string): string =>
    /"media_id":"(m\d+)"/.exec(text)?.[1] ?? assert.fail(`no media id in ${text}`);

  afterEach(async () => {
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
    api.host.session.media.discardAll();
    for (const name of ['chat-a.md', 'chat-b.md', 'unprepared.md']) await deleteIfThere(workspaceUri('docs', name));
  });

  it('attack: two identical pending calls in different chats cannot swap their confirmations', async function () {
    this.timeout(60_000);
    const api = await testApi();
    const undo = api.tool('undo_save');
    const save = async (path: string): Promise<string> => {
      const staged = mediaId(await invoke('stage_file', { path, content: 'x\n' }));
      return (
        /"save_id":"(s\d+)"/.exec(await invoke('save_media', { media_id: staged }))?.[1] ?? assert.fail('no save id')
      );
    };
    const first = await save('docs/chat-a.md');
    // Chat A's person is shown "undo the latest save", which is first's.
    const shownInA = await undo.prepareInvocation!(prepareIn(chatA, {}), none);
    assert.match(String(shownInA?.invocationMessage), new RegExp(`^Undo save ${first} of docs/chat-a\\.md`));
    const second = await save('docs/chat-b.md');
    const shownInB = await undo.prepareInvocation!(prepareIn(chatB, {}), none);
    assert.match(String(shownInB?.invocationMessage), new RegExp(`^Undo save ${second} of docs/chat-b\\.md`));
    // Chat A's call runs as chat A's person confirmed it (undo first), never as chat B's (undo second), which A's person never saw.
    const inA = textOf(await undo.invoke(invokeIn(chatA, {}), none));
    assert.match(inA, new RegExp(`"save_id":"${first}"`));
    assert.equal(
      await readText(workspaceUri('docs', 'chat-b.md')),
      'x\n',
      'chat A undid the save chat B was asked about',
    );
    // Chat B's call runs as confirmed in chat B.
    const inB = textOf(await undo.invoke(invokeIn(chatB, {}), none));
    assert.match(inB, new RegExp(`"save_id":"${second}"`));
  });

  it('attack: a call whose confirmation could not be prepared is not run unchecked: it asks in a modal', async () => {
    const api = await testApi();
    assert.ok(api.decider);
    const save = api.tool('save_media');
    // The media the call names does not exist yet when VS Code prepares it: nothing to confirm, so
    // VS Code shows nothing and runs it; by then the media exists.
    const before = mediaId(await invoke('stage_file', { path: 'docs/unprepared.md', content: 'first\n' }));
    const next = `m${Number(before.slice(1)) + 1}`;
    const prepared = await save.prepareInvocation!(prepareIn(chatA, { media_id: next }), none);
    assert.equal(prepared?.confirmationMessages, undefined, 'there was nothing to confirm');
    assert.equal(
      mediaId(await invoke('stage_file', { path: 'docs/unprepared.md', content: 'never confirmed\n' })),
      next,
    );
    api.decider.answer = 'decline';
    const asked = api.decider.asked.length;
    const result = textOf(await save.invoke(invokeIn(chatA, { media_id: next }), none));
    assert.equal(api.decider.asked.length, asked + 1, 'the modal asked');
    assert.equal(api.decider.asked.at(-1)?.tool, 'save_media');
    assert.match(result, /^E_SANDBOX_REFUSED: The user declined save_media/);
    assert.equal(
      await deleteIfThereAndTell(workspaceUri('docs', 'unprepared.md')),
      false,
      'the unconfirmed save wrote the file',
    );
  });
});

async function deleteIfThereAndTell(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
  } catch {
    return false;
  }
  await vscode.workspace.fs.delete(uri);
  return true;
}

describe('problems reported after a save', function () {
  // A save waits up to 2 s for the language services' verdict.
  this.timeout(60_000);

  it('attack: the problems reported after saving a secret quote its content (a spell checker\'s "Unknown word (…)") — only their count is told', async () => {
    const api = await testApi();
    assert.ok(api.decider, 'the test decider is active');
    api.decider.answer = 'allow-once';
    const canary = 'CANARY-diag-7f3e';
    const file = workspaceUri('data', 'secrets.json');
    const speller = vscode.languages.createDiagnosticCollection('wt-test-speller');
    const asked = api.decider.asked;
    const push = asked.push.bind(asked);
    // A spell checker's verdict on the saved secret, reported while the save is confirmed (after the wrapper's "before" look).
    asked.push = (...items) => {
      if (items.some((item) => item.tool === 'save_media'))
        speller.set(file, [
          new vscode.Diagnostic(
            new vscode.Range(0, 11, 0, 27),
            `Unknown word (${canary})`,
            vscode.DiagnosticSeverity.Warning,
          ),
        ]);
      return push(...items);
    };
    try {
      const staged = await invoke('stage_file', { path: 'data/secrets.json', content: `{"token": "${canary}"}\n` });
      const mediaId = /"media_id":"(m\d+)"/.exec(staged)?.[1];
      assert.ok(mediaId, staged);
      const saved = await invoke('save_media', { media_id: mediaId });
      assert.doesNotMatch(saved, new RegExp(canary), 'no problem text of a secret reaches the model');
      // Staged into a secret file, the media is tainted by it: either reason names the secret file.
      assert.match(
        saved,
        /1 new problem\(s\) were reported for the saved file; their text is not shown because [^.]*"data\/secrets\.json"[^.]*\. Ask the user to look at them\./,
      );
    } finally {
      asked.push = push;
      speller.dispose();
      api.host.session.media.discardAll();
      await vscode.workspace.fs.delete(file).then(undefined, () => undefined);
    }
  });
});
