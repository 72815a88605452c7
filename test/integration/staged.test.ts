import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, invokeFailing, readText, testApi, waitFor, workspaceUri } from './api.ts';

function mediaIdOf(text: string): string {
  const id = /"media_id":"(m\d+)"/.exec(text)?.[1];
  assert.ok(id, `no media_id in ${text}`);
  return id;
}

function stagedDiffTab(): vscode.TabInputTextDiff | undefined {
  for (const group of vscode.window.tabGroups.all) {
    for (const tab of group.tabs) {
      if (tab.input instanceof vscode.TabInputTextDiff && tab.input.modified.scheme === 'staged') return tab.input;
    }
  }
  return undefined;
}

describe('staged review', () => {
  it('stage + patch open a diff of the staged text against disk; disk changes only on save', async () => {
    const api = await testApi();
    const file = workspaceUri('src', 'greet.js');
    const original = await readText(file);
    assert.ok(original.includes('Hello'), 'fixture src/greet.js says Hello');

    const staged = mediaIdOf(await invoke('stage_file', { path: 'src/greet.js' }));
    const patched = mediaIdOf(await invoke('media_apply_patch', { media_id: staged, patch: { find: 'Hello', replace: 'Howdy' } }));
    const diff = await waitFor('the staged diff tab', () => {
      const tab = stagedDiffTab();
      return tab && tab.modified.path === '/src/greet.js' ? tab : undefined;
    });
    assert.equal(diff.original.toString(), file.toString());
    const stagedText = await waitFor('the patched text in the staged document', async () => {
      const text = new TextDecoder().decode(await vscode.workspace.fs.readFile(diff.modified));
      return text.includes('Howdy') ? text : undefined;
    });
    assert.equal(stagedText, original.replace('Hello', 'Howdy'));
    assert.equal(await readText(file), original, 'disk is unchanged before save_media');
    assert.equal(api.host.session.media.heads().length, 1);

    const saved = await invoke('save_media', { media_id: patched });
    assert.match(saved, /Saved m\d+ to "src\/greet.js": \+1 −1 lines/);
    assert.equal(await readText(file), original.replace('Hello', 'Howdy'));
    assert.equal(api.host.session.media.heads().length, 0, 'the Staged Changes view empties');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(original));
  });

  it('a person\'s edit of the staged document becomes a new media version', async () => {
    const api = await testApi();
    const staged = mediaIdOf(await invoke('stage_file', { path: 'docs/notes.md' }));
    const media = api.host.session.media.get(staged);
    const uri = vscode.Uri.from({ scheme: 'staged', path: '/docs/notes.md', query: staged });
    const document = await vscode.workspace.openTextDocument(uri);
    const editor = await vscode.window.showTextDocument(document);
    await editor.edit((edit) => edit.insert(new vscode.Position(0, 0), 'Edited by a person.\n'));
    assert.equal(await document.save(), true);
    const head = api.host.session.media.heads().find((m) => m.path.display === 'docs/notes.md');
    assert.ok(head && head.id !== staged, 'a new media version exists');
    assert.equal(head.origin, 'person');
    assert.equal(head.parentId, staged);
    assert.deepEqual(api.host.session.media.personChange(head.id), { mediaId: head.id, against: staged, added: 1, removed: 0 });
    assert.match(await invoke('list_media', {}), /edited by the user|person|user/i);
    assert.equal(await readText(workspaceUri('docs', 'notes.md')), new TextDecoder().decode(media.base.bytes), 'disk unchanged');
    api.host.session.media.discardAll();
    await vscode.commands.executeCommand('workbench.action.closeAllEditors');
  });

  it('save_media\'s confirmation shows the +/− counts and a link to the diff', async () => {
    const api = await testApi();
    const patched = mediaIdOf(await invoke('stage_file', { path: 'src/main.js', content: 'console.log(1);\n' }));
    const prepared = api.prepare('save_media', { media_id: patched });
    const message = prepared.confirmationMessages?.message;
    const text = typeof message === 'string' ? message : message?.value ?? '';
    assert.match(text, /Change: \*\*\+\d+ −\d+\*\* lines/);
    assert.match(text, /\[Open the staged diff\]\(command:workspaceTools\.openStagedDiff\?/);
    api.host.session.media.discardAll();
  });

  it('a change to the file on disk marks its staged media as conflicting, and save_media refuses', async () => {
    const api = await testApi();
    const file = workspaceUri('src', 'lib', 'math.js');
    const original = await readText(file);
    const staged = mediaIdOf(await invoke('stage_file', { path: 'src/lib/math.js', content: `${original}// staged\n` }));
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(`${original}// changed outside\n`));
    const stale = await waitFor('the media to be marked as conflicting', () => api.host.session.media.find(staged)?.stale);
    assert.deepEqual(stale, { kind: 'disk-changed' });
    const message = await invokeFailing('save_media', { media_id: staged });
    assert.match(message, /^E_SANDBOX_CONFLICT: "src\/lib\/math\.js" changed on disk after m\d+ was staged/);
    assert.equal(await readText(file), `${original}// changed outside\n`);
    api.host.session.media.discardAll();
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(original));
  });
});
