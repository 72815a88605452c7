import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { displayOf } from '../../src/core/paths.ts';
import { TOOLS } from '../../src/core/tools/index.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { tempDir, testRipgrep, testSession, type TestSession, runTool } from './harness.ts';

test('displayOf: the folder-relative path in one folder, prefixed with the folder name in several', () => {
  assert.equal(displayOf('app', '', false), '.');
  assert.equal(displayOf('app', 'src/a.ts', false), 'src/a.ts');
  assert.equal(displayOf('app', '', true), 'app');
  assert.equal(displayOf('app', 'src/a.ts', true), 'app/src/a.ts');
  assert.equal(displayOf(undefined, 'src/a.ts', true), 'src/a.ts');
});

/** Two workspace folders both named "app", in different places, given to the session as a host could (names not made distinct). */
function sameNamedFolders(): { t: TestSession; first: string; second: string; dispose(): Promise<void> } {
  const places = tempDir('wt-same-name-');
  const first = nodePath.join(places.path, 'one', 'app');
  const second = nodePath.join(places.path, 'two', 'app');
  mkdirSync(first, { recursive: true });
  mkdirSync(second, { recursive: true });
  writeFileSync(nodePath.join(first, 'a.txt'), 'needle in the first\n');
  writeFileSync(nodePath.join(second, 'b.txt'), 'needle in the second\n');
  const roots = [first, second].map((path) => ({ name: 'app', address: path, localPath: path }));
  const t = testSession({ overrides: { roots: () => roots, search: createRipgrepSearch(testRipgrep()) } });
  return {
    t,
    first,
    second,
    async dispose() {
      await t.dispose();
      places.dispose();
    },
  };
}

test('attack: two workspace folders with the same name never share a display path, in any tool', async () => {
  const w = sameNamedFolders();
  try {
    const { session } = w.t;
    assert.deepEqual(
      session.roots.map((r) => r.name),
      ['app', 'app (2)'],
    );

    const listing = await runTool(session, TOOLS.list_directory, {});
    assert.match(listing.text, /^app: 1 entries\na\.txt {2}\d+ B\n\napp \(2\): 1 entries\nb\.txt {2}\d+ B$/);

    const search = await runTool(session, TOOLS.search_files, { pattern: 'needle' });
    assert.equal(
      search.text,
      '2 matching lines in 2 files:\napp/a.txt\n  1: needle in the first\napp (2)/b.txt\n  1: needle in the second',
    );
    const found = await runTool(session, TOOLS.find_files, { glob: '*.txt' });
    assert.equal(found.text, '2 files:\napp/a.txt\napp (2)/b.txt');

    const opened = await runTool(session, TOOLS.open_file, { path: 'app (2)/b.txt' });
    assert.match(opened.text, /^artifact \S+: app \(2\)\/b\.txt, 1 line/);
    assert.deepEqual(
      w.t.gate.calls.at(-1)?.targets.map((t) => t.display),
      ['app (2)/b.txt'],
    );

    // A write addressed to the second folder lands in the second folder, under its distinct name.
    const staged = await runTool(session, TOOLS.stage_file, { path: 'app (2)/new.txt', content: 'second\n' });
    const mediaId = /"media_id":"([^"]+)"/.exec(staged.text)?.[1];
    assert.ok(mediaId, staged.text);
    const saved = await runTool(session, TOOLS.save_media, { media_id: mediaId });
    assert.match(saved.text, /"path":"app \(2\)\/new\.txt"/);
    assert.equal(readFileSync(nodePath.join(w.second, 'new.txt'), 'utf8'), 'second\n');
    assert.throws(() => readFileSync(nodePath.join(w.first, 'new.txt')), /ENOENT/);
  } finally {
    await w.dispose();
  }
});
