import { test, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readdirSync, readFileSync, statSync, symlinkSync, writeFileSync, renameSync, rmSync } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS } from '../../src/core/tools/index.ts';
import type { ToolName } from '../../src/core/tools/names.ts';
import { SandboxError } from '../../src/core/errors.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { locateRipgrep } from '../../src/core/search/ripgrep-binary.ts';
import { hostileLinks, tempDir, testSession, type TestSession } from './harness.ts';

const SENTINEL = 'OUTSIDE-SENTINEL-5b1e';
let t: TestSession;
let outside: { path: string; dispose(): void };

/** Every file under a folder with its bytes, to prove nothing outside the root changed. */
function snapshot(dir: string): Map<string, string> {
  const out = new Map<string, string>();
  const walk = (d: string): void => {
    for (const name of readdirSync(d)) {
      const full = nodePath.join(d, name);
      const s = statSync(full, { throwIfNoEntry: false });
      if (s?.isDirectory()) walk(full); else out.set(full, s ? readFileSync(full, 'utf8') : '(dangling)');
    }
  };
  walk(dir);
  return out;
}

before(() => {
  const rg = locateRipgrep();
  assert.ok(rg);
  t = testSession({ overrides: { search: createRipgrepSearch({ rgPath: rg.path }) } });
  outside = tempDir('wt-outside-');
  writeFileSync(nodePath.join(outside.path, 'secret.txt'), SENTINEL);
  mkdirSync(nodePath.join(outside.path, 'sub'));
  writeFileSync(nodePath.join(t.root, 'a.txt'), 'inside\n');
  hostileLinks(t.root, outside.path, nodePath.join(outside.path, 'secret.txt'));
});
after(async () => { await t.dispose(); outside.dispose(); });

/** Generated hostile paths: each family in every position it can take. */
function hostilePaths(root: string, outsideDir: string): string[] {
  const paths = new Set<string>();
  const base = ['dir', 'sub', 'file.txt'];
  // traversal in every position, 1 to 4 levels
  for (let pos = 0; pos <= base.length; pos++) {
    for (let depth = 1; depth <= 4; depth++) {
      const parts = [...base];
      parts.splice(pos, 0, ...Array<string>(depth).fill('..'));
      paths.add(parts.join('/'));
      paths.add('./' + parts.join('/./'));
    }
  }
  // absolute
  for (const p of ['/etc/passwd', '/', '/tmp', outsideDir, `${outsideDir}/secret.txt`, `${root}-evil/x`, `${root}/../x`, `${root}/dir/../../x`, '//etc/passwd', '///x']) paths.add(p);
  // symlinks
  for (const p of ['link-file', 'link-dir', 'link-dir/secret.txt', 'link-dir/sub', 'link-dir/new.txt', 'dir/rel-link', 'dir/rel-link/secret.txt', 'dir/rel-link/new.txt', 'dangling', 'dangling/x', 'loop1', 'loop1/x', 'loop2/y']) paths.add(p);
  // NUL and control characters in each position
  for (const c of ['\0', '\n', '\r', '\t', '\u0007', '\u001b', '\u007f', '\u0085']) for (const p of [`${c}a.txt`, `a${c}.txt`, `a.txt${c}`, `dir/${c}`]) paths.add(p);
  // unicode look-alikes, invisible characters and normalization forms
  for (const c of ['\u2024', '\u2025', '\uFE52', '\uFF0E', '\u2215', '\u2044', '\uFF0F', '\uFF3C', '\u29F5', '\u3002', '\u200B', '\u200D', '\u202E', '\u2066', '\uFEFF', '\u00AD']) {
    paths.add(`${c}${c}/etc/passwd`);
    paths.add(`dir${c}..${c}x`);
    paths.add(`a${c}txt`);
  }
  // percent-encoding
  for (const p of ['%2e%2e/etc', '%2E%2E/etc', '%2e%2e%2fetc', '..%2f..%2fetc', '%252e%252e/x', 'dir%2f..%2f..', '%5c..%5cx', 'a%00.txt', '%c0%ae%c0%ae/etc', '%e0%80%ae/x']) paths.add(p);
  // home
  for (const p of ['~', '~/', '~/.ssh/id_rsa', '~root', '~root/.bashrc', '~+/x']) paths.add(p);
  // Windows drive, UNC and device names, trailing dots and spaces
  for (const p of ['C:\\Windows', 'c:/windows', 'C:', 'D:x', '\\\\server\\share', '\\\\?\\C:\\x', '\\\\.\\pipe\\x', 'dir\\..\\..\\x', '..\\x']) paths.add(p);
  for (const d of ['CON', 'con', 'PRN', 'AUX', 'NUL', 'COM1', 'COM9', 'LPT1', 'LPT9', 'CONIN$', 'CONOUT$']) { paths.add(d); paths.add(`dir/${d}.txt`); }
  for (const p of ['a.txt.', 'a.txt..', 'a.txt ', 'dir ', 'dir./x', 'dir /x', '. /x', '.. /x']) paths.add(p);
  // very long
  paths.add('x'.repeat(5000));
  paths.add(Array(2000).fill('d').join('/'));
  paths.add('y'.repeat(300));
  // URIs
  for (const p of ['file:///etc/passwd', 'vscode-remote://h/etc', 'staged:/x?m1', 'http://x/y']) paths.add(p);
  return [...paths];
}

/** Every tool that takes a path, with the input that puts the hostile path there. */
function casesFor(path: string, mediaId: string): [ToolName, object][] {
  return [
    ['open_file', { path }], ['open_json_file', { path }], ['open_markdown_file', { path }],
    ['list_directory', { path }], ['search_files', { pattern: 'x', path }], ['find_files', { glob: '*', path }],
    ['stage_file', { path }], ['stage_file', { path, content: 'pwned' }], ['save_media', { media_id: mediaId, path }],
  ];
}

test('hostile paths: every call on every path-taking tool ends in a narrated E_SANDBOX_* and nothing outside changes', async () => {
  const paths = hostilePaths(t.root, outside.path);
  const staged = await t.session.invoke(TOOLS.stage_file, { path: 'a.txt', content: 'pwned' });
  const mediaId = (staged.result as { media_id: string }).media_id;
  const before = snapshot(outside.path);
  let count = 0;
  const codes = new Map<string, number>();
  for (const path of paths) {
    const shown = JSON.stringify(path.length > 60 ? `${path.slice(0, 60)}…` : path);
    for (const [tool, input] of casesFor(path, mediaId)) {
      count++;
      try {
        const outcome = await t.session.invoke(TOOLS[tool], input);
        assert.fail(`${tool} ${shown} succeeded: ${outcome.text.slice(0, 200)}`);
      } catch (e) {
        assert.ok(e instanceof SandboxError, `${tool} ${shown} threw ${String(e).slice(0, 300)}`);
        assert.match(e.code, /^E_SANDBOX_/);
        assert.ok(e.message.length > 30, `${tool} ${shown}: unnarrated "${e.message}"`);
        assert.doesNotMatch(e.message, new RegExp(SENTINEL));
        codes.set(e.code, (codes.get(e.code) ?? 0) + 1);
      }
    }
  }
  assert.deepEqual(snapshot(outside.path), before);
  assert.equal(readFileSync(nodePath.join(t.root, 'a.txt'), 'utf8'), 'inside\n');
  console.log(`hostile paths: ${paths.length} paths × 9 tool inputs = ${count} cases; outcomes ${JSON.stringify(Object.fromEntries(codes))}`);
  assert.ok(count >= 300);
});

test('race: a component swapped for a symlink while saves run never lets a write land outside', async () => {
  const victim = nodePath.join(t.root, 'race');
  mkdirSync(victim);
  const before = snapshot(outside.path);
  let swapping = true;
  const swapper = (async () => {
    let flips = 0;
    while (swapping) {
      // Replace the real folder with a link to outside, then back, as fast as the event loop allows.
      try { renameSync(victim, `${victim}.real`); symlinkSync(outside.path, victim); } catch { /* raced with ourselves */ }
      await new Promise((r) => setImmediate(r));
      try { rmSync(victim, { force: true }); renameSync(`${victim}.real`, victim); } catch { /* raced */ }
      await new Promise((r) => setImmediate(r));
      flips++;
    }
    return flips;
  })();
  let saved = 0;
  let refused = 0;
  for (let i = 0; i < 300; i++) {
    try {
      const staged = await t.session.invoke(TOOLS.stage_file, { path: `race/f${i}.txt`, content: `write ${i}` });
      await t.session.invoke(TOOLS.save_media, { media_id: (staged.result as { media_id: string }).media_id });
      saved++;
    } catch (e) {
      assert.ok(e instanceof SandboxError, String(e));
      refused++;
    }
  }
  swapping = false;
  const flips = await swapper;
  assert.deepEqual(snapshot(outside.path), before, 'no write landed outside the root');
  console.log(`race: ${flips} swaps, ${saved} saves landed inside, ${refused} refused`);
});
