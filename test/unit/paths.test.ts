import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS } from '../../src/core/tools/index.ts';
import { SandboxError } from '../../src/core/errors.ts';
import { normalizeModelPath, resolveOnDisk, isWithin, type GatedPath } from '../../src/core/paths.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import { hostileLinks, tempDir, testSession, type TestSession, runTool } from './harness.ts';

let t: TestSession;

/** The path as if the gate had approved it: these tests drive the translation step alone. */
const approved = (raw: string): GatedPath => normalizeModelPath(raw, t.session.roots) as GatedPath;
let outside: { path: string; dispose(): void };

before(() => {
  t = testSession();
  outside = tempDir('wt-outside-');
  writeFileSync(nodePath.join(outside.path, 'secret.txt'), 'OUTSIDE-SENTINEL');
  mkdirSync(nodePath.join(t.root, 'dir2'));
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'a');
  hostileLinks(t.root, outside.path, nodePath.join(outside.path, 'secret.txt'));
  symlinkSync('../dir2', nodePath.join(t.root, 'dir', 'inside-link'));
});
after(async () => {
  await t.dispose();
  outside.dispose();
});

const hostile: readonly string[] = [
  // traversal
  '..',
  '../',
  '../..',
  '../etc/passwd',
  'dir/../../etc/passwd',
  'dir/..',
  './../a.txt',
  'dir/./../../x',
  'a/b/../../../c',
  '.././.././etc',
  // absolute
  '/etc/passwd',
  '/',
  '/tmp',
  '/root/.ssh/id_rsa',
  '//etc/passwd',
  // symlinks
  'link-file',
  'link-dir',
  'link-dir/secret.txt',
  'dir/rel-link',
  'dir/rel-link/secret.txt',
  'dangling',
  'dangling/child',
  'loop1',
  'loop1/x',
  // NUL and control characters
  'a.txt\0.png',
  '\0',
  'dir/\0/x',
  'a\u0007b',
  'dir\nname',
  // home
  '~',
  '~/',
  '~/.ssh/id_rsa',
  '~root/.bashrc',
  // Windows forms
  'C:\\Windows\\System32',
  'c:/windows',
  'C:',
  '\\\\server\\share\\file',
  '\\\\?\\C:\\x',
  'dir\\..\\..\\x',
  'CON',
  'dir/NUL.txt',
  'aux',
  'COM1.log',
  'LPT9',
  // percent-encoded
  '%2e%2e/etc/passwd',
  '%2E%2E%2Fetc',
  'dir%2f..%2f..',
  '..%2fetc',
  '%252e%252e/x',
  'a%00.txt',
  '%5c..%5c',
  // look-alikes, invisible and normalization forms
  '\u2024\u2024/etc',
  '\uFF0E\uFF0E/etc',
  'dir\u2215..\u2215x',
  '\uFE52\uFE52/x',
  'a\u202Etxt.exe',
  'a\u200Bb',
  '\uFF0Fetc\uFF0Fpasswd',
  // trailing dots and spaces, URIs
  'a.txt.',
  'dir ',
  'dir./x',
  'file:///etc/passwd',
  'vscode-remote://host/etc',
  'x'.repeat(5000),
];

test(`${hostile.length} hostile paths are each refused with a narrated error`, async () => {
  assert.ok(hostile.length >= 40);
  for (const path of hostile) {
    await assert.rejects(
      runTool(t.session, TOOLS.list_directory, { path }),
      (e: unknown) => {
        assert.ok(e instanceof SandboxError, `${JSON.stringify(path)} threw ${String(e)}`);
        assert.equal(e.code, 'E_SANDBOX_REFUSED', `${JSON.stringify(path)}: ${e.message}`);
        assert.match(e.message, /was refused: .+\. (Give|Use|Only|Write)/, `${JSON.stringify(path)}: ${e.message}`);
        assert.doesNotMatch(e.message, /OUTSIDE-SENTINEL/);
        return true;
      },
      JSON.stringify(path),
    );
  }
});

test('writes refuse any symlinked component, even one that stays inside the workspace', async () => {
  const fs = new NodeFs();
  const path = approved('dir/inside-link/new.txt');
  await assert.rejects(
    resolveOnDisk(path, fs, { forWrite: true }),
    /"dir\/inside-link" is a symbolic link, and writes never go through links/,
  );
  const read = await resolveOnDisk(approved('dir/inside-link'), fs);
  assert.equal(read.realRel, 'dir2');
});

test('ordinary paths are accepted and normalized', () => {
  const roots = t.session.roots;
  assert.equal(normalizeModelPath('dir', roots).rel, 'dir');
  assert.equal(normalizeModelPath('./dir/', roots).rel, 'dir');
  assert.equal(normalizeModelPath('dir//a.txt', roots).rel, 'dir/a.txt');
  assert.equal(normalizeModelPath(nodePath.join(t.root, 'dir', 'a.txt'), roots).rel, 'dir/a.txt');
  assert.equal(normalizeModelPath('.', roots).display, '.');
  assert.equal(normalizeModelPath('naïve café.md', roots).rel, 'naïve café.md');
  assert.equal(normalizeModelPath('.env.local', roots).rel, '.env.local');
});

test('a new file path resolves to not-existing, with its real location', async () => {
  const resolved = await resolveOnDisk(approved('dir/sub/new.txt'), new NodeFs(), { forWrite: true });
  assert.equal(resolved.exists, false);
  assert.equal(resolved.realRel, 'dir/sub/new.txt');
});

test('multi-root paths start with the folder name', () => {
  const roots = [
    { name: 'web', address: '/w/web', localPath: '/w/web' },
    { name: 'api', address: '/w/api', localPath: '/w/api' },
  ];
  const p = normalizeModelPath('api/src/x.ts', roots);
  assert.equal(p.root.name, 'api');
  assert.equal(p.rel, 'src/x.ts');
  assert.equal(p.display, 'api/src/x.ts');
  assert.equal(normalizeModelPath('/w/web/a', roots).display, 'web/a');
  assert.throws(
    () => normalizeModelPath('src/x.ts', roots),
    /does not start with a workspace folder name.*"web", "api"/,
  );
});

test('isWithin compares whole segments', () => {
  assert.equal(isWithin('/w/root', '/w/root/a'), true);
  assert.equal(isWithin('/w/root', '/w/root'), true);
  assert.equal(isWithin('/w/root', '/w/root-evil/a'), false);
});
