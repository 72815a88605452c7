import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import { createInterface } from 'node:readline';
import { session, testDir } from './harness.ts';
import { ALL_NEW, ALL_OLD, standing, writeOld } from './journal-kill-fixture.ts';

/*
 * A set is all or nothing even when its process is killed (issue 44, item 15): a child applies a set
 * (three rewrites, a delete, a move) through the core and stops at a chosen write to the workspace;
 * the test checks the set's journal is on disk there, kills it with SIGKILL, and a new session on the
 * same workspace and state folder recovers it: every file old, or every file new (and undoable).
 */

const CHILD = nodePath.join(import.meta.dirname, 'journal-kill-child.ts');
type Mode = 'save' | 'undo' | 'rollback' | 'recover';

interface ChildRun {
  /** The line the child wrote when it stopped (undefined: it ran to the end). */
  readonly paused: string | undefined;
  /** The journal folders on disk, named after the child, when it stopped. */
  readonly journals: readonly string[];
}

/** Runs the child until it stops at write `pauseAt` (then kills it with SIGKILL) or ends; resolves once it has exited. */
async function runChild(
  tc: TestContext,
  mode: Mode,
  dirs: { root: string; spool: string; state: string },
  pauseAt: number,
  failAt: number,
): Promise<ChildRun> {
  const child = spawn(
    process.execPath,
    [
      '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
      CHILD,
      mode,
      dirs.root,
      dirs.spool,
      dirs.state,
      String(pauseAt),
      String(failAt),
    ],
    { stdio: ['ignore', 'pipe', 'pipe'] },
  );
  tc.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  let stderr = '';
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  const exited = new Promise<{ code: number | null; signal: NodeJS.Signals | null }>((resolve) =>
    child.on('exit', (code, signal) => resolve({ code, signal })),
  );
  let paused: string | undefined;
  let journals: string[] = [];
  for await (const line of createInterface({ input: child.stdout })) {
    if (line.startsWith('paused')) {
      paused = line;
      journals = readdirSync(nodePath.join(dirs.state, 'sets')).filter((n) => n.endsWith(`@${child.pid}`));
      child.kill('SIGKILL');
      break;
    }
    if (line === 'ended') break;
  }
  const end = await exited;
  if (paused === undefined) assert.equal(end.code, 0, `the child failed: ${stderr}`);
  else assert.equal(end.signal, 'SIGKILL');
  return { paused, journals };
}

/** The workspace writes of each run (temp file, rename, delete, counted by the child): a kill after each, and one run to the end. */
const WRITES: Record<Exclude<Mode, 'recover'>, { readonly writes: number; readonly failAt: number }> = {
  // a, b, c, the move's destination: temp file and rename each; the delete and the move's source: a delete each.
  save: { writes: 10, failAt: -1 },
  // a, b, c and the deleted file written back in place, the destination removed, the source written back.
  undo: { writes: 6, failAt: -1 },
  // The move's rename fails (write 8): the delete and the three rewrites are put back (writes 9 to 12).
  rollback: { writes: 12, failAt: 8 },
};

async function trial(tc: TestContext, mode: Exclude<Mode, 'recover'>, pauseAt: number): Promise<void> {
  const root = testDir(tc, 'wt-kill-ws-').path;
  const spool = testDir(tc, 'wt-kill-spool-').path;
  const state = nodePath.join(testDir(tc, 'wt-kill-state-').path, 'workspace');
  mkdirSync(state);
  writeOld(root);
  const run = await runChild(tc, mode, { root, spool, state }, pauseAt, WRITES[mode].failAt);
  const label = `${mode}, stopped at write ${pauseAt}: ${run.paused ?? 'ran to the end'}`;
  if (run.paused !== undefined)
    assert.equal(run.journals.length, 1, `${label}: the set's journal is on disk at each of its writes`);

  const before = standing(root);
  const roots = [{ name: nodePath.basename(root), address: root, localPath: root }];
  const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
  const recovered = await t.session.recoverInterruptedSets();
  const after = standing(root);
  assert.deepEqual(readdirSync(nodePath.join(state, 'sets')), [], `${label}: no journal is left`);
  assert.deepEqual(
    readdirSync(root).filter((n) => n.includes('.wt-save-')),
    [],
    `${label}: no temp file is left beside the files`,
  );
  if (run.paused === undefined) {
    assert.deepEqual(recovered, [], label);
    assert.deepEqual(after, mode === 'save' ? ALL_NEW : ALL_OLD, label);
    return;
  }
  assert.equal(recovered.length, 1, label);
  const [set] = recovered;
  assert.ok(set);
  assert.equal(t.log.messages.at(-1), set.message, `${label}: the log says what became of the set`);
  // The set is finished only where every file already held what it wrote; else it is rolled back.
  const complete = JSON.stringify(before) === JSON.stringify(mode === 'undo' ? ALL_OLD : ALL_NEW);
  assert.equal(set.outcome, complete ? 'finished' : 'rolled-back', `${label}: ${JSON.stringify(before)}`);
  const expected = mode === 'undo' ? (complete ? ALL_OLD : ALL_NEW) : complete ? ALL_NEW : ALL_OLD;
  assert.deepEqual(after, expected, `${label}: all old or all new`);
  if (expected === ALL_NEW) {
    // Kept undoable: the set that stands (a save finished, or the save an interrupted undo was taking back).
    assert.ok(set.saveId, label);
    await t.invoke('undo_save', { save_id: set.saveId });
    assert.deepEqual(standing(root), ALL_OLD, `${label}: undone`);
  }
}

for (const mode of ['save', 'undo', 'rollback'] as const) {
  const { writes, failAt } = WRITES[mode];
  const first = failAt > 0 ? failAt + 1 : 1;
  // Every write of the run, and past the last (the run ends).
  for (let pauseAt = first; pauseAt <= writes + 1; pauseAt++) {
    test(`a ${mode} set killed with SIGKILL at write ${pauseAt > writes ? 'none (it ends)' : pauseAt} is all old or all new at the next start`, (tc) =>
      trial(tc, mode, pauseAt));
  }
}

/** The set left by a save killed after the move's rename (write 9): three rewrites, the delete and the move's destination done, its source not yet removed. */
const HALF_SAVED = {
  'a.txt': 'new 644',
  'b.txt': 'new 644',
  'c.txt': 'new 644',
  'd.sh': 'absent',
  'e.txt': 'old 600',
  'f.txt': 'new 600',
};

// The start's own rollback of that set, killed at each of its writes (the destination removed, the
// deleted file and the three rewrites put back) and run to its end: the start after it finishes the job.
for (let pauseAt = 1; pauseAt <= 6; pauseAt++) {
  test(`a start killed with SIGKILL at write ${pauseAt > 5 ? 'none (it ends)' : pauseAt} of its rollback of an interrupted set: the next start leaves it all old`, async (tc) => {
    const root = testDir(tc, 'wt-kill-ws-').path;
    const state = testDir(tc, 'wt-kill-state-').path;
    const dirs = { root, spool: testDir(tc, 'wt-kill-spool-').path, state };
    writeOld(root);
    await runChild(tc, 'save', dirs, 9, -1);
    assert.deepEqual(standing(root), HALF_SAVED);
    const run = await runChild(tc, 'recover', { ...dirs, spool: testDir(tc, 'wt-kill-spool-').path }, pauseAt, -1);
    if (run.paused !== undefined)
      assert.equal(
        run.journals.length,
        1,
        'the set is journaled (claimed by the recovering start) at each write of its rollback',
      );
    const roots = [{ name: nodePath.basename(root), address: root, localPath: root }];
    const t = session(tc, { overrides: { roots: () => roots, stateDir: state } });
    const recovered = await t.session.recoverInterruptedSets();
    assert.deepEqual(
      recovered.map((r) => r.outcome),
      run.paused === undefined ? [] : ['rolled-back'],
    );
    assert.deepEqual(standing(root), ALL_OLD);
    assert.deepEqual(readdirSync(nodePath.join(state, 'sets')), []);
  });
}
