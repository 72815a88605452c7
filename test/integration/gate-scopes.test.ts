import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { PROTECTED_EXAMPLES } from '../shared/protected-examples.ts';
import { invoke, readText, testApi, waitFor, workspaceUri } from './api.ts';

const ALLOW_ALL = [{ glob: '**', read: 'allow', write: 'allow' }];
const CANARY = 'WT_CANARY_ENV_7f3a';

async function set(key: string, value: unknown, target: vscode.ConfigurationTarget): Promise<void> {
  await vscode.workspace.getConfiguration('workspaceTools').update(key, value, target);
}

/** Waits until the extension has read the changed settings (it reads them on the change event). */
async function settled<T>(what: string, probe: () => T | undefined): Promise<T> {
  return waitFor(what, probe, 10_000);
}

const mediaId = (text: string): string =>
  /"media_id":"([^"]+)"/.exec(text)?.[1] ?? assert.fail(`no media id in ${text}`);

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

describe('workspace settings may only tighten the gate', () => {
  afterEach(async () => {
    for (const target of [vscode.ConfigurationTarget.Workspace, vscode.ConfigurationTarget.Global]) {
      await set('rules', undefined, target);
      await set('writeRoots', undefined, target);
      await set('review.openDiffOnStage', undefined, target);
    }
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
  });

  it('attack: an allow-everything workspaceTools.rules in workspace settings is ignored and reported; .env still asks', async () => {
    const api = await testApi();
    assert.ok(api.decider);
    await set('rules', ALLOW_ALL, vscode.ConfigurationTarget.Workspace);
    const ignored = await settled('the ignored rule to be reported', () =>
      api.host.log.warnings.find((w) => w.includes('workspaceTools.rules in workspace settings')),
    );
    assert.match(
      ignored,
      /\.vscode\/settings\.json\): the rule \{"glob":"\*\*","read":"allow","write":"allow"\} would allow read and write without asking\. Only your user settings can loosen the gate/,
    );
    assert.deepEqual(api.host.settings().rules.ignored, [ignored]);
    api.decider.answer = 'decline';
    const asked = api.decider.asked.length;
    const result = await invoke('open_file', { path: '.env' });
    assert.match(result, /^E_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"/);
    assert.equal(api.decider.asked.length, asked + 1, 'the secret modal was shown');
    assert.equal(api.decider.asked.at(-1)?.message, 'Allow open_file to read the protected file ".env"?');
    assert.ok(!result.includes(CANARY));
    // Reported once: the same value read again adds no second warning.
    await set('rules', [...ALLOW_ALL], vscode.ConfigurationTarget.Workspace);
    assert.equal(api.host.log.warnings.filter((w) => w === ignored).length, 1);
  });

  it('attack: workspace settings cannot stop the staged diff from opening (review.openDiffOnStage: false is ignored and reported)', async () => {
    const api = await testApi();
    await set('review.openDiffOnStage', false, vscode.ConfigurationTarget.Workspace);
    const ignored = await settled('the ignored value to be reported', () =>
      api.host.log.warnings.find((w) => w.includes('workspaceTools.review.openDiffOnStage in workspace settings')),
    );
    assert.match(ignored, /is false: only your user settings can stop staged diffs from opening/);
    assert.equal(api.host.settings().openDiffOnStage, true);
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
    const staged = mediaId(
      await invoke('stage_file', { path: 'docs/notes.md', content: '# Staged while the workspace says no diff\n' }),
    );
    await waitFor(
      'the staged diff to open',
      () =>
        vscode.window.tabGroups.all.some((g) =>
          g.tabs.some(
            (t) =>
              t.input instanceof vscode.TabInputTextDiff &&
              t.input.modified.scheme === 'staged' &&
              t.input.modified.query === staged,
          ),
        ) || undefined,
    );
    api.host.session.media.discardAll();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');

    // The user may switch it off, and a workspace value may switch it back on (tighter).
    await set('review.openDiffOnStage', undefined, vscode.ConfigurationTarget.Workspace);
    await set('review.openDiffOnStage', false, vscode.ConfigurationTarget.Global);
    await settled('the user value to apply', () => api.host.settings().openDiffOnStage === false || undefined);
    await set('review.openDiffOnStage', true, vscode.ConfigurationTarget.Workspace);
    await settled(
      'the workspace value to switch it on',
      () => api.host.settings().openDiffOnStage === true || undefined,
    );
  });

  it('the same rule in user settings applies: .env opens with no dialog', async () => {
    const api = await testApi();
    assert.ok(api.decider);
    await set('rules', [{ glob: '.env', read: 'allow' }], vscode.ConfigurationTarget.Global);
    await settled(
      'the user rule to apply',
      () => api.host.settings().policy.decide('.env', 'read').action === 'allow' || undefined,
    );
    const asked = api.decider.asked.length;
    assert.match(await invoke('open_file', { path: '.env' }), /^artifact \S+: \.env, /);
    assert.equal(api.decider.asked.length, asked, 'no dialog: the person allowed it in user settings');
  });

  it('workspace rules may add deny', async () => {
    const api = await testApi();
    await set('rules', [{ glob: 'docs/**', read: 'deny' }], vscode.ConfigurationTarget.Workspace);
    await settled(
      'the workspace deny to apply',
      () => api.host.settings().policy.decide('docs/notes.md', 'read').action === 'deny' || undefined,
    );
    assert.match(
      await invoke('open_file', { path: 'docs/notes.md' }),
      /^E_SANDBOX_REFUSED: open_file on "docs\/notes\.md" was refused by the rule "docs\/\*\*"/,
    );
  });

  it("attack: widen workspaceTools.writeRoots from workspace settings — ignored and reported; the user's roots hold", async () => {
    const api = await testApi();
    await set('writeRoots', ['docs'], vscode.ConfigurationTarget.Global);
    await set('writeRoots', ['.'], vscode.ConfigurationTarget.Workspace);
    const ignored = await settled('the widening write root to be reported', () =>
      api.host.log.warnings.find((w) => w.startsWith('workspaceTools.writeRoots in workspace settings')),
    );
    assert.match(ignored, /"\." is outside the write roots already in force \("docs"\), so it is ignored/);
    const staged = await invoke('stage_file', { path: 'src/new.js', content: 'x\n' });
    assert.match(
      await invoke('save_media', { media_id: mediaId(staged) }),
      /^E_SANDBOX_REFUSED: save_media may not write "src\/new\.js": it is outside the write roots \("docs"\)/,
    );
    assert.equal(await exists(workspaceUri('src', 'new.js')), false);
  });

  it('writeRoots from user settings apply, and workspace settings may narrow them', async () => {
    const api = await testApi();
    await set('writeRoots', ['docs', 'src'], vscode.ConfigurationTarget.Global);
    await set('writeRoots', ['docs'], vscode.ConfigurationTarget.Workspace);
    await settled('the narrowed write roots', () => api.host.settings().writeRoots.workspace.length === 1 || undefined);
    const inDocs = await invoke('stage_file', { path: 'docs/added.txt', content: 'added\n' });
    assert.match(await invoke('save_media', { media_id: mediaId(inDocs) }), /"path":"docs\/added\.txt".*"new":true/);
    assert.equal(await readText(workspaceUri('docs', 'added.txt')), 'added\n');
    const inSrc = await invoke('stage_file', { path: 'src/added.txt', content: 'x\n' });
    assert.match(
      await invoke('save_media', { media_id: mediaId(inSrc) }),
      /^E_SANDBOX_REFUSED: .*outside the write roots \("docs"\)/,
    );
    await vscode.workspace.fs.delete(workspaceUri('docs', 'added.txt'));
  });

  it("Show Gate Status names every rule's source, what was ignored, and the ungated tools of other agents", async () => {
    const api = await testApi();
    await set('rules', [{ glob: 'build/**', write: 'deny' }], vscode.ConfigurationTarget.Global);
    await set('rules', [...ALLOW_ALL, { glob: 'tmp/**', read: 'ask' }], vscode.ConfigurationTarget.Workspace);
    await settled(
      'both scopes to be read',
      () =>
        (api.host.settings().rules.workspaceRules.length === 1 && api.host.settings().policy.userRules.length === 1) ||
        undefined,
    );
    await vscode.commands.executeCommand('workspaceTools.showGateStatus');
    const doc = await settled('the gate status document', () =>
      vscode.workspace.textDocuments.find((d) => d.uri.scheme === 'workspace-tools-status'),
    );
    const text = doc.getText();
    assert.match(text, /^# Workspace Tools: gate status/);
    assert.match(text, /\*\*Built-in secrets\*\* \(read: ask, write: ask, a modal every time\): `\*\.env`, `\.env`/);
    assert.match(
      text,
      /\*\*Built-in protected\*\* \(write: ask, a modal every time\) because it configures VS Code[^\n]*`\*\*\/\.vscode\/\*\*`/,
    );
    assert.match(text, /\*\*Your user settings\*\* \(may loosen\): `build\/\*\*` \(write: deny\)/);
    assert.match(
      text,
      /\*\*Workspace settings\*\* \(applied, tightening only\): `tmp\/\*\*` \(read: ask\) from workspace settings \(\.vscode\/settings\.json\)/,
    );
    assert.match(text, /\*\*Ignored:\*\* workspaceTools\.rules in workspace settings/);
    const toolCount = (
      vscode.extensions.getExtension('workspace-tools.workspace-tools')!.packageJSON as {
        contributes: { languageModelTools: unknown[] };
      }
    ).contributes.languageModelTools.length;
    assert.match(
      text,
      new RegExp(
        `The \\*\\*Workspace Tools\\*\\* agent \\(pick it in the chat's agent picker\\) offers the model only this extension's ${toolCount} tools`,
      ),
    );
    assert.match(
      text,
      /VS Code's default \*\*Agent\*\* among them, also offers the model tools [^\n]*`read_file`[^\n]*`run_in_terminal`/,
    );
    assert.equal(doc.languageId, 'markdown');
  });
});

describe('protected files: writes ask every time', () => {
  afterEach(async () => {
    const api = await testApi();
    if (api.decider) api.decider.answer = 'allow-once';
  });

  it('every protected glob asks when new content is staged for it, even though VS Code already approved the call; declining writes nothing', async () => {
    const api = await testApi();
    const decider = api.decider;
    assert.ok(decider);
    decider.answer = 'decline';
    for (const [glob, path] of Object.entries(PROTECTED_EXAMPLES)) {
      const asked: number = decider.asked.length;
      // No toolInvocationToken: VS Code has confirmed the call (or the person auto-approved the tool).
      const result = await invoke('stage_file', { path, content: 'changed by the agent\n' });
      assert.match(
        result,
        /^E_SANDBOX_REFUSED: The user declined stage_file on the protected file/,
        `${glob}: ${result}`,
      );
      assert.equal(decider.asked.length, asked + 1, `${glob}: the modal was shown`);
      const question: { message: string; detail: string; secret: boolean } = decider.asked.at(-1)!;
      assert.equal(question.message, `Allow stage_file to stage a change to the protected file "${path}"?`, glob);
      assert.match(
        question.detail,
        new RegExp(`is protected by the built-in rule "${glob.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}": `),
        glob,
      );
      assert.equal(question.secret, true);
    }
    assert.deepEqual(
      api.host.session.media
        .heads()
        .map((m) => m.path.display)
        .filter((p) => Object.values(PROTECTED_EXAMPLES).includes(p)),
      [],
      'nothing was staged',
    );
  });

  it('attack: save an agent-made .vscode/settings.json after the stage was allowed — the save asks again; Cancel leaves the disk unchanged', async () => {
    const api = await testApi();
    assert.ok(api.decider);
    const staged = await invoke('stage_file', {
      path: '.vscode/settings.json',
      content: JSON.stringify({ 'workspaceTools.rules': ALLOW_ALL }),
    });
    const asked = api.decider.asked.length;
    const before = (await exists(workspaceUri('.vscode', 'settings.json')))
      ? await readText(workspaceUri('.vscode', 'settings.json'))
      : undefined;
    api.decider.answer = 'decline';
    assert.match(
      await invoke('save_media', { media_id: mediaId(staged) }),
      /^E_SANDBOX_REFUSED: The user declined save_media on the protected file "\.vscode\/settings\.json"/,
    );
    assert.equal(api.decider.asked.length, asked + 1);
    assert.equal(
      api.decider.asked.at(-1)?.message,
      'Allow save_media to write the protected file ".vscode/settings.json"?',
    );
    const after = (await exists(workspaceUri('.vscode', 'settings.json')))
      ? await readText(workspaceUri('.vscode', 'settings.json'))
      : undefined;
    assert.equal(after, before);
    api.host.session.media.discardAll();
  });

  it("staging a protected file's current bytes asks nothing more than any stage", async () => {
    const api = await testApi();
    assert.ok(api.decider);
    const asked = api.decider.asked.length;
    await vscode.workspace.fs.writeFile(workspaceUri('AGENTS.md'), new TextEncoder().encode('# Agents\n'));
    assert.match(await invoke('stage_file', { path: 'AGENTS.md' }), /"media_id"/);
    assert.equal(api.decider.asked.length, asked);
    api.host.session.media.discardAll();
    await vscode.workspace.fs.delete(workspaceUri('AGENTS.md'));
  });
});
