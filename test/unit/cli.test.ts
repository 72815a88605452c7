import { test, before } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { tempDir } from './harness.ts';

const CLI = nodePath.resolve('dist/cli.js');

before(() => {
  if (!existsSync(CLI)) assert.equal(spawnSync(process.execPath, ['esbuild.mjs'], { stdio: 'inherit' }).status, 0);
});

function cli(args: string[], stdin?: string): { status: number | null; stdout: string; stderr: string } {
  const r = spawnSync(process.execPath, [CLI, ...args], { input: stdin ?? '', encoding: 'utf8', timeout: 30_000 });
  return { status: r.status, stdout: r.stdout, stderr: r.stderr };
}

test('without --gate the CLI refuses to start and names the flag', () => {
  const r = cli(['list_directory', '{}']);
  assert.notEqual(r.status, 0);
  assert.match(r.stderr, /--gate is required: pass --gate approve or --gate deny/);
  assert.equal(r.stdout, '');
});

test('with --gate deny every call is E_SANDBOX_REFUSED', () => {
  const ws = tempDir();
  try {
    for (const [tool, input] of [['list_directory', '{}'], ['open_file', '{"path":"a.txt"}'], ['stage_file', '{"path":"a.txt","content":"x"}']] as const) {
      const r = cli(['--root', ws.path, '--gate', 'deny', tool, input]);
      assert.equal(r.status, 1);
      const out = JSON.parse(r.stdout) as { error: { code: string; message: string } };
      assert.equal(out.error.code, 'E_SANDBOX_REFUSED', tool);
      assert.match(out.error.message, /--gate deny/);
    }
  } finally { ws.dispose(); }
});

test('with --gate approve a call prints its result as JSON', () => {
  const ws = tempDir();
  try {
    writeFileSync(nodePath.join(ws.path, 'a.txt'), 'abc');
    const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{}']);
    assert.equal(r.status, 0, r.stderr);
    assert.deepEqual(JSON.parse(r.stdout), { result: [{ path: '.', entries: [{ path: 'a.txt', type: 'file', depth: 1, size: 3 }] }] });
  } finally { ws.dispose(); }
});

test('secrets are refused under --gate approve unless --allow-secrets', () => {
  const ws = tempDir();
  try {
    mkdirSync(nodePath.join(ws.path, '.ssh'));
    const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{"path":".ssh"}']);
    assert.equal(r.status, 1);
    assert.match(r.stdout, /matches the secret rule \\"\*\*\/\.ssh\/\*\*\\".*--allow-secrets/);
    const allowed = cli(['--root', ws.path, '--gate', 'approve', '--allow-secrets', 'list_directory', '{"path":".ssh"}']);
    assert.equal(allowed.status, 0, allowed.stdout);
  } finally { ws.dispose(); }
});

test('a session reads JSON lines and answers one line per call; failures are narrated', () => {
  const ws = tempDir();
  try {
    writeFileSync(nodePath.join(ws.path, 'a.txt'), 'abc');
    const stdin = [
      '{"tool":"list_directory","input":{}}',
      'not json',
      '{"tool":"nope","input":{}}',
      '{"tool":"list_directory","input":{"path":"../etc"}}',
      '{"tool":"list_directory","input":{"max_depth":0}}',
    ].join('\n');
    const r = cli(['--root', ws.path, '--gate', 'approve', '--audit'], stdin);
    assert.equal(r.status, 1);
    const lines = r.stdout.trim().split('\n').map((l) => JSON.parse(l) as { result?: unknown; error?: { code: string } });
    assert.equal(lines.length, 5);
    assert.ok(lines[0]!.result);
    assert.deepEqual(lines.slice(1).map((l) => l.error?.code), ['E_SANDBOX_INVALID_INPUT', 'E_SANDBOX_INVALID_INPUT', 'E_SANDBOX_REFUSED', 'E_SANDBOX_INVALID_INPUT']);
    assert.equal(r.stderr.trim().split('\n').filter((l) => l.startsWith('{"audit"')).length, 3);
  } finally { ws.dispose(); }
});

test('bad JSON arguments and unknown options are narrated', () => {
  const ws = tempDir();
  try {
    const r = cli(['--root', ws.path, '--gate', 'approve', 'list_directory', '{oops']);
    assert.equal(r.status, 1);
    assert.match(JSON.parse(r.stdout).error.message, /not valid JSON/);
    const u = cli(['--root', ws.path, '--gate', 'maybe', 'list_directory', '{}']);
    assert.equal(u.status, 2);
    assert.match(u.stderr, /--gate must be approve or deny, not "maybe"/);
  } finally { ws.dispose(); }
});
