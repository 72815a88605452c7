import * as assert from 'node:assert/strict';
import { afterEach, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, invokeFailing, readText, testApi, waitFor, workspaceUri } from './api.ts';
import { savedSets } from '../../src/vscode/staged/view.ts';

function idOf(text: string, key: 'media_id' | 'save_id'): string {
  const id = new RegExp(`"${key}":"([ms]\\d+)"`).exec(text)?.[1];
  assert.ok(id, `no ${key} in ${text}`);
  return id;
}

async function bytesOf(uri: vscode.Uri): Promise<Buffer> {
  return Buffer.from(await vscode.workspace.fs.readFile(uri));
}

async function exists(uri: vscode.Uri): Promise<boolean> {
  try {
    await vscode.workspace.fs.stat(uri);
    return true;
  } catch {
    return false;
  }
}

/** Stages `content` for `path` and saves it through the tools; returns the save's id. */
async function stageAndSave(path: string, content: string): Promise<string> {
  const mediaId = idOf(await invoke('stage_file', { path, content }), 'media_id');
  return idOf(await invoke('save_media', { media_id: mediaId }), 'save_id');
}

function stagedDiffTabs(): vscode.Tab[] {
  return vscode.window.tabGroups.all.flatMap((g) =>
    g.tabs.filter((t) => t.input instanceof vscode.TabInputTextDiff && t.input.modified.scheme === 'staged'),
  );
}

describe('undo, open editors and stale reviews', function () {
  // Each test saves through the tools, and a save waits up to 2 s for the language services' verdict.
  this.timeout(120_000);

  afterEach(async () => {
    const api = await testApi();
    api.host.session.media.discardAll();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('Undo Save restores the exact previous bytes, and the audit log records the undo', async () => {
    const api = await testApi();
    const file = workspaceUri('src', 'lib', 'math.js');
    const original = await bytesOf(file);
    const saveId = await stageAndSave('src/lib/math.js', 'export const replaced = true;\n');
    assert.equal(await readText(file), 'export const replaced = true;\n');
    assert.equal(api.host.session.saves.get(saveId).path.display, 'src/lib/math.js');
    await vscode.commands.executeCommand('workspaceTools.undoSave', saveId);
    assert.deepEqual(await bytesOf(file), original);
    const entry = api.host.log.entries.filter((e) => e.tool === 'undo_save').at(-1);
    assert.deepEqual(entry && [entry.target, entry.verdict, entry.decidedBy], ['src/lib/math.js', 'allowed', 'person']);
    assert.deepEqual(api.host.session.saves.get(saveId).undone?.kind, 'restored');
  });

  it('Undo Last Save removes a file the save created', async () => {
    const file = workspaceUri('docs', 'created-by-save.md');
    await stageAndSave('docs/created-by-save.md', '# New\n');
    assert.equal(await exists(file), true);
    await vscode.commands.executeCommand('workspaceTools.undoLastSave');
    assert.equal(await exists(file), false);
  });

  it('undo after an outside change stages the previous bytes instead of overwriting', async () => {
    const api = await testApi();
    const file = workspaceUri('src', 'greet.js');
    const original = await readText(file);
    const saveId = await stageAndSave('src/greet.js', 'export const greet = () => "saved";\n');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode('// changed outside after the save\n'));
    await vscode.commands.executeCommand('workspaceTools.undoSave', saveId);
    assert.equal(await readText(file), '// changed outside after the save\n', 'the newer change stays on disk');
    const staged = api.host.session.media.heads().find((m) => m.path.display === 'src/greet.js');
    assert.ok(staged, 'the undo is staged for review');
    assert.equal(new TextDecoder().decode(staged.bytes), original);
    assert.deepEqual(api.host.session.saves.get(saveId).undone, { kind: 'staged', mediaId: staged.id });
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(original));
  });

  it("save_media to a file with unsaved editor changes is refused and the person's buffer is untouched", async () => {
    // VS Code for the web saves dirty editors after a delay by default; a person who edits and has not saved is this test's subject.
    const files = vscode.workspace.getConfiguration('files');
    const autoSave = files.inspect('autoSave')?.globalValue;
    await files.update('autoSave', 'off', vscode.ConfigurationTarget.Global);
    try {
      await unsavedEditorIsRespected();
    } finally {
      await files.update('autoSave', autoSave, vscode.ConfigurationTarget.Global);
    }
  });

  async function unsavedEditorIsRespected(): Promise<void> {
    const file = workspaceUri('src', 'main.js');
    const onDisk = await readText(file);
    const editor = await vscode.window.showTextDocument(file);
    await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), '// the person is typing\n'));
    assert.equal(editor.document.isDirty, true);
    assert.equal(await readText(file), onDisk, 'disk unchanged by the edit');
    const staged = await invoke('stage_file', { path: 'src/main.js', content: 'console.log("model");\n' });
    assert.equal(await readText(file), onDisk, 'disk unchanged by stage_file');
    assert.match(
      staged,
      /The user has unsaved changes to this file in the editor "main\.js"; they are not in this media/,
    );
    const refused = await invokeFailing('save_media', { media_id: idOf(staged, 'media_id') });
    assert.match(
      refused,
      /^E_SANDBOX_CONFLICT: "src\/main\.js" has unsaved changes in the open editor "main\.js", so save_media did not write it/,
    );
    assert.equal(await readText(file), onDisk, 'disk unchanged');
    assert.equal(editor.document.isDirty, true);
    assert.equal(editor.document.getText(), `// the person is typing\n${onDisk}`);
    await vscode.window.showTextDocument(editor.document);
    await vscode.commands.executeCommand('workbench.action.files.revert');
    assert.equal(editor.document.isDirty, false);
  }

  it("after a save the staged diff tab is gone; a focused one gives way to the file's editor", async () => {
    const api = await testApi();
    const file = workspaceUri('docs', 'notes.md');
    const original = await readText(file);
    const mediaId = idOf(await invoke('stage_file', { path: 'docs/notes.md' }), 'media_id');
    const patched = idOf(
      await invoke('media_apply_patch', {
        media_id: mediaId,
        patch: { find: '# Notes', replace: '# Notes (patched)' },
      }),
      'media_id',
    );
    await waitFor('the staged diff tab', () => stagedDiffTabs().length === 1 || undefined);
    await vscode.commands.executeCommand('workspaceTools.openStagedDiff', patched);
    await waitFor(
      'the diff to be the active tab',
      () => vscode.window.tabGroups.activeTabGroup.activeTab?.input instanceof vscode.TabInputTextDiff || undefined,
    );
    await invoke('save_media', { media_id: patched });
    await waitFor('the staged diff tab to close', () => stagedDiffTabs().length === 0 || undefined);
    await waitFor(
      "the file's editor in its place",
      () => vscode.window.activeTextEditor?.document.uri.toString() === file.toString() || undefined,
    );
    assert.match(await readText(file), /# Notes \(patched\)/);
    await vscode.commands.executeCommand('workspaceTools.undoLastSave');
    assert.equal(await readText(file), original);

    // Discarding closes the review too.
    idOf(await invoke('stage_file', { path: 'README.md', content: 'discard me\n' }), 'media_id');
    await waitFor('the staged diff tab', () => stagedDiffTabs().length === 1 || undefined);
    api.host.session.media.discardAll();
    await waitFor('the staged diff tab to close after discard', () => stagedDiffTabs().length === 0 || undefined);
  });

  it('Save All Staged Changes saves every staged file as one set after one confirmation; Undo This File undoes one file of it, Undo Save the rest', async () => {
    const api = await testApi();
    const paths = ['docs/set-a.md', 'docs/set-b.md', 'docs/set-c.md'];
    for (const path of paths)
      await vscode.workspace.fs.writeFile(
        workspaceUri(...path.split('/')),
        new TextEncoder().encode(`${path} before\n`),
      );
    for (const path of paths) await invoke('stage_file', { path, content: `${path} after\n` });
    const asked = api.decider?.asked.length ?? 0;
    await vscode.commands.executeCommand('workspaceTools.saveAllStaged');
    assert.equal((api.decider?.asked.length ?? 0) - asked, 1, 'one confirmation for the whole set');
    assert.match(
      api.decider?.asked.at(-1)?.detail ?? '',
      /docs\/set-a\.md .*; write docs\/set-b\.md .*; write docs\/set-c\.md/,
    );
    for (const path of paths) assert.equal(await readText(workspaceUri(...path.split('/'))), `${path} after\n`);
    const set = savedSets(api.host.session.saves)[0] ?? [];
    assert.deepEqual(
      set.map((r) => r.path.display),
      paths,
      'the view shows one saved set of the three files',
    );
    assert.equal(new Set(set.map((r) => r.set)).size, 1, 'one save_id');

    // The view's "Undo This File" on the second file of the set.
    await vscode.commands.executeCommand('workspaceTools.undoSavedFile', {
      kind: 'saved',
      record: set[1],
      inSet: true,
    });
    assert.deepEqual(await Promise.all(paths.map((p) => readText(workspaceUri(...p.split('/'))))), [
      `${paths[0]} after\n`,
      `${paths[1]} before\n`,
      `${paths[2]} after\n`,
    ]);
    // Its "Undo Save" on the set: what is left of it.
    await vscode.commands.executeCommand('workspaceTools.undoSave', {
      kind: 'saved-set',
      set: set[0]!.set,
      records: set,
    });
    assert.deepEqual(
      await Promise.all(paths.map((p) => readText(workspaceUri(...p.split('/'))))),
      paths.map((p) => `${p} before\n`),
    );
    for (const path of paths) await vscode.workspace.fs.delete(workspaceUri(...path.split('/')));
  });

  it('Discard on a file staged in several versions discards every version of it', async () => {
    const api = await testApi();
    await invoke('stage_file', { path: 'src/main.js', content: '// one\n' });
    await invoke('stage_file', { path: 'src/main.js', content: '// two\n' });
    const heads = api.host.session.media.heads().filter((m) => m.path.display === 'src/main.js');
    assert.ok(heads.length >= 2, `several versions of src/main.js are staged (${heads.length})`);
    await vscode.commands.executeCommand('workspaceTools.discardStaged', { kind: 'file', key: 'src/main.js', heads });
    assert.deepEqual(
      api.host.session.media.heads().filter((m) => m.path.display === 'src/main.js'),
      [],
    );
  });
});
