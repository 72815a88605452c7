import { test } from 'node:test';
import assert from 'node:assert/strict';
import { chmodSync, chownSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { session, type TestSession } from './harness.ts';
import { join } from './media-fixtures.ts';

/* Moves, deletes, undo and rollback keep a file's mode and owner, as saves do (issue 44, item 2). */

function modeOf(t: TestSession, rel: string): string {
  return (statSync(join(t.root, rel)).mode & 0o7777).toString(8);
}

function file(t: TestSession, rel: string, content: string, mode: number): void {
  writeFileSync(join(t.root, rel), content);
  chmodSync(join(t.root, rel), mode);
}

test('attack: a private file made world-readable by a move: the moved file keeps 0600', async (tc) => {
  const t = session(tc);
  file(t, 'priv.txt', 'secret\n', 0o600);
  await t.invoke('stage_file', { path: 'priv.txt', action: 'move', to: 'moved.txt' });
  await t.invoke('save_media', { media_id: 'm1' });
  assert.equal(readFileSync(join(t.root, 'moved.txt'), 'utf8'), 'secret\n');
  assert.equal(modeOf(t, 'moved.txt'), '600');
  assert.equal(statSync(join(t.root, 'moved.txt')).uid, process.getuid?.());
});

test('a move with an edit keeps the mode, and never setuid: a 4755 script moves as 0755', async (tc) => {
  const t = session(tc);
  file(t, 'tool.sh', '#!/bin/sh\necho a\n', 0o4755);
  await t.invoke('stage_file', {
    path: 'tool.sh',
    action: 'move',
    to: 'bin.sh',
    patch: { find: 'echo a', replace: 'echo b' },
  });
  await t.invoke('save_media', { media_id: 'm2' });
  assert.equal(readFileSync(join(t.root, 'bin.sh'), 'utf8'), '#!/bin/sh\necho b\n');
  assert.equal(modeOf(t, 'bin.sh'), '755');
});

test('a delete of run.sh (0755) and a move of keep.txt (0640), undone: both come back with their modes', async (tc) => {
  const t = session(tc);
  file(t, 'run.sh', '#!/bin/sh\n', 0o755);
  file(t, 'keep.txt', 'keep\n', 0o640);
  await t.invoke('stage_file', { path: 'run.sh', action: 'delete' });
  await t.invoke('stage_file', { path: 'keep.txt', action: 'move', to: 'kept.txt' });
  await t.invoke('save_media', { media_ids: ['m1', 'm2'] });
  assert.equal(existsSync(join(t.root, 'run.sh')), false);
  assert.equal(modeOf(t, 'kept.txt'), '640');
  const undone = await t.invoke('undo_save', { save_id: 's1' });
  assert.equal(undone.result.action, 'reverted');
  assert.equal(readFileSync(join(t.root, 'run.sh'), 'utf8'), '#!/bin/sh\n');
  assert.equal(modeOf(t, 'run.sh'), '755');
  assert.equal(readFileSync(join(t.root, 'keep.txt'), 'utf8'), 'keep\n');
  assert.equal(modeOf(t, 'keep.txt'), '640');
  assert.equal(existsSync(join(t.root, 'kept.txt')), false);
});

test('a move with replace onto a 0600 file, undone: the destination gets its own mode back, the source its own', async (tc) => {
  const t = session(tc);
  file(t, 'a.txt', 'a\n', 0o644);
  file(t, 'b.txt', 'b\n', 0o600);
  await t.invoke('stage_file', { path: 'a.txt', action: 'move', to: 'b.txt', replace: true });
  await t.invoke('save_media', { media_id: 'm1' });
  assert.equal(modeOf(t, 'b.txt'), '644', 'the moved file is the source, with its mode (as mv does)');
  await t.invoke('undo_save', {});
  assert.equal(readFileSync(join(t.root, 'b.txt'), 'utf8'), 'b\n');
  assert.equal(modeOf(t, 'b.txt'), '600');
  assert.equal(modeOf(t, 'a.txt'), '644');
});

test('a set rolled back after a failure midway recreates a deleted 0700 file with its mode', async (tc) => {
  const t = session(tc);
  file(t, 'x.sh', 'x\n', 0o700);
  writeFileSync(join(t.root, 'z.txt'), 'z\n');
  await t.invoke('stage_file', { path: 'x.sh', action: 'delete' });
  await t.invoke('stage_file', { path: 'z.txt', content: 'Z\n' });
  // Between the delete of x.sh and the write of z.txt, z.txt becomes a folder: the write fails.
  const off = t.session.media.onDidChange((change) => {
    if (change.kind === 'saved' && change.media.id === 'm1') {
      writeFileSync(join(t.root, 'z.txt'), 'changed\n');
    }
  });
  tc.after(() => off.dispose());
  await assert.rejects(t.invoke('save_media', { media_ids: ['m1', 'm2'] }), /rolled back, so nothing remains changed/);
  assert.equal(readFileSync(join(t.root, 'x.sh'), 'utf8'), 'x\n');
  assert.equal(modeOf(t, 'x.sh'), '700');
});

test(
  'a moved or recreated file keeps its owner where the process may set it',
  { skip: process.getuid?.() !== 0 ? 'only root may give a file another owner' : false },
  async (tc) => {
    const t = session(tc);
    file(t, 'theirs.txt', 'theirs\n', 0o640);
    file(t, 'gone.txt', 'gone\n', 0o600);
    chownSync(join(t.root, 'theirs.txt'), 4242, 4343);
    chownSync(join(t.root, 'gone.txt'), 4242, 4343);
    await t.invoke('stage_file', { path: 'theirs.txt', action: 'move', to: 'moved.txt' });
    await t.invoke('stage_file', { path: 'gone.txt', action: 'delete' });
    await t.invoke('save_media', { media_ids: ['m1', 'm2'] });
    const moved = statSync(join(t.root, 'moved.txt'));
    assert.deepEqual([moved.uid, moved.gid, modeOf(t, 'moved.txt')], [4242, 4343, '640']);
    await t.invoke('undo_save', {});
    for (const [rel, mode] of [
      ['theirs.txt', '640'],
      ['gone.txt', '600'],
    ] as const) {
      const s = statSync(join(t.root, rel));
      assert.deepEqual([s.uid, s.gid, modeOf(t, rel)], [4242, 4343, mode], rel);
    }
  },
);
