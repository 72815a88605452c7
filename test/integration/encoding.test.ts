import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, testApi, waitFor, workspaceUri } from './api.ts';

/** The JSON line a stage or patch result starts with. */
function resultOf(text: string): { media_id: string; encoding?: string } {
  return JSON.parse(text.split('\n')[0]!) as { media_id: string; encoding?: string };
}

describe('files.encoding', () => {
  it('decides how open_file, stage_file and save_media read and write a file', async () => {
    const folder = workspaceUri('legacy');
    const file = workspaceUri('legacy', 'hello.txt');
    const files = vscode.workspace.getConfiguration('files', file);
    await files.update('encoding', 'windows1251', vscode.ConfigurationTarget.Workspace);
    try {
      // "Привет\n" in windows-1251; without the setting it would read as windows1252 ("Ïðèâåò").
      await vscode.workspace.fs.writeFile(file, new Uint8Array([0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x0a]));
      const opened = await invoke('open_file', { path: 'legacy/hello.txt' });
      assert.match(opened, /^artifact (art-[0-9a-f]+-\d+): legacy\/hello\.txt, 1 line, 7 bytes, windows1251, lf/);
      const callId = /^artifact (art-[0-9a-f]+-\d+)/.exec(opened)![1]!;
      assert.equal(
        await invoke('artifact_read', { callId }),
        'legacy/hello.txt lines 1-1 of 1:\n1\tПривет\n(end of file)',
      );
      const staged = resultOf(await invoke('stage_file', { path: 'legacy/hello.txt' }));
      // The model's result names ids and counts only; the media keeps the file's encoding.
      assert.equal((await testApi()).host.session.media.get(String(staged.media_id)).encoding, 'windows1251');
      const patched = resultOf(
        await invoke('media_apply_patch', {
          media_id: staged.media_id,
          patch: { find: 'Привет', replace: 'Привет, мир' },
        }),
      );
      // The person reviews the staged side in its encoding, not as UTF-8.
      const stagedSide = await waitFor('the staged document', () =>
        vscode.workspace.textDocuments.find(
          (d) => d.uri.scheme === 'staged' && d.uri.path === '/legacy/hello.txt' && d.getText().includes('мир'),
        ),
      );
      assert.equal(stagedSide.getText(), 'Привет, мир\n');
      await invoke('save_media', { media_id: patched.media_id });
      assert.deepEqual(
        [...(await vscode.workspace.fs.readFile(file))],
        [0xcf, 0xf0, 0xe8, 0xe2, 0xe5, 0xf2, 0x2c, 0x20, 0xec, 0xe8, 0xf0, 0x0a],
      );
    } finally {
      await files.update('encoding', undefined, vscode.ConfigurationTarget.Workspace);
      await vscode.workspace.fs.delete(folder, { recursive: true, useTrash: false });
    }
  });
});
