import { test } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session } from './harness.ts';

test('count_lines counts a file\'s lines', async (t) => {
  const s = session(t);
  writeFileSync(nodePath.join(s.root, 'a.txt'), 'one\ntwo\nthree\n');
  assert.equal((await s.invoke('count_lines', { path: 'a.txt' })).text, 'a.txt: 3 lines');
});

test('attack: count_lines on a path outside the workspace is refused', async (t) => {
  const s = session(t);
  await assert.rejects(s.invoke('count_lines', { path: '../etc/passwd' }), /E_SANDBOX_REFUSED|refused/);
});
