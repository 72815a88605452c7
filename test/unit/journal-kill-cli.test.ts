import { test, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, readdirSync, watch } from 'node:fs';
import * as nodePath from 'node:path';
import { testDir } from './harness.ts';
import { ALL_NEW, ALL_OLD, NEW, SET_FILES, standing, writeOld } from './journal-kill-fixture.ts';
import { workspaceStateDir } from '../../src/core/state-dir.ts';

/*
 * The issue's own trial (issue 44, item 15): the CLI (dist/cli.js) saving a set of five changes is
 * killed with SIGKILL partway, at a point picked by watching the set's journal appear and then a
 * random number of changes in the workspace folder; the next CLI start on the workspace finishes or
 * rolls back the set and says so on stderr. State lives in a state home the test makes (XDG_STATE_HOME).
 */

const CLI = nodePath.resolve('dist/cli.js');

function ensureBuilt(): void {
  if (!existsSync(CLI)) assert.equal(spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' }).status, 0);
}

const LINES = [
  ...SET_FILES.written.map((name) => ({ tool: 'stage_file', input: { path: name, content: NEW(name) } })),
  { tool: 'stage_file', input: { path: SET_FILES.deleted, action: 'delete' } },
  { tool: 'stage_file', input: { path: SET_FILES.moved.from, action: 'move', to: SET_FILES.moved.to } },
  { tool: 'save_media', input: { media_ids: ['m1', 'm2', 'm3', 'm4', 'm5'] } },
];

/** Resolves once `ready()` holds, checked whenever something changes in `folder` (and once now). */
function whenChanged(folder: string, ready: () => boolean): { promise: Promise<void>; stop(): void } {
  let stop = (): void => {};
  const promise = new Promise<void>((resolve) => {
    const watcher = watch(folder, { recursive: true }, () => {
      if (ready()) {
        watcher.close();
        resolve();
      }
    });
    stop = () => {
      watcher.close();
      resolve();
    };
    if (ready()) stop();
  });
  return { promise, stop };
}

async function trial(tc: TestContext, changesBeforeKill: number): Promise<void> {
  const root = testDir(tc, 'wt-kill-cli-ws-').path;
  const stateHome = testDir(tc, 'wt-kill-cli-state-').path;
  writeOld(root);
  const env = { ...process.env, XDG_STATE_HOME: stateHome };
  const sets = nodePath.join(
    workspaceStateDir({ home: '/nonexistent', xdgStateHome: stateHome, platform: process.platform }, [root]),
    'sets',
  );

  const child = spawn(process.execPath, [CLI, '--root', root, '--gate', 'approve'], {
    stdio: ['pipe', 'pipe', 'pipe'],
    env,
  });
  tc.after(() => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  });
  const exited = new Promise<NodeJS.Signals | null>((resolve) => child.on('exit', (_code, signal) => resolve(signal)));
  let outputs = 0;
  let stderr = '';
  child.stdout.on('data', (d: Buffer) => {
    outputs += d.toString().split('\n').length - 1;
  });
  child.stderr.on('data', (d: Buffer) => {
    stderr += d.toString();
  });
  // The CLI ending on its own before the kill fails the test at once (a crash, a refused set) rather than leaving it waiting.
  let killed = false;
  const ended = exited.then(() => {
    if (!killed) throw new Error(`the CLI ended before it was killed (after ${outputs} results): ${stderr}`);
  });
  ended.catch(() => {});
  // The set begins once its journal is on disk; then the workspace changes (temp files, renames, deletes) as it is applied.
  const journal = whenChanged(
    stateHome,
    () => existsSync(sets) && readdirSync(sets).some((n) => n.endsWith(`@${child.pid}`)),
  );
  let changes = 0;
  const applied = whenChanged(root, () => changes++ >= changesBeforeKill || outputs === LINES.length);
  tc.after(() => {
    journal.stop();
    applied.stop();
  });
  child.stdin.write(LINES.map((l) => JSON.stringify(l)).join('\n') + '\n');
  await Promise.race([journal.promise, ended]);
  await Promise.race([applied.promise, ended]);
  applied.stop();
  killed = true;
  child.kill('SIGKILL');
  assert.equal(await exited, 'SIGKILL');

  const next = spawnSync(process.execPath, [CLI, '--root', root, '--gate', 'approve', 'list_media', '{}'], {
    encoding: 'utf8',
    env,
    timeout: 60_000,
  });
  assert.equal(next.status, 0, next.stderr);
  const after = standing(root);
  assert.ok(
    JSON.stringify(after) === JSON.stringify(ALL_OLD) || JSON.stringify(after) === JSON.stringify(ALL_NEW),
    `after ${changesBeforeKill} changes: ${JSON.stringify(after)}`,
  );
  const said =
    /workspace-tools: A save of "a\.txt", "b\.txt", "c\.txt", "d\.sh", "f\.txt", "e\.txt" \(started [^)]+\) (was interrupted when its process ended, and was rolled back|had been written in full when its process ended, so it stands)/.exec(
      next.stderr,
    );
  if (outputs < LINES.length) assert.ok(said, `the next start says what became of the set: ${next.stderr}`);
  if (said) assert.equal(said[1]!.startsWith('had been'), JSON.stringify(after) === JSON.stringify(ALL_NEW));
  assert.deepEqual(readdirSync(sets), [], 'no journal is left');
}

// Changes seen in the workspace folder before the kill: from none (just journaled) to past the whole set.
const POINTS = [
  0,
  1 + Math.floor(Math.random() * 4),
  5 + Math.floor(Math.random() * 5),
  10 + Math.floor(Math.random() * 10),
];
for (const point of POINTS) {
  test(
    `kill -9 of the CLI after ${point} workspace changes of a five-file save_media set: the next start leaves it all old or all new and says so`,
    { timeout: 120_000 },
    async (tc) => {
      ensureBuilt();
      await trial(tc, point);
    },
  );
}
