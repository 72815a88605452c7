// Issue 24: a staged deletion is reviewed like any staged change, written only by save_media, and undone by undo_save.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { session } from './harness.ts';
import { isSandboxError } from '../../src/core/errors.ts';
import { join, rejectsWith } from './media-fixtures.ts';

/** CRLF, a Latin-1 byte and no final newline: what comes back must be these bytes exactly. */
const ORIGINAL = Buffer.from([0x6f, 0x6c, 0x64, 0x0d, 0x0a, 0xe9, 0x0d, 0x0a, 0x7a]);

test('stage_file with action "delete" stages the deletion; save_media deletes the file; undo_save brings it back byte for byte', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'old.txt');
  writeFileSync(file, ORIGINAL);
  const staged = await t.session.invoke(TOOLS.stage_file, { path: 'old.txt', action: 'delete' });
  assert.equal(staged.result.deletes, true);
  assert.equal(staged.result.removed, 3);
  assert.match(staged.text, /call save_media with media_id "m1" to delete the file/);
  assert.deepEqual(readFileSync(file), ORIGINAL, 'staging deletes nothing');
  assert.equal(t.gate.calls.at(-1)?.summary, 'stage the deletion of old.txt');
  const saved = await t.session.invoke(TOOLS.save_media, { media_id: staged.result.media_id });
  assert.equal(t.gate.calls.at(-1)?.summary, 'delete old.txt (m1)');
  assert.equal(existsSync(file), false);
  assert.equal(saved.result.method, 'delete');
  assert.match(saved.text, /^Deleted "old\.txt" \(m1, −3 lines\); undo_save with save_id "s1" brings it back\.$/m);
  const undone = await t.session.invoke(TOOLS.undo_save, {});
  assert.equal(undone.result.action, 'restored');
  assert.deepEqual(readFileSync(file), ORIGINAL);
});

test('a staged deletion of a file changed since is a conflict that deletes nothing; a file gone already is narrated', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'a.txt');
  writeFileSync(file, 'seen\n');
  const staged = await t.session.invoke(TOOLS.stage_file, { path: 'a.txt', action: 'delete' });
  writeFileSync(file, 'changed after staging\n');
  await rejectsWith(t.session.invoke(TOOLS.save_media, { media_id: staged.result.media_id }), 'E_SANDBOX_CONFLICT', '"a.txt" changed on disk after m1 was staged; deleting it would lose that change, so nothing was deleted. Stage the deletion again (stage_file with action "delete") if it is still wanted.');
  assert.equal(readFileSync(file, 'utf8'), 'changed after staging\n');
  const again = await t.session.invoke(TOOLS.stage_file, { path: 'a.txt', action: 'delete' });
  rmSync(file);
  await rejectsWith(t.session.invoke(TOOLS.save_media, { media_id: again.result.media_id }), 'E_SANDBOX_CONFLICT', '"a.txt" no longer exists, so m2 has nothing to delete. Call list_directory to see what is there.');
});

test('undoing a deletion whose file was made again since never overwrites it: the deleted bytes are staged for review', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'a.txt');
  writeFileSync(file, 'first\n');
  const staged = await t.session.invoke(TOOLS.stage_file, { path: 'a.txt', action: 'delete' });
  await t.session.invoke(TOOLS.save_media, { media_id: staged.result.media_id });
  writeFileSync(file, 'someone else\n');
  const undone = await t.session.invoke(TOOLS.undo_save, {});
  assert.equal(undone.result.action, 'staged');
  assert.equal(readFileSync(file, 'utf8'), 'someone else\n');
});

test('a deletion has no bytes to patch or save elsewhere, a folder cannot be staged for deletion, and content with delete is refused: each narrated, nothing changed', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'a.txt'), 'a\n');
  mkdirSync(join(t.root, 'dir'));
  const staged = await t.session.invoke(TOOLS.stage_file, { path: 'a.txt', action: 'delete' });
  await rejectsWith(t.session.invoke(TOOLS.media_apply_patch, { media_id: staged.result.media_id, patch: { find: 'a', replace: 'b' } }), 'E_SANDBOX_INVALID_INPUT', 'Media m1 is a staged deletion of "a.txt"; there is nothing to patch. Save it with save_media to delete the file, or stage the file again to edit it instead.');
  await rejectsWith(t.session.invoke(TOOLS.save_media, { media_id: staged.result.media_id, path: 'b.txt' }), 'E_SANDBOX_INVALID_INPUT', 'm1 is a staged deletion of "a.txt"; it cannot be saved to another path. Call save_media with media_id "m1" and no path.');
  await rejectsWith(t.session.invoke(TOOLS.stage_file, { path: 'dir', action: 'delete' }), 'E_SANDBOX_INVALID_INPUT', '"dir" is a folder; only files can be staged for deletion. Stage the deletion of each file in it (list_directory lists them).');
  await rejectsWith(t.session.invoke(TOOLS.stage_file, { path: 'a.txt', action: 'delete', content: 'x' }), 'E_SANDBOX_INVALID_INPUT', 'stage_file with action "delete" takes no content or patch: a deletion has no new bytes. Stage the deletion alone, or omit action to stage new bytes.');
  await rejectsWith(t.session.invoke(TOOLS.stage_file, { path: 'nope.txt', action: 'delete' }), 'E_SANDBOX_NOT_FOUND', '"nope.txt" does not exist, so there is nothing to delete.');
  assert.equal(readFileSync(join(t.root, 'a.txt'), 'utf8'), 'a\n');
});

test('attack: deleting a protected file (.github/workflows/ci.yml) asks every time; declined, the file stays', async (tc) => {
  const t = session(tc);
  mkdirSync(join(t.root, '.github', 'workflows'), { recursive: true });
  writeFileSync(join(t.root, '.github', 'workflows', 'ci.yml'), 'on: push\n');
  const staged = await t.session.invoke(TOOLS.stage_file, { path: '.github/workflows/ci.yml', action: 'delete' });
  t.gate.allow = false;
  await assert.rejects(t.session.invoke(TOOLS.save_media, { media_id: staged.result.media_id }), (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_REFUSED');
  assert.equal(t.gate.calls.at(-1)?.secret, true, 'the deletion asked in a modal');
  assert.equal(t.gate.calls.at(-1)?.summary, 'delete .github/workflows/ci.yml (m1)');
  assert.equal(readFileSync(join(t.root, '.github', 'workflows', 'ci.yml'), 'utf8'), 'on: push\n');
});

test('attack: a staged deletion of a secret (.env) is no way to read it: the stage asks, and declined nothing is staged', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, '.env'), 'TOKEN=CANARY-del\n');
  t.gate.allow = false;
  await assert.rejects(t.session.invoke(TOOLS.stage_file, { path: '.env', action: 'delete' }), (e: unknown) => isSandboxError(e) && e.code === 'E_SANDBOX_REFUSED');
  assert.equal(t.gate.calls.at(-1)?.secret, true);
  assert.equal(t.session.media.all().length, 0);
  assert.equal(readFileSync(join(t.root, '.env'), 'utf8'), 'TOKEN=CANARY-del\n');
});
