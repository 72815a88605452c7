import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session.ts';
import type { ModelPath } from '../../src/core/paths.ts';
import { session, type TestSession, runTool } from './harness.ts';
import { prepare } from '../../src/core/pipeline/prepare.ts';
import { join, rejectsWith } from './media-fixtures.ts';

/** Bytes no text editor would keep as they are: CRLF, a BOM-less Latin-1 byte, no final newline. */
const ORIGINAL = Buffer.from([0x61, 0x0d, 0x0a, 0xe9, 0x0d, 0x0a, 0x7a]);

async function saveNew(t: TestSession, path: string, content: string): Promise<string | undefined> {
  const staged = await runTool(t.session, TOOLS.stage_file, { path, content });
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: staged.result.media_id });
  return saved.result.save_id;
}

test('undo_save writes back the exact bytes a save replaced, and the audit log records it', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'a.txt');
  writeFileSync(file, ORIGINAL);
  const saveId = await saveNew(t, 'a.txt', 'replaced\n');
  assert.equal(saveId, 's1');
  // The file is Latin-1 text with CRLF line ends: the full content is written in them.
  assert.equal(readFileSync(file, 'utf8'), 'replaced\r\n');
  const undone = await runTool(t.session, TOOLS.undo_save, {});
  assert.deepEqual(undone.result, { save_id: 's1', path: 'a.txt', action: 'restored', undo_save_id: 's2' });
  assert.equal(undone.text.split('\n')[1], 'Undid save s1: "a.txt" holds its previous bytes again.');
  assert.deepEqual(readFileSync(file), ORIGINAL);
  assert.deepEqual(t.log.entries.map((e) => [e.tool, e.target, e.verdict]).slice(-1), [
    ['undo_save', 'a.txt', 'allowed'],
  ]);
  assert.equal(t.gate.calls.at(-1)?.summary, 'undo save s1 of a.txt');
  // The undo is a save of its own: undoing it redoes the change.
  await runTool(t.session, TOOLS.undo_save, { save_id: 's2' });
  assert.equal(readFileSync(file, 'utf8'), 'replaced\r\n');
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, { save_id: 's1' }),
    'E_SANDBOX_INVALID_INPUT',
    'Save s1 of "a.txt" was already undone. Nothing was changed.',
  );
});

test('undoing the save that created a file removes it', async (tc) => {
  const t = session(tc);
  await saveNew(t, 'new/made.txt', 'fresh\n');
  assert.equal(existsSync(join(t.root, 'new', 'made.txt')), true);
  const undone = await runTool(t.session, TOOLS.undo_save, { save_id: 's1' });
  assert.deepEqual(undone.result, { save_id: 's1', path: 'new/made.txt', action: 'removed' });
  assert.equal(existsSync(join(t.root, 'new', 'made.txt')), false);
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, {}),
    'E_SANDBOX_NOT_FOUND',
    'Every save of this window has already been undone; there is nothing left to undo.',
  );
});

test('undo after an outside change stages the previous bytes for review and overwrites nothing', async (tc) => {
  const t = session(tc);
  const file = join(t.root, 'b.txt');
  writeFileSync(file, 'one\n');
  await saveNew(t, 'b.txt', 'two\n');
  writeFileSync(file, 'three, by the person\n');
  const undone = await runTool(t.session, TOOLS.undo_save, {});
  assert.deepEqual(undone.result, { save_id: 's1', path: 'b.txt', action: 'staged', media_id: 'm2' });
  assert.equal(readFileSync(file, 'utf8'), 'three, by the person\n');
  const media = t.session.media.get('m2');
  assert.equal(Buffer.from(media.bytes).toString(), 'one\n');
  assert.equal(t.session.media.changes('m2').removed, 1);
  await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.equal(readFileSync(file, 'utf8'), 'one\n');
});

test('a created file changed since is not deleted by its undo', async (tc) => {
  const t = session(tc);
  await saveNew(t, 'c.txt', 'made\n');
  writeFileSync(join(t.root, 'c.txt'), 'made, then edited\n');
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, {}),
    'E_SANDBOX_CONFLICT',
    '"c.txt" was created by save s1 and has changed since; undoing would delete that newer change, so nothing was changed. Ask the user whether to delete the file.',
  );
  assert.equal(readFileSync(join(t.root, 'c.txt'), 'utf8'), 'made, then edited\n');
});

test('the undo budget: saves beyond it cannot be undone and say why; the kept files go with the session', async (tc) => {
  const t = session(tc, { overrides: { limits: () => ({ ...DEFAULT_LIMITS, undoBudgetBytes: 20 }) } });
  writeFileSync(join(t.root, 'd.txt'), 'old\n');
  await saveNew(t, 'd.txt', 'new\n');
  await saveNew(t, 'e.txt', 'a file far too large for an undo budget of 20 bytes\n');
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, { save_id: 's2' }),
    'E_SANDBOX_NOT_FOUND',
    'Save s2 of "e.txt" cannot be undone: the bytes it replaced were not kept (it needs 52 bytes, more than the undo budget of 20 bytes (workspaceTools.undo.diskBudgetMB)). Stage the file and change it back by hand instead.',
  );
  await saveNew(t, 'd.txt', 'two\n');
  await saveNew(t, 'd.txt', 'six\n');
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, { save_id: 's1' }),
    'E_SANDBOX_NOT_FOUND',
    'Save s1 of "d.txt" cannot be undone: the bytes it replaced were not kept (the oldest saves were dropped to stay within the undo budget (workspaceTools.undo.diskBudgetMB)). Stage the file and change it back by hand instead.',
  );
  const spool = t.session.artifacts.spoolDir;
  assert.deepEqual(readdirSync(join(spool, 'saves')).sort(), ['s3.after', 's3.before', 's4.after', 's4.before']);
  await runTool(t.session, TOOLS.undo_save, {});
  assert.equal(readFileSync(join(t.root, 'd.txt'), 'utf8'), 'two\n');
  await t.session.dispose();
  assert.equal(existsSync(spool), false);
});

test('save_media refuses a file with unsaved changes in an open editor; stage_file says they are not included', async (tc) => {
  const unsaved = new Set<string>();
  const t = session(tc, {
    overrides: {
      editors: { unsavedEditor: (path: ModelPath) => (unsaved.has(path.rel) ? `${path.rel} (unsaved)` : undefined) },
    },
  });
  const file = join(t.root, 'open.txt');
  writeFileSync(file, 'on disk\n');
  unsaved.add('open.txt');
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'open.txt', content: 'from the model\n' });
  assert.equal(
    staged.text.split('\n')[2],
    'The user has unsaved changes to this file in the editor "open.txt (unsaved)"; they are not in this media, which holds the file as it is on disk, and save_media will refuse until the user saves or reverts them.',
  );
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
    'E_SANDBOX_CONFLICT',
    '"open.txt" has unsaved changes in the open editor "open.txt (unsaved)", so save_media did not write it: that would put the file out of step with what the user is editing. Ask the user to save or revert that editor first; if they save it, stage the file again (its content changed), otherwise call save_media again.',
  );
  assert.equal(readFileSync(file, 'utf8'), 'on disk\n');
  unsaved.delete('open.txt');
  await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
  assert.equal(readFileSync(file, 'utf8'), 'from the model\n');
});

test('attack: a save that lands while the person is asked about undo_save cannot turn the undo onto another file', async (tc) => {
  let raced = false;
  let asked = '';
  const t1: TestSession = session(tc, {
    overrides: {
      gate: async (call) => {
        // While the person looks at "undo save s1 of a.txt", another save (to b.txt) becomes the latest.
        if (call.tool === 'undo_save' && !raced) {
          raced = true;
          asked = call.summary;
          await saveNew(t1, 'b.txt', 'other\n');
        }
        return { allow: true, decidedBy: 'test' };
      },
    },
  });
  writeFileSync(join(t1.root, 'a.txt'), 'before\n');
  await saveNew(t1, 'a.txt', 'after\n');
  const undone = await runTool(t1.session, TOOLS.undo_save, {});
  assert.equal(asked, 'undo save s1 of a.txt');
  assert.deepEqual(
    undone.result,
    { save_id: 's1', path: 'a.txt', action: 'restored', undo_save_id: 's3' },
    'the save the person was asked about',
  );
  assert.equal(readFileSync(join(t1.root, 'a.txt'), 'utf8'), 'before\n');
  assert.equal(readFileSync(join(t1.root, 'b.txt'), 'utf8'), 'other\n');
});

test('attack: a newer save of the same file that lands while the person is asked about undo_save is not the one undone', async (tc) => {
  let raced = false;
  const t1: TestSession = session(tc, {
    overrides: {
      gate: async (call) => {
        // While the person looks at "undo save s1 of a.txt", the model saves a.txt again (s2).
        if (call.tool === 'undo_save' && !raced) {
          raced = true;
          await saveNew(t1, 'a.txt', 'again\n');
        }
        return { allow: true, decidedBy: 'test' };
      },
    },
  });
  writeFileSync(join(t1.root, 'a.txt'), 'before\n');
  await saveNew(t1, 'a.txt', 'after\n');
  const undone = await runTool(t1.session, TOOLS.undo_save, {});
  // s1 is undone as asked; the file holds s2's bytes since, so its previous bytes are staged, never written over s2.
  assert.equal(undone.result.save_id, 's1');
  assert.equal(undone.result.action, 'staged');
  assert.equal(readFileSync(join(t1.root, 'a.txt'), 'utf8'), 'again\n');
  const media = t1.session.media.get(undone.result.media_id ?? '');
  assert.equal(Buffer.from(media.bytes).toString('utf8'), 'before\n');
});

test('attack: a call runs as the host confirmed it, not as it would be planned now (undo_save of the latest save, after another save landed)', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'a.txt'), 'before\n');
  await saveNew(t, 'a.txt', 'after\n');
  // VS Code's chat confirmation (prepareInvocation) shows the call as it is now…
  const confirmed = prepare(t.session, TOOLS.undo_save, {}, 'chat');
  assert.equal(confirmed.call.summary, 'undo save s1 of a.txt');
  // …another save lands before VS Code invokes it…
  await saveNew(t, 'b.txt', 'other\n');
  // …and the call that runs is the one confirmed, carried to its run: s1 is undone, never s2.
  const undone = await runTool(t.session, TOOLS.undo_save, {}, undefined, 'chat', { prepared: confirmed });
  assert.deepEqual([undone.result.save_id, undone.result.action], ['s1', 'restored']);
  assert.equal(readFileSync(join(t.root, 'a.txt'), 'utf8'), 'before\n');
  assert.equal(readFileSync(join(t.root, 'b.txt'), 'utf8'), 'other\n');
  assert.deepEqual(
    t.gate.calls.at(-1)?.targets.map((target) => target.display),
    ['a.txt'],
  );
});

test('attack: a set whose bytes do not fit the undo budget keeps none, drops no earlier save, and gives no save_id; one that fits gets its save_id', async (tc) => {
  const t = session(tc, { overrides: { limits: () => ({ ...DEFAULT_LIMITS, undoBudgetBytes: 40 }) } });
  writeFileSync(join(t.root, 'mine.txt'), 'old\n');
  const earlier = await saveNew(t, 'mine.txt', 'new\n');
  assert.equal(earlier, 's1');
  // Three files of 10 bytes rewritten, 60 bytes to keep (before and after): more than 40.
  for (const name of ['a', 'b', 'c']) writeFileSync(join(t.root, `${name}.txt`), `${name} old ...\n`);
  const staged = [];
  for (const name of ['a', 'b', 'c'])
    staged.push(
      (await runTool(t.session, TOOLS.stage_file, { path: `${name}.txt`, content: `${name} new ...\n` })).result
        .media_id,
    );
  const big = await runTool(t.session, TOOLS.save_media, { media_ids: staged });
  assert.equal((big.result as { save_id?: string }).save_id, undefined, big.text);
  assert.match(big.text, /cannot be undone/, big.text);
  await rejectsWith(
    runTool(t.session, TOOLS.undo_save, { save_id: 's2' }),
    'E_SANDBOX_NOT_FOUND',
    'Save s2 of "a.txt" cannot be undone: the bytes it replaced were not kept (its set needs 60 bytes kept to be undone, more than the undo budget of 40 bytes (workspaceTools.undo.diskBudgetMB)). Stage the file and change it back by hand instead.',
  );
  // The earlier save was not dropped for a set that could not be kept anyway.
  await runTool(t.session, TOOLS.undo_save, { save_id: 's1' });
  assert.equal(readFileSync(join(t.root, 'mine.txt'), 'utf8'), 'old\n');

  // Two small files, 26 bytes to keep: the set fits.
  writeFileSync(join(t.root, 'x.txt'), 'x old\n');
  writeFileSync(join(t.root, 'y.txt'), 'y old\n');
  const pair = [];
  for (const name of ['x', 'y'])
    pair.push(
      (await runTool(t.session, TOOLS.stage_file, { path: `${name}.txt`, content: `${name} new!\n` })).result.media_id,
    );
  const fits = await runTool(t.session, TOOLS.save_media, { media_ids: pair });
  const saveId = (fits.result as { save_id?: string }).save_id;
  assert.ok(saveId, fits.text);
  await runTool(t.session, TOOLS.undo_save, { save_id: saveId });
  assert.equal(readFileSync(join(t.root, 'x.txt'), 'utf8'), 'x old\n');
  assert.equal(readFileSync(join(t.root, 'y.txt'), 'utf8'), 'y old\n');
});
