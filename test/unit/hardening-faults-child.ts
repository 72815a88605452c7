/**
 * The child process of hardening-faults.test.ts (not a test file itself): runs one save scenario
 * through the core against a real workspace folder and reports each step on stdout, one JSON line a
 * step. The kill scenarios end with the process killing itself with SIGKILL at a chosen point of the
 * save, as a crash, an OOM kill or a closed editor would: no `finally`, no cleanup, nothing flushed.
 *
 * Usage: node hardening-faults-child.ts <scenario> <workspace> <spool-dir> <file>
 */
import { chmodSync, promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { assemble } from '../../src/core/pipeline/assemble.ts';
import { Policy } from '../../src/core/policy/policy.ts';
import { TOOLS } from '../../src/core/tools/index.ts';
import { isSandboxError } from '../../src/core/errors.ts';
import { MemoryLog, runTool, testEnvironment } from './harness.ts';
import type { WriteOptions } from '../../src/core/ports.ts';

export type Scenario =
  'kill-mid-temp-write' | 'kill-before-rename' | 'kill-after-rename' | 'unreadable-file' | 'unreadable-folder';

export type Step =
  | { readonly step: 'staged'; readonly media_id: string }
  | { readonly step: 'saving' }
  | { readonly step: 'saved'; readonly result: unknown }
  | { readonly step: 'failed'; readonly code: string; readonly message: string }
  | { readonly step: 'listed'; readonly media: readonly { readonly media_id: string; readonly path: string }[] };

const [scenario, workspace, spool, file] = process.argv.slice(2) as [Scenario, string, string, string];

function report(step: Step): void {
  process.stdout.write(`${JSON.stringify(step)}\n`);
}

function die(): never {
  process.kill(process.pid, 'SIGKILL');
  throw new Error('unreachable: SIGKILL was sent');
}

const isTemp = (address: string): boolean => /\.wt-save-[0-9a-f]{12}\.tmp$/.test(address);

/** The real node fs, dying at the scenario's point of a save. */
class DyingFs extends NodeFs {
  override async writeFile(address: string, data: Uint8Array, options?: WriteOptions): Promise<void> {
    if (scenario === 'kill-mid-temp-write' && isTemp(address)) {
      // Half the bytes reach the temp file, then the process is gone.
      await fsp.writeFile(address, data.subarray(0, Math.floor(data.byteLength / 2)));
      die();
    }
    await super.writeFile(address, data, options);
  }

  override async rename(from: string, to: string): Promise<void> {
    if (scenario === 'kill-before-rename') die();
    await super.rename(from, to);
    if (scenario === 'kill-after-rename') die();
  }
}

const roots = [{ name: nodePath.basename(workspace), address: workspace, localPath: workspace }];
const policy = new Policy([]);
const session = assemble({
  ...testEnvironment(spool),
  fs: new DyingFs(),
  roots: () => roots,
  gate: async () => ({ allow: true, decidedBy: 'test' }),
  policy: () => policy,
  clock: { now: () => Date.now() },
  log: new MemoryLog(),
  spoolDir: spool,
});

async function step(run: () => Promise<unknown>): Promise<void> {
  try {
    report({ step: 'saved', result: await run() });
  } catch (e) {
    if (!isSandboxError(e)) throw e;
    report({ step: 'failed', code: e.code, message: e.message });
  }
}

async function listMedia(): Promise<void> {
  const listed = await runTool(session, TOOLS.list_media, {});
  const media = listed.result.media;
  report({ step: 'listed', media: media.map((m) => ({ media_id: m.media_id, path: m.path })) });
}

await runTool(session, TOOLS.stage_file, { path: file });
const patched = await runTool(session, TOOLS.media_apply_patch, {
  media_id: 'm1',
  patch: { find: 'header v1', replace: 'header v2' },
});
const mediaId = patched.result.media_id;
report({ step: 'staged', media_id: mediaId });

if (scenario === 'unreadable-file' || scenario === 'unreadable-folder') {
  // Between stage and save the file (or its folder) loses every permission bit. This process runs
  // without CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH, so the bits bind it even when it runs as root.
  const target = nodePath.join(workspace, scenario === 'unreadable-file' ? file : nodePath.dirname(file));
  chmodSync(target, 0o000);
  report({ step: 'saving' });
  await step(() => runTool(session, TOOLS.save_media, { media_id: mediaId }).then((o) => o.result));
  await listMedia();
  // The person fixes the permissions: the same media saves, since the disk still holds what it was staged from.
  chmodSync(target, scenario === 'unreadable-file' ? 0o644 : 0o755);
  await step(() => runTool(session, TOOLS.save_media, { media_id: mediaId }).then((o) => o.result));
  await listMedia();
} else {
  report({ step: 'saving' });
  await runTool(session, TOOLS.save_media, { media_id: mediaId });
  report({ step: 'saved', result: 'the process should have died' });
}
await session.dispose();
