import { test } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { chmodSync, copyFileSync, linkSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';

const CANARY = 'CANARY-0c4e9d2f';
/** An ordinary user's id, for root to run the child as (file permissions mean nothing to root). */
const NOBODY = 65534;

/** Runs the child scenarios as an ordinary user; resolves with their results. */
async function childResults(t: import('node:test').TestContext): Promise<Record<string, Record<string, unknown>>> {
  const child = nodePath.join(import.meta.dirname, 'shell-as-user.child.ts');
  let node = process.execPath;
  const asRoot = process.getuid?.() === 0;
  if (asRoot) {
    // Node may live where an ordinary user cannot reach it (/root/.cache): a link to it in a folder they can.
    const dir = mkdtempSync(nodePath.join(tmpdir(), 'wt-user-node-'));
    chmodSync(dir, 0o755);
    t.after(() => rmSync(dir, { recursive: true, force: true }));
    node = nodePath.join(dir, 'node');
    try {
      linkSync(process.execPath, node);
    } catch {
      copyFileSync(process.execPath, node);
    }
  }
  const proc = spawn(node, ['--disable-warning=MODULE_TYPELESS_PACKAGE_JSON', child, CANARY], {
    cwd: nodePath.resolve(import.meta.dirname, '..', '..'),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { PATH: process.env['PATH'] ?? '/usr/bin:/bin', LANG: 'C.UTF-8' },
    ...(asRoot ? { uid: NOBODY, gid: NOBODY } : {}),
  });
  t.after(() => {
    if (proc.exitCode === null) proc.kill('SIGKILL');
  });
  const out: Buffer[] = [];
  const err: Buffer[] = [];
  proc.stdout.on('data', (c: Buffer) => out.push(c));
  proc.stderr.on('data', (c: Buffer) => err.push(c));
  const code = await new Promise<number | null>((resolve) => proc.once('close', resolve));
  assert.equal(code, 0, Buffer.concat(err).toString('utf8'));
  return JSON.parse(Buffer.concat(out).toString('utf8').trim().split('\n').pop()!) as Record<
    string,
    Record<string, unknown>
  >;
}

test(
  'attack, as an ordinary user: a chmod hides neither secrets nor protected writes; a listing that cannot see a folder runs nothing (finding 2)',
  { timeout: 180_000 },
  async (t) => {
    const r = await childResults(t);
    const hide = r['hideSecrets']!;
    assert.doesNotMatch(String(hide['second']), new RegExp(CANARY), JSON.stringify(hide));
    assert.equal(hide['modeAfter'], hide['modeBefore'], "a folder's mode change reached the disk");
    const writes = r['hideProtectedWrites']!;
    assert.equal(writes['packageJson'], '{"name":"fixture"}\n', JSON.stringify(writes));
    assert.equal(writes['workflow'], false, JSON.stringify(writes));
    assert.equal(writes['makefile'], false, JSON.stringify(writes));
    assert.match(String(writes['second']), /staged for review, NOT on disk: [^\n]*package\.json/);
    const locked = r['unreadableFolder']!;
    assert.match(
      String(locked['text']),
      /ran nothing: the workspace could not be listed whole[\s\S]*locked/,
      JSON.stringify(locked),
    );
    assert.doesNotMatch(String(locked['text']), /^ran$/m);
  },
);
