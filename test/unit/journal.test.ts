import { test } from 'node:test';
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, symlinkSync, unlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session, testDir } from './harness.ts';
import { join } from './media-fixtures.ts';

/* The journal of change sets and what a start does with one left behind (issue 44, item 15). */

const sha = (text: string): string => createHash('sha256').update(text).digest('hex');

/**
 * A journal as a process that died midway leaves it: `a.txt` already holds what the set wrote
 * (`wrote`), `b.txt` still holds what it held; `a.txt` held `before` (kept in the journal).
 */
function leftJournal(state: string, root: string, pid: number, before: string): string {
  const folder = nodePath.join(state, 'sets', `1700000000000-0123456789ab@${pid}`);
  mkdirSync(folder, { recursive: true, mode: 0o700 });
  const b = readFileSync(nodePath.join(root, 'b.txt'), 'utf8');
  writeFileSync(nodePath.join(folder, 'bytes'), before + b);
  const kept = [
    { offset: 0, length: Buffer.byteLength(before) },
    { offset: Buffer.byteLength(before), length: Buffer.byteLength(b) },
  ];
  const step = (rel: string, beforeText: string, afterText: string, at: number) => ({
    root,
    rel,
    display: rel,
    kind: 'write',
    before: { exists: true, hash: sha(beforeText), kept: kept[at] },
    after: { exists: true, hash: sha(afterText) },
  });
  const entry = {
    version: 1,
    kind: 'save',
    at: 1_700_000_000_000,
    steps: [step('a.txt', before, readFileSync(nodePath.join(root, 'a.txt'), 'utf8'), 0), step('b.txt', b, 'B2\n', 1)],
  };
  writeFileSync(nodePath.join(folder, 'journal.json'), JSON.stringify(entry));
  return folder;
}

/** A process id that no process has now: one that has exited. */
const DEAD_PID = 2 ** 22 + 1;

test('attack: a journal planted in a state folder inside the workspace is never written back at the next start', async (tc) => {
  const probe = session(tc);
  const state = join(probe.root, '.state');
  writeFileSync(join(probe.root, 'a.txt'), 'A2\n');
  writeFileSync(join(probe.root, 'b.txt'), 'B\n');
  // The model could write this with save_media or a command: "a.txt held pwned before a set that died".
  leftJournal(state, probe.root, DEAD_PID, 'pwned\n');
  const roots = probe.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  assert.deepEqual(await t.session.recoverInterruptedSets(), []);
  assert.equal(readFileSync(join(probe.root, 'a.txt'), 'utf8'), 'A2\n');
  assert.match(
    t.log.messages.join('\n'),
    /state folder .*\.state is inside \(or holds\) the workspace folder .*, which the tools can write, so it is not used/,
  );
  // Sets still save, journaled where the tools cannot write.
  await t.invoke('stage_file', { path: 'a.txt', content: 'A3\n' });
  await t.invoke('stage_file', { path: 'b.txt', action: 'delete' });
  await t.invoke('save_media', { media_ids: ['m1', 'm2'] });
  assert.equal(readFileSync(join(probe.root, 'a.txt'), 'utf8'), 'A3\n');
});

test('a set a dead process left half applied is rolled back at the next start, and the log says so', async (tc) => {
  const t0 = session(tc);
  const state = testDir(tc, 'wt-state-').path;
  writeFileSync(join(t0.root, 'a.txt'), 'A2\n');
  writeFileSync(join(t0.root, 'b.txt'), 'B\n');
  leftJournal(state, t0.root, DEAD_PID, 'A\n');
  const roots = t0.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  const [set] = await t.session.recoverInterruptedSets();
  assert.equal(set?.outcome, 'rolled-back');
  assert.equal(
    set.message,
    'A save of "a.txt", "b.txt" (started 2023-11-14T22:13:20.000Z) was interrupted when its process ended, and was rolled back: every file holds what it held before.',
  );
  assert.deepEqual(t.log.messages, [set.message]);
  assert.equal(readFileSync(join(t0.root, 'a.txt'), 'utf8'), 'A\n');
  assert.deepEqual(readdirSync(nodePath.join(state, 'sets')), []);
});

test('a set whose file changed after its process died is left as it is, and the log says where its bytes are kept', async (tc) => {
  const t0 = session(tc);
  const state = testDir(tc, 'wt-state-').path;
  writeFileSync(join(t0.root, 'a.txt'), 'A2\n');
  writeFileSync(join(t0.root, 'b.txt'), 'B\n');
  const folder = leftJournal(state, t0.root, DEAD_PID, 'A\n');
  writeFileSync(join(t0.root, 'b.txt'), 'the person wrote this since\n');
  const roots = t0.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  const [set] = await t.session.recoverInterruptedSets();
  assert.equal(set?.outcome, 'left');
  const claimed = nodePath.join(state, 'sets', `1700000000000-0123456789ab@${process.pid}`);
  assert.equal(
    set.message,
    `A save of "a.txt", "b.txt" (started 2023-11-14T22:13:20.000Z) was interrupted when its process ended, and was left as it is: "b.txt" changed since (it holds neither what the set wrote nor what it replaced). What the files held before it is kept in ${claimed}; remove that folder once the files are as they should be.`,
  );
  assert.equal(readFileSync(join(t0.root, 'a.txt'), 'utf8'), 'A2\n');
  assert.equal(readFileSync(join(t0.root, 'b.txt'), 'utf8'), 'the person wrote this since\n');
  assert.deepEqual(readdirSync(nodePath.join(state, 'sets')), [nodePath.basename(claimed)]);
  assert.notEqual(folder, claimed);
});

test('a set a live process is applying is not touched by another host starting on the workspace', async (tc) => {
  const t0 = session(tc);
  const state = testDir(tc, 'wt-state-').path;
  writeFileSync(join(t0.root, 'a.txt'), 'A2\n');
  writeFileSync(join(t0.root, 'b.txt'), 'B\n');
  // Process 1 (init) always lives.
  const folder = leftJournal(state, t0.root, 1, 'A\n');
  const roots = t0.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  assert.deepEqual(await t.session.recoverInterruptedSets(), []);
  assert.equal(readFileSync(join(t0.root, 'a.txt'), 'utf8'), 'A2\n');
  assert.deepEqual(readdirSync(nodePath.join(state, 'sets')), [nodePath.basename(folder)]);
});

test('attack: a state folder swapped for a link is refused; the set is not saved, and nothing is written', async (tc) => {
  const t0 = session(tc);
  const elsewhere = testDir(tc, 'wt-elsewhere-').path;
  const state = nodePath.join(testDir(tc, 'wt-state-').path, 'workspace');
  symlinkSync(elsewhere, state);
  writeFileSync(join(t0.root, 'a.txt'), 'A\n');
  writeFileSync(join(t0.root, 'b.txt'), 'B\n');
  const roots = t0.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  await t.invoke('stage_file', { path: 'a.txt', content: 'A2\n' });
  await t.invoke('stage_file', { path: 'b.txt', action: 'delete' });
  await assert.rejects(t.invoke('save_media', { media_ids: ['m1', 'm2'] }), (e: Error) => {
    assert.match(
      e.message,
      /^The set could not be journaled before writing \(.*workspace is not a folder \(a link or a file is in its place\)\), so nothing in it was written\. Tell the user: Workspace Tools journals change sets in that folder, which must be the user's own writable folder with free space\.$/,
    );
    return true;
  });
  assert.equal(readFileSync(join(t0.root, 'a.txt'), 'utf8'), 'A\n');
  assert.equal(readFileSync(join(t0.root, 'b.txt'), 'utf8'), 'B\n');
  assert.deepEqual(readdirSync(elsewhere), []);
  // The person removes the link: the next save journals in a real folder and goes through.
  unlinkSync(state);
  await t.invoke('save_media', { media_ids: ['m1', 'm2'] });
  assert.equal(readFileSync(join(t0.root, 'a.txt'), 'utf8'), 'A2\n');
});

test("a set journaled under a folder inside the workspace (an MCP client's root) is recovered by the host of the whole folder", async (tc) => {
  const t0 = session(tc);
  const state = testDir(tc, 'wt-state-').path;
  mkdirSync(join(t0.root, 'sub'));
  writeFileSync(join(t0.root, 'sub/a.txt'), 'A\n');
  writeFileSync(join(t0.root, 'sub/b.txt'), 'B\n');
  const sub = { name: 'sub', address: join(t0.root, 'sub'), localPath: join(t0.root, 'sub') };
  const client = session(tc, { overrides: { roots: () => [sub], stateDir: state } });
  const path = (rel: string) => ({ root: sub, rel, display: rel });
  // The set begins (journaled), writes a.txt, and its process ends there.
  await client.session.journal.begin('save', [
    {
      path: path('a.txt'),
      kind: 'write',
      before: { bytes: Buffer.from('A\n'), meta: undefined },
      after: Buffer.from('A2\n'),
    },
    {
      path: path('b.txt'),
      kind: 'write',
      before: { bytes: Buffer.from('B\n'), meta: undefined },
      after: Buffer.from('B2\n'),
    },
  ]);
  writeFileSync(join(t0.root, 'sub/a.txt'), 'A2\n');
  const roots = t0.session.roots;
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  const [set] = await t.session.recoverInterruptedSets();
  assert.equal(set?.outcome, 'rolled-back');
  assert.deepEqual(set.files, ['a.txt', 'b.txt']);
  assert.equal(readFileSync(join(t0.root, 'sub/a.txt'), 'utf8'), 'A\n');
  assert.equal(readFileSync(join(t0.root, 'sub/b.txt'), 'utf8'), 'B\n');
});
