import { after, test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawn, spawnSync } from 'node:child_process';
import {
  chmodSync,
  chownSync,
  linkSync,
  existsSync,
  mkdirSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  statSync,
  unlinkSync,
  writeFileSync,
} from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS } from '../../src/core/tools/index.ts';
import { session, tempDir, testSession, runTool } from './harness.ts';
import { FaultyFs, join, namesIn, rejectsWith } from './media-fixtures.ts';
import type { WriteOptions } from '../../src/core/ports.ts';
import type { Scenario, Step } from './hardening-faults-child.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

/**
 * Faults during a save: the process killed mid-write, the file changed under the media (deleted,
 * replaced by a folder, made unreadable), and a full disk. Each ends with the original intact and
 * the model told what happened; the staged edit is never lost with it. (media-save.test.ts covers
 * the faults simulated at the port: a failing rename, ENOSPC thrown by writeFile, EXDEV.)
 */

const CHILD = nodePath.join(import.meta.dirname, 'hardening-faults-child.ts');
let cases = 0;
after(() => console.log(`faults: ${cases} cases in all`));

/** A file big enough that a write is not one syscall: a header line the child patches, then numbered lines. */
function original(): Buffer {
  const lines = ['header v1'];
  for (let i = 0; i < 40_000; i++) lines.push(`original line ${String(i).padStart(5, '0')}`);
  return Buffer.from(lines.join('\n') + '\n');
}
const patchedOf = (bytes: Buffer): Buffer => Buffer.from(bytes.toString('utf8').replace('header v1', 'header v2'));

interface ChildRun {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  readonly steps: Step[];
  readonly stderr: string;
}

/** Runs one scenario of hardening-faults-child.ts, optionally under a command prefix (setpriv). */
function runChild(
  scenario: Scenario,
  workspace: string,
  spool: string,
  file: string,
  prefix: string[] = [],
): Promise<ChildRun> {
  const argv = [
    ...prefix,
    process.execPath,
    '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
    CHILD,
    scenario,
    workspace,
    spool,
    file,
  ];
  return new Promise((resolve, reject) => {
    const child = spawn(argv[0]!, argv.slice(1), { stdio: ['ignore', 'pipe', 'pipe'] });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (chunk: Buffer) => {
      stdout += chunk.toString();
    });
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    child.on('error', reject);
    child.on('close', (code, signal) =>
      resolve({
        code,
        signal,
        stderr,
        steps: stdout
          .split('\n')
          .filter(Boolean)
          .map((l) => JSON.parse(l) as Step),
      }),
    );
  });
}

const TEMP = /^\.big\.txt\.wt-save-[0-9a-f]{12}\.tmp$/;

test('fault: the process is SIGKILLed in the middle of a save (during the temp write, before the rename, right after it): the file is always the old or the new bytes, never a mix', async () => {
  const original0 = original();
  const expectations: { scenario: Scenario; file: Buffer; temp: Buffer | undefined }[] = [
    {
      scenario: 'kill-mid-temp-write',
      file: original0,
      temp: patchedOf(original0).subarray(0, Math.floor(original0.byteLength / 2)),
    },
    { scenario: 'kill-before-rename', file: original0, temp: patchedOf(original0) },
    { scenario: 'kill-after-rename', file: patchedOf(original0), temp: undefined },
  ];
  await Promise.all(
    expectations.map(async ({ scenario, file, temp }) => {
      const ws = tempDir('wt-kill-');
      const spool = tempDir('wt-kill-spool-');
      try {
        writeFileSync(join(ws.path, 'big.txt'), original0);
        chmodSync(join(ws.path, 'big.txt'), 0o640);
        const run = await runChild(scenario, ws.path, spool.path, 'big.txt');
        cases++;
        assert.deepEqual(
          { code: run.code, signal: run.signal },
          { code: null, signal: 'SIGKILL' },
          `${scenario}: ${run.stderr}`,
        );
        assert.deepEqual(run.steps, [{ step: 'staged', media_id: 'm2' }, { step: 'saving' }], scenario);
        assert.ok(
          readFileSync(join(ws.path, 'big.txt')).equals(file),
          `${scenario}: big.txt holds neither exactly the old nor exactly the new bytes`,
        );
        assert.equal(statSync(join(ws.path, 'big.txt')).mode & 0o777, 0o640, scenario);
        const names = namesIn(ws.path);
        if (temp === undefined) {
          assert.deepEqual(names, ['big.txt'], scenario);
        } else {
          // What a crash leaves is a hidden, recognisable temp file next to the untouched original.
          assert.equal(names.length, 2, scenario);
          assert.match(names[0]!, TEMP, scenario);
          assert.ok(readFileSync(join(ws.path, names[0]!)).equals(temp), `${scenario}: temp file content`);
        }
        // A new session (the editor restarted) stages what is on disk and saves over it normally.
        const t = testSession({ overrides: { roots: () => [{ name: 'ws', address: ws.path, localPath: ws.path }] } });
        try {
          const staged = await runTool(t.session, TOOLS.stage_file, { path: 'big.txt' });
          assert.equal(staged.result.bytes, file.byteLength);
          await runTool(t.session, TOOLS.media_apply_patch, {
            media_id: 'm1',
            patch: { find: 'original line 00000', replace: 'after restart' },
          });
          const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
          assert.equal(saved.result.method, 'rename');
          assert.ok(
            readFileSync(join(ws.path, 'big.txt')).equals(
              Buffer.from(file.toString('utf8').replace('original line 00000', 'after restart')),
            ),
          );
        } finally {
          await t.dispose();
        }
      } finally {
        ws.dispose();
        spool.dispose();
      }
    }),
  );
  console.log(`faults: ${expectations.length} SIGKILL points`);
});

test('fault: the file is deleted between stage and save: a narrated conflict, and the edit survives in its media and saves to a new path', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'gone.txt'), 'header v1\nbody\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'gone.txt' });
  await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'header v1', replace: 'header v2' },
  });
  unlinkSync(join(t.root, 'gone.txt'));
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    'E_SANDBOX_CONFLICT',
    '"gone.txt" was deleted after m2 was staged; saving would recreate it. If it should exist again, stage it with stage_file and content, then save that media.',
  );
  cases++;
  assert.deepEqual(namesIn(t.root), []);
  const listed = await runTool(t.session, TOOLS.list_media, {});
  assert.deepEqual(
    listed.result.media.map((m) => [m.media_id, m.path]),
    [['m2', 'gone.txt']],
  );
  assert.equal(Buffer.from(t.session.media.get('m2').bytes).toString('utf8'), 'header v2\nbody\n');
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm2', path: 'restored/gone.txt' });
  assert.deepEqual(saved.result, {
    media_id: 'm2',
    path: 'restored/gone.txt',
    added: 2,
    removed: 0,
    bytes: 15,
    created: true,
    method: 'rename',
    stale: [],
    save_id: 's1',
  });
  assert.equal(readFileSync(join(t.root, 'restored', 'gone.txt'), 'utf8'), 'header v2\nbody\n');
});

test('fault: the file is replaced by a folder between stage and save: narrated, the folder and its contents untouched, the media kept', async (tc) => {
  const t = session(tc);
  writeFileSync(join(t.root, 'thing'), 'header v1\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'thing' });
  await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: { find: 'header v1', replace: 'header v2' },
  });
  unlinkSync(join(t.root, 'thing'));
  mkdirSync(join(t.root, 'thing'));
  writeFileSync(join(t.root, 'thing', 'inner.txt'), 'inner\n');
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
    'E_SANDBOX_INVALID_INPUT',
    '"thing" is a directory, not a file; save_media cannot replace it. Save to a file path instead.',
  );
  cases++;
  assert.deepEqual(namesIn(t.root), ['thing']);
  assert.deepEqual(namesIn(join(t.root, 'thing')), ['inner.txt']);
  assert.equal(readFileSync(join(t.root, 'thing', 'inner.txt'), 'utf8'), 'inner\n');
  assert.equal(Buffer.from(t.session.media.get('m2').bytes).toString('utf8'), 'header v2\n');
  const listed = await runTool(t.session, TOOLS.list_media, {});
  assert.deepEqual(
    listed.result.media.map((m) => m.media_id),
    ['m2'],
  );
  // A folder put where the file's folder was is refused the same way, before anything is created in it.
  writeFileSync(join(t.root, 'leaf.txt'), 'header v1\n');
  await runTool(t.session, TOOLS.stage_file, { path: 'leaf.txt' });
  rmSync(join(t.root, 'leaf.txt'));
  mkdirSync(join(t.root, 'leaf.txt', 'deeper'), { recursive: true });
  await rejectsWith(
    runTool(t.session, TOOLS.save_media, { media_id: 'm3' }),
    'E_SANDBOX_INVALID_INPUT',
    '"leaf.txt" is a directory, not a file; save_media cannot replace it. Save to a file path instead.',
  );
  cases++;
  assert.deepEqual(namesIn(join(t.root, 'leaf.txt')), ['deeper']);
});

/**
 * The tests run as root, which reads a chmod 000 file anyway (CAP_DAC_OVERRIDE). The scenario runs
 * in a child process started through setpriv with CAP_DAC_OVERRIDE and CAP_DAC_READ_SEARCH dropped
 * from its bounding set, so the permission bits bind it as they bind a normal user.
 */
function withoutDacOverride(): string[] | undefined {
  if (process.getuid?.() !== 0) return [];
  const setpriv = spawnSync('sh', ['-c', 'command -v setpriv'], { encoding: 'utf8' }).stdout.trim();
  if (!setpriv) return undefined;
  const prefix = [setpriv, '--inh-caps=-all', '--bounding-set=-dac_override,-dac_read_search', '--'];
  const dir = tempDir('wt-probe-');
  try {
    writeFileSync(join(dir.path, 'x'), 'x');
    chmodSync(join(dir.path, 'x'), 0);
    const probe = spawnSync(prefix[0]!, [
      ...prefix.slice(1),
      process.execPath,
      '-e',
      `require('fs').readFileSync(${JSON.stringify(join(dir.path, 'x'))})`,
    ]);
    return probe.status !== 0 && /EACCES/.test(probe.stderr.toString()) ? prefix : undefined;
  } finally {
    dir.dispose();
  }
}

const unprivileged = withoutDacOverride();

test(
  'fault: the file (or its folder) is made unreadable (chmod 000) between stage and save: narrated E_SANDBOX_IO, the original and the media kept, and the same media saves once permissions are back',
  { skip: unprivileged === undefined ? 'running as root and setpriv cannot drop CAP_DAC_OVERRIDE here' : false },
  async () => {
    const original0 = Buffer.from('header v1\nbody\n');
    const runs = await Promise.all(
      (['unreadable-file', 'unreadable-folder'] as const).map(async (scenario) => {
        const ws = tempDir('wt-perm-');
        const spool = tempDir('wt-perm-spool-');
        try {
          mkdirSync(join(ws.path, 'sub'));
          writeFileSync(join(ws.path, 'sub', 'big.txt'), original0);
          const run = await runChild(scenario, ws.path, spool.path, 'sub/big.txt', unprivileged);
          cases++;
          return {
            scenario,
            run,
            after: readFileSync(join(ws.path, 'sub', 'big.txt'), 'utf8'),
            names: namesIn(join(ws.path, 'sub')),
          };
        } finally {
          chmodSync(join(ws.path, 'sub'), 0o755);
          ws.dispose();
          spool.dispose();
        }
      }),
    );
    const saved = {
      step: 'saved',
      result: {
        media_id: 'm2',
        path: 'sub/big.txt',
        added: 1,
        removed: 1,
        bytes: 15,
        created: false,
        method: 'rename',
        stale: [],
        save_id: 's1',
      },
    };
    const [file, folder] = runs;
    assert.deepEqual({ code: file!.run.code, stderr: file!.run.stderr }, { code: 0, stderr: '' });
    assert.deepEqual(file!.run.steps, [
      { step: 'staged', media_id: 'm2' },
      { step: 'saving' },
      {
        step: 'failed',
        code: 'E_SANDBOX_IO',
        message:
          'Permission denied while trying to read "sub/big.txt". The file is not readable or writable by the editor; ask the user to check its permissions.',
      },
      { step: 'listed', media: [{ media_id: 'm2', path: 'sub/big.txt' }] },
      saved,
      { step: 'listed', media: [] },
    ]);
    assert.deepEqual({ code: folder!.run.code, stderr: folder!.run.stderr }, { code: 0, stderr: '' });
    assert.deepEqual(folder!.run.steps, [
      { step: 'staged', media_id: 'm2' },
      { step: 'saving' },
      {
        step: 'failed',
        code: 'E_SANDBOX_IO',
        message:
          'Permission denied while trying to inspect "sub/big.txt". The file is not readable or writable by the editor; ask the user to check its permissions.',
      },
      { step: 'listed', media: [{ media_id: 'm2', path: 'sub/big.txt' }] },
      saved,
      { step: 'listed', media: [] },
    ]);
    for (const { after, names } of runs) {
      assert.equal(after, 'header v2\nbody\n');
      assert.deepEqual(names, ['big.txt']);
    }
  },
);

/** A 1 MiB tmpfs, when this process may mount one (root with CAP_SYS_ADMIN); undefined otherwise. */
function smallDisk(): { path: string; free(): number; dispose(): void } | undefined {
  if (process.getuid?.() !== 0 || process.platform !== 'linux') return undefined;
  const dir = tempDir('wt-tmpfs-');
  const mounted = spawnSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0755', 'wt-full-disk', dir.path]);
  if (mounted.status !== 0) {
    dir.dispose();
    return undefined;
  }
  return {
    path: dir.path,
    free: () => {
      const s = statfsSync(dir.path);
      return s.bavail * s.bsize;
    },
    dispose: () => {
      execFileSync('umount', [dir.path]);
      dir.dispose();
    },
  };
}

const probeDisk = smallDisk();
probeDisk?.dispose();

test(
  'fault: the disk fills up (a real 1 MiB tmpfs): saves fail with a narrated E_SANDBOX_IO, the original intact, no temp file left, and the space given back',
  {
    skip:
      probeDisk === undefined
        ? 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN); media-save.test.ts simulates ENOSPC at the port'
        : false,
  },
  async () => {
    const disk = smallDisk()!;
    const t = testSession({ overrides: { roots: () => [{ name: 'ws', address: disk.path, localPath: disk.path }] } });
    try {
      // Long lines: the save counts +/- lines with a diff, which is slow for thousands of changed lines.
      const kib = (c: string, n: number): string => `${c.repeat(1023)}\n`.repeat(n);
      const old = Buffer.from(kib('a', 300));
      writeFileSync(join(disk.path, 'data.txt'), old);
      writeFileSync(join(disk.path, 'filler.bin'), Buffer.alloc(300 * 1024));
      const free = disk.free();
      // The replacement (500 KiB) does not fit next to the original and the filler (600 KiB) in 1 MiB.
      await runTool(t.session, TOOLS.stage_file, { path: 'data.txt', content: kib('b', 500) });
      await rejectsWith(
        runTool(t.session, TOOLS.save_media, { media_id: 'm1' }),
        'E_SANDBOX_IO',
        'The disk is full while trying to save "data.txt"; nothing was changed. Ask the user to free space, then retry.',
      );
      cases++;
      assert.ok(readFileSync(join(disk.path, 'data.txt')).equals(old));
      assert.deepEqual(namesIn(disk.path), ['data.txt', 'filler.bin']);
      assert.equal(disk.free(), free);
      // A new file in a new folder: the folder is made, but no half-written file is left in it.
      await runTool(t.session, TOOLS.stage_file, { path: 'new/big.txt', content: 'c'.repeat(600 * 1024) });
      await rejectsWith(
        runTool(t.session, TOOLS.save_media, { media_id: 'm2' }),
        'E_SANDBOX_IO',
        'The disk is full while trying to save "new/big.txt"; nothing was changed. Ask the user to free space, then retry.',
      );
      cases++;
      assert.deepEqual(namesIn(join(disk.path, 'new')), []);
      assert.ok(readFileSync(join(disk.path, 'data.txt')).equals(old));
      assert.equal(disk.free(), free);
      // Both edits are still staged; once the person frees space the first one saves.
      const listed = await runTool(t.session, TOOLS.list_media, {});
      assert.deepEqual(
        listed.result.media.map((m) => m.media_id),
        ['m1', 'm2'],
      );
      unlinkSync(join(disk.path, 'filler.bin'));
      const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm1' });
      assert.deepEqual(saved.result, {
        media_id: 'm1',
        path: 'data.txt',
        added: 500,
        removed: 300,
        bytes: 500 * 1024,
        created: false,
        method: 'rename',
        stale: [],
        save_id: 's1',
      });
      assert.equal(readFileSync(join(disk.path, 'data.txt'), 'utf8'), kib('b', 500));
    } finally {
      await t.dispose();
      disk.dispose();
    }
    assert.equal(existsSync(disk.path), false);
  },
);

test(
  'fault: the artifact spool fills its disk while a file is opened: narrated E_SANDBOX_IO, no partial snapshot left, smaller files still open',
  { skip: probeDisk === undefined ? 'cannot mount a tmpfs here (needs root with CAP_SYS_ADMIN)' : false },
  async () => {
    const disk = smallDisk()!;
    const t = testSession({ overrides: { spoolDir: disk.path } });
    try {
      writeFileSync(join(t.root, 'huge.log'), Buffer.alloc(3 * 1024 * 1024, 'log line\n'));
      writeFileSync(join(t.root, 'small.txt'), 'small\n');
      await rejectsWith(
        runTool(t.session, TOOLS.open_file, { path: 'huge.log' }),
        'E_SANDBOX_IO',
        'The disk is full while trying to copy "huge.log"; nothing was changed. Ask the user to free space, then retry.',
      );
      cases++;
      const spooled = (dir: string): string[] =>
        readdirSync(dir, { recursive: true, withFileTypes: true })
          .filter((e) => e.isFile())
          .map((e) => e.name);
      assert.deepEqual(spooled(disk.path), []);
      const opened = await runTool(t.session, TOOLS.open_file, { path: 'small.txt' });
      assert.equal(oneFile(opened.result).lines, 1);
      assert.deepEqual(spooled(disk.path), ['2.spool']);
    } finally {
      await t.dispose();
      disk.dispose();
    }
  },
);

/** The real node fs, recording the permission bits of each save's temp file the moment its write returns. */
class TempModeObserver extends FaultyFs {
  readonly tempModes: number[] = [];
  override async writeFile(address: string, data: Uint8Array, options?: WriteOptions): Promise<void> {
    await super.writeFile(address, data, options);
    if (/\.wt-save-[0-9a-f]{12}\.tmp$/.test(address)) this.tempModes.push(statSync(address).mode & 0o7777);
  }
}

test('attack: saving a 0600 file through a temp file that is world-readable until it is chmod-ed', async () => {
  const fs = new TempModeObserver();
  const t = testSession({ fs });
  const umask = process.umask(0o022);
  try {
    const file = nodePath.join(t.root, 'private.key.txt');
    writeFileSync(file, 'v0\n');
    chmodSync(file, 0o600);
    for (let i = 1; i <= 20; i++) {
      const staged = await runTool(t.session, TOOLS.stage_file, { path: 'private.key.txt', content: `v${i}\n` });
      await runTool(t.session, TOOLS.save_media, { media_id: staged.result.media_id });
    }
    assert.equal(fs.tempModes.length, 20);
    assert.deepEqual(
      fs.tempModes.filter((m) => (m & 0o077) !== 0),
      [],
      'a temp file holding the new bytes was readable by others',
    );
    assert.equal(statSync(file).mode & 0o7777, 0o600);
    assert.equal(readFileSync(file, 'utf8'), 'v20\n');
  } finally {
    process.umask(umask);
    await t.dispose();
  }
});

test('attack: saving a setuid or setgid file keeps the bit on the new bytes', async (tc) => {
  const t = session(tc);
  for (const [name, mode] of [
    ['suid.sh', 0o4755],
    ['sgid.sh', 0o2755],
  ] as const) {
    const file = nodePath.join(t.root, name);
    writeFileSync(file, '#!/bin/sh\n');
    chmodSync(file, mode);
    const staged = await runTool(t.session, TOOLS.stage_file, { path: name, content: '#!/bin/sh\nid\n' });
    await runTool(t.session, TOOLS.save_media, { media_id: staged.result.media_id });
    assert.equal(statSync(file).mode & 0o7777, 0o755, name);
  }
});

const canChown = process.geteuid?.() === 0;
test(
  "attack: saving another user's file by rename makes the saver its owner",
  { skip: canChown ? false : 'needs root to give the file another owner' },
  async (tc) => {
    const t = session(tc);
    const file = nodePath.join(t.root, 'theirs.txt');
    writeFileSync(file, 'old\n');
    chownSync(file, 1000, 1000);
    const staged = await runTool(t.session, TOOLS.stage_file, { path: 'theirs.txt', content: 'new\n' });
    const saved = await runTool(t.session, TOOLS.save_media, { media_id: staged.result.media_id });
    const s = statSync(file);
    assert.deepEqual([s.uid, s.gid], [1000, 1000], 'the owner changed');
    assert.equal(readFileSync(file, 'utf8'), 'new\n');
    assert.equal(saved.result.method, 'direct');
    assert.match(saved.text, /in place.*another owner or group \(1000:1000\)/s);
  },
);

test('attack: saving a file with a second hard link splits the link (the other name keeps the old bytes)', async (tc) => {
  const t = session(tc);
  const file = nodePath.join(t.root, 'config.txt');
  writeFileSync(file, 'old\n');
  linkSync(file, nodePath.join(t.root, 'alias.txt'));
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'config.txt' });
  assert.match(staged.text, /2 names \(hard links\)/);
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: staged.result.media_id,
    patch: { find: 'old', replace: 'new' },
  });
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: patched.result.media_id });
  assert.equal(readFileSync(nodePath.join(t.root, 'alias.txt'), 'utf8'), 'new\n', 'the hard link was split');
  assert.equal(statSync(file).nlink, 2);
  assert.deepEqual(
    [saved.result.method, saved.result.in_place_because],
    ['direct', 'the file has 2 names (hard links), which a rename would split'],
  );
});
