import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS } from '../../src/core/tools/index.ts';
import { SandboxError, isCancellation } from '../../src/core/errors.ts';
import { session, runTool } from './harness.ts';
import type { DirectoryLister } from '../../src/core/list/port.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';

function tree(root: string): void {
  mkdirSync(nodePath.join(root, 'src', 'lib'), { recursive: true });
  mkdirSync(nodePath.join(root, 'private'));
  writeFileSync(nodePath.join(root, 'README.md'), '# hi\n');
  writeFileSync(nodePath.join(root, 'src', 'b.ts'), 'export {};\n');
  writeFileSync(nodePath.join(root, 'src', 'a.ts'), 'a');
  writeFileSync(nodePath.join(root, 'src', 'lib', 'deep.ts'), 'deep');
  writeFileSync(nodePath.join(root, 'private', 'canary.txt'), 'CANARY');
  writeFileSync(nodePath.join(root, 'zz-denied.log'), 'x');
  symlinkSync('src', nodePath.join(root, 'src-link'));
}

test('lists folders first, sorted, with types and sizes, as an indented tree', async (tc) => {
  const t = session(tc, {
    rules: [
      { glob: 'private/**', read: 'deny' },
      { glob: '*.log', read: 'deny' },
    ],
  });
  tree(t.root);
  const outcome = await runTool(t.session, TOOLS.list_directory, {});
  assert.equal(
    outcome.text,
    [
      '.: 7 entries',
      'src/',
      '  lib/',
      '    deep.ts  4 B',
      '  a.ts  1 B',
      '  b.ts  11 B',
      'README.md  5 B',
      'src-link@ (symlink, not followed)',
    ].join('\n'),
  );
  assert.doesNotMatch(JSON.stringify(outcome.result), /private|canary|zz-denied/);
});

test('max_depth bounds the descent; omitted means the whole tree', async (tc) => {
  const t = session(tc);
  tree(t.root);
  const shallow = await runTool(t.session, TOOLS.list_directory, { path: 'src', max_depth: 1 });
  assert.equal(shallow.text, 'src: 3 entries\nlib/\na.ts  1 B\nb.ts  11 B');
  const deep = await runTool(t.session, TOOLS.list_directory, { path: 'src' });
  assert.equal(deep.text, 'src: 4 entries\nlib/\n  deep.ts  4 B\na.ts  1 B\nb.ts  11 B');
});

test('listing a file or a missing folder is a narrated error', async (tc) => {
  const t = session(tc);
  tree(t.root);
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, { path: 'README.md' }),
    (e: unknown) =>
      e instanceof SandboxError &&
      e.code === 'E_SANDBOX_INVALID_INPUT' &&
      /"README.md" is a file, not a folder\. Open it with open_file instead\./.test(e.message),
  );
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, { path: 'nope' }),
    (e: unknown) =>
      e instanceof SandboxError && e.code === 'E_SANDBOX_NOT_FOUND' && /"nope" does not exist/.test(e.message),
  );
});

test('multi-root: every folder is listed under its name', async (tc) => {
  const t = session(tc, { folders: ['web', 'api'] });
  mkdirSync(nodePath.join(t.root, 'web'));
  mkdirSync(nodePath.join(t.root, 'api'));
  writeFileSync(nodePath.join(t.root, 'api', 'main.go'), 'package main\n');
  const outcome = await runTool(t.session, TOOLS.list_directory, {});
  assert.equal(outcome.text, 'web: empty folder\n\napi: 1 entries\nmain.go  13 B');
  const one = await runTool(t.session, TOOLS.list_directory, { path: 'api' });
  assert.equal(one.text, 'api: 1 entries\nmain.go  13 B');
});

test('a limit frame from a directory backend is a protocol violation, reported as a narrated io failure naming the backend', async (tc) => {
  const lister: DirectoryLister = {
    name: 'capped-fake',
    async *list() {
      yield { kind: 'entries', entries: [{ path: 'a.txt', type: 'file', size: 1, depth: 1 }] };
      yield { kind: 'limit', limit: 1 };
    },
  };
  const t = session(tc, { overrides: { lister } });
  await assert.rejects(
    runTool(t.session, TOOLS.list_directory, {}),
    (e: unknown) =>
      e instanceof SandboxError &&
      e.code === 'E_SANDBOX_IO' &&
      e.message ===
        'The directory backend "capped-fake" cut the listing of "." at 1 entries, but list_directory has no limit: that is a protocol violation, so the partial listing was discarded. Retry with a smaller max_depth or a deeper path; if it happens again, tell the user.',
  );
});

test('entries a backend yields for a denied path are dropped all the same', async (tc) => {
  const lister: DirectoryLister = {
    name: 'leaky-fake',
    async *list() {
      yield { kind: 'entries', entries: [{ path: 'private', type: 'directory', depth: 1 }] };
      yield {
        kind: 'entries',
        entries: [
          { path: 'private/canary.txt', type: 'file', size: 6, depth: 2 },
          { path: 'ok.txt', type: 'file', size: 2, depth: 1 },
        ],
      };
      yield { kind: 'done', complete: true };
    },
  };
  const t = session(tc, { rules: [{ glob: 'private/**', read: 'deny' }], overrides: { lister } });
  const outcome = await runTool(t.session, TOOLS.list_directory, {});
  assert.equal(outcome.text, '.: 1 entries\nok.txt  2 B');
});

test('a walk cancelled mid-way (at its first entry, as a host hears of it through progress) ends as cancelled and reads no further', async (tc) => {
  const t = session(tc);
  for (let d = 0; d < 20; d++) {
    mkdirSync(nodePath.join(t.root, `d${d}`));
    for (let f = 0; f < 50; f++) writeFileSync(nodePath.join(t.root, `d${d}`, `f${f}.txt`), '');
  }
  const controller = new AbortController();
  let reported = 0;
  const call = runTool(t.session, TOOLS.list_directory, {}, controller.signal, 'headless', {
    progress: (done) => {
      reported = done;
      controller.abort();
    },
  });
  await assert.rejects(call, (e: unknown) => isCancellation(e));
  assert.equal(reported, 1, 'the walk went no further once cancelled');
});

test('a big listing reads the same on the worker thread as on the calling thread: denied folders and files, links to them, sizes', async (tc) => {
  const rules = [
    { glob: 'private/**', read: 'deny' as const },
    { glob: '**/*.log', read: 'deny' as const },
  ];
  const inline = session(tc, { rules, fs: new NodeFs({}, { entriesBeforeWorker: Number.MAX_SAFE_INTEGER }) });
  const threadedFs = new NodeFs({}, { entriesBeforeWorker: 0 });
  tc.after(() => threadedFs.folders.stopWorker());
  const threaded = session(tc, { rules, fs: threadedFs });
  for (const root of [inline.root, threaded.root]) {
    tree(root);
    for (let d = 0; d < 25; d++) {
      mkdirSync(nodePath.join(root, 'src', `m${d}`));
      for (let f = 0; f < 100; f++)
        writeFileSync(nodePath.join(root, 'src', `m${d}`, f % 10 === 0 ? `f${f}.log` : `f${f}.ts`), 'x'.repeat(f));
    }
    symlinkSync('../../private/canary.txt', nodePath.join(root, 'src', 'm3', 'to-canary'));
  }
  const expected = await runTool(inline.session, TOOLS.list_directory, {});
  const text = async (outcome: { text: string }): Promise<string> => outcome.text.replace(/art-[\w-]+/g, 'ART');
  while (!threadedFs.folders.onWorker)
    await runTool(threaded.session, TOOLS.list_directory, { path: 'src', max_depth: 1 });
  assert.equal(await text(await runTool(threaded.session, TOOLS.list_directory, {})), await text(expected));
  assert.match(expected.text, /2,?2\d\d entries/);
  assert.doesNotMatch(expected.text, /canary|\.log/);
});

test('progress: the host hears of the first entry at once, then not of every entry (the pager sends at most one a tenth of a second)', async (tc) => {
  const t = session(tc);
  for (let d = 0; d < 10; d++) {
    mkdirSync(nodePath.join(t.root, `d${d}`));
    for (let f = 0; f < 300; f++) writeFileSync(nodePath.join(t.root, `d${d}`, `f${f}.txt`), '');
  }
  const heard: { done: number; message: string }[] = [];
  const started = Date.now();
  const outcome = await runTool(t.session, TOOLS.list_directory, {}, undefined, 'headless', {
    progress: (done, message) => heard.push({ done, message }),
  });
  assert.match(outcome.text, /3,?010 entries/);
  assert.deepEqual(heard[0], { done: 1, message: '1 so far: list_directory .' });
  assert.ok(heard.length <= 1 + (Date.now() - started) / 100, `${heard.length} reports`);
  assert.ok(
    heard.every((h, i) => i === 0 || h.done > heard[i - 1]!.done),
    'progress only grows',
  );
});
