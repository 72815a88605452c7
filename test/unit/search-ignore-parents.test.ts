import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import { rmSync, symlinkSync } from 'node:fs';
import * as nodePath from 'node:path';
import { Policy } from '../../src/core/policy/policy.ts';
import { ignoreRulesAbove } from '../../src/core/search/ignore-parents.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { createRipgrep } from '../../src/core/ripgrep/process.ts';
import type { SearchBatch } from '../../src/core/search/port.ts';
import { testDir } from './harness.ts';
import { rgPath, writeTree } from './search-helpers.ts';

const never = new AbortController().signal;
const search = createRipgrepSearch(createRipgrep(rgPath()));

async function listed(batches: AsyncIterable<SearchBatch>): Promise<string[]> {
  const out: string[] = [];
  for await (const batch of batches)
    for (const f of batch) if (f.kind === 'path' || f.kind === 'match') out.push(f.path);
  return [...new Set(out)].sort();
}

/** find_files "*" and search_files "x" over `path` of the workspace folder `ws`, as the backend runs them. */
async function both(ws: string, path = ''): Promise<{ found: string[]; matched: string[] }> {
  const base = { scopes: [{ folder: 'ws', cwd: ws, path }], policy: new Policy([]), signal: never };
  return {
    found: await listed(search.findPaths({ ...base, glob: '*' })),
    matched: await listed(search.searchContent({ ...base, pattern: 'x' })),
  };
}

/** A folder `outer` holding the workspace folder `outer/ws`, where nothing above `outer` is under the test's control. */
function nested(tc: TestContext): { outer: string; ws: string } {
  const outer = testDir(tc).path;
  const ws = nodePath.join(outer, 'ws');
  writeTree(ws, { 'a.log': 'x\n', 'b.ts': 'x\n', 'sub/c.log': 'x\n', 'sub/d.ts': 'x\n' });
  return { outer, ws };
}

describe('ignore rules above the searched folder (--no-ignore-parent only where there are none)', () => {
  it('finds every file ripgrep reads rules from, and a repository marker, in any folder above', (tc) => {
    const { outer, ws } = nested(tc);
    // Above `outer` is the machine's own: whatever it holds, `ws` sees it too.
    const machine = ignoreRulesAbove(outer);
    assert.equal(ignoreRulesAbove(ws), machine);
    for (const name of ['.gitignore', '.ignore', '.rgignore', '.git/', '.jj/']) {
      writeTree(outer, { [name]: name.endsWith('/') ? '' : '*.log\n' });
      assert.equal(ignoreRulesAbove(ws), true, name);
      assert.equal(ignoreRulesAbove(nodePath.join(ws, 'sub')), true, `${name}, two levels up`);
      rmSync(nodePath.join(outer, name), { recursive: true });
    }
    // The folder searched is not above itself: its own ignore files are read by the walk.
    writeTree(ws, { '.gitignore': '*.log\n' });
    assert.equal(ignoreRulesAbove(ws), machine);
    assert.equal(ignoreRulesAbove(nodePath.join(ws, 'sub')), true, 'a scope below the workspace folder has it above');
    assert.equal(ignoreRulesAbove(nodePath.join(outer, 'missing')), true, 'no real path: assumed');
  });

  it('looks above the real path, as ripgrep does', (tc) => {
    const { outer, ws } = nested(tc);
    const elsewhere = testDir(tc).path;
    writeTree(elsewhere, { '.gitignore': '*.log\n' });
    symlinkSync(ws, nodePath.join(elsewhere, 'link'));
    assert.equal(ignoreRulesAbove(nodePath.join(elsewhere, 'link')), ignoreRulesAbove(outer));
  });

  const everything = {
    found: ['a.log', 'b.ts', 'sub/c.log', 'sub/d.ts'],
    matched: ['a.log', 'b.ts', 'sub/c.log', 'sub/d.ts'],
  };
  const noLogs = { found: ['b.ts', 'sub/d.ts'], matched: ['b.ts', 'sub/d.ts'] };

  it('an ignore file above the workspace folder still hides what it names, and without it those files are listed', async (tc) => {
    const { outer, ws } = nested(tc);
    if (ignoreRulesAbove(outer)) tc.skip('this machine has ignore rules above its temporary folder');
    assert.deepEqual(await both(ws), everything);
    writeTree(outer, { '.ignore': '*.log\n' });
    assert.deepEqual(await both(ws), noLogs);
  });

  it('a repository above keeps its info/exclude, and its .gitignore files, in force', async (tc) => {
    const { outer, ws } = nested(tc);
    writeTree(outer, { '.git/info/exclude': '*.log\n', '.git/HEAD': 'ref: refs/heads/main\n' });
    assert.deepEqual(await both(ws), noLogs);
    writeTree(outer, { '.git/info/exclude': '' });
    assert.deepEqual(await both(ws), everything);
    // A .gitignore counts only inside a repository: in the workspace folder, the one above makes it count.
    writeTree(ws, { '.gitignore': '*.log\n' });
    assert.deepEqual(await both(ws), noLogs);
  });

  it("a scope below the workspace folder keeps the folder's own ignore files in force", async (tc) => {
    const { ws } = nested(tc);
    writeTree(ws, { '.ignore': '*.log\n' });
    assert.deepEqual(await both(ws, 'sub'), { found: ['sub/d.ts'], matched: ['sub/d.ts'] });
  });
});
