/**
 * The child process of journal-kill.test.ts (not a test file itself): applies one change set through
 * the core over a real workspace folder and a real state folder, and stops dead at the workspace
 * write numbered `pauseAt` of the set (a temp file written, a rename, a delete): it says so on stdout
 * and blocks, so the test can kill -9 it there. `failAt` makes that write fail (EIO), so the set
 * rolls back and the pause can fall inside the rollback. `recover`: no set; the start's recovery of
 * the set an earlier child left is what it stops in.
 *
 * Usage: node journal-kill-child.ts <save|undo|rollback|recover> <workspace> <spool> <state> <pauseAt> <failAt>
 */
import { writeSync } from 'node:fs';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { Policy } from '../../src/core/policy/policy.ts';
import { TOOLS } from '../../src/core/tools/index.ts';
import type { WriteOptions } from '../../src/core/ports.ts';
import { MemoryLog, runTool, testEnvironment } from './harness.ts';
import { NEW, SET_FILES } from './journal-kill-fixture.ts';

const [mode, workspace, spool, state, pauseAtArg, failAtArg] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
  string,
];
const pauseAt = Number(pauseAtArg);
const failAt = Number(failAtArg);

/** Counts the set's writes to the workspace once armed; pauses (blocks for good) or fails at the chosen ones. */
class PausingFs extends NodeFs {
  armed = false;
  private count = 0;

  private async step<T>(what: string, run: () => Promise<T>): Promise<T> {
    if (!this.armed) return run();
    const n = ++this.count;
    if (n === failAt) throw Object.assign(new Error(`injected failure of ${what}`), { code: 'EIO' });
    const result = await run();
    if (n === pauseAt) {
      writeSync(1, `paused ${n} after ${what}\n`);
      // Blocks the whole process (no timer, no event): it only ends by the test's kill -9.
      Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0);
    }
    return result;
  }

  override writeFile(address: string, data: Uint8Array, options?: WriteOptions): Promise<void> {
    return this.step(`writeFile ${nodePath.basename(address)}`, () => super.writeFile(address, data, options));
  }

  override rename(from: string, to: string): Promise<void> {
    return this.step(`rename ${nodePath.basename(to)}`, () => super.rename(from, to));
  }

  override delete(address: string): Promise<void> {
    return this.step(`delete ${nodePath.basename(address)}`, () => super.delete(address));
  }
}

const fs = new PausingFs();
const roots = [{ name: nodePath.basename(workspace), address: workspace, localPath: workspace }];
const policy = new Policy([]);
const session = assemble({
  ...testEnvironment(spool),
  fs,
  roots: () => roots,
  gate: async () => ({ allow: true, decidedBy: 'test' }),
  policy: () => policy,
  clock: { now: () => Date.now() },
  log: new MemoryLog(),
  spoolDir: spool,
  stateDir: state,
});

async function stageSet(): Promise<string[]> {
  const ids: string[] = [];
  for (const name of SET_FILES.written)
    ids.push((await runTool(session, TOOLS.stage_file, { path: name, content: NEW(name) })).result.media_id!);
  ids.push((await runTool(session, TOOLS.stage_file, { path: SET_FILES.deleted, action: 'delete' })).result.media_id!);
  ids.push(
    (await runTool(session, TOOLS.stage_file, { path: SET_FILES.moved.from, action: 'move', to: SET_FILES.moved.to }))
      .result.media_id!,
  );
  return ids;
}

if (mode === 'recover') {
  // The next start, itself killed while it rolls back the set an earlier child left.
  fs.armed = true;
  await session.recoverInterruptedSets();
} else if (mode === 'undo') {
  const ids = await stageSet();
  await runTool(session, TOOLS.save_media, { media_ids: ids });
  fs.armed = true;
  await runTool(session, TOOLS.undo_save, {});
} else {
  const ids = await stageSet();
  fs.armed = true;
  await runTool(session, TOOLS.save_media, { media_ids: ids }).catch((e: unknown) => {
    if (mode !== 'rollback') throw e;
  });
}
writeSync(1, 'ended\n');
await session.dispose();
