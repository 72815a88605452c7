// Issue 26, item 10: a host whose extension storage is not on the local disk spooled artifacts (copies
// of workspace files, secrets included once approved) into a fixed shared folder, /tmp/artifacts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { chmodSync, existsSync, lstatSync, mkdirSync, readdirSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { privateRunFolder } from '../../src/core/run-folders.ts';
import { testDir } from './harness.ts';

const PREFIX = 'workspace-tools-vscode-';

test('attack: another local user creates the shared spool folder first (/tmp/artifacts, world-writable) to own or read what is spooled: each host process gets a fresh private folder instead', async (tc) => {
  const tmp = testDir(tc).path;
  // The other user's folder, made before the extension starts, and something planted in it.
  const shared = nodePath.join(tmp, 'artifacts');
  mkdirSync(shared);
  chmodSync(shared, 0o777);
  writeFileSync(nodePath.join(shared, 'planted'), 'x');

  const first = await privateRunFolder(tmp, PREFIX);
  const second = await privateRunFolder(tmp, PREFIX);
  assert.notEqual(first, second, 'a fresh folder every time');
  for (const dir of [first, second]) {
    assert.equal(nodePath.dirname(dir), tmp);
    assert.match(nodePath.basename(dir), new RegExp(`^${PREFIX}${process.pid}-[A-Za-z0-9]{6}$`));
    const stat = lstatSync(dir);
    assert.ok(stat.isDirectory() && !stat.isSymbolicLink());
    assert.equal(stat.mode & 0o777, 0o700, 'only this user may list or enter it');
    if (process.getuid) assert.equal(stat.uid, process.getuid());
    assert.deepEqual(readdirSync(dir), []);
  }
  assert.deepEqual(readdirSync(shared), ['planted'], 'the shared folder is neither used nor touched');
});

test("the private spool folders of host processes that died are removed at the next start, and no one else's", async (tc) => {
  const tmp = testDir(tc).path;
  const gone = spawnSync(process.execPath, ['-e', '']).pid!;
  const dead = nodePath.join(tmp, `${PREFIX}${gone}-abcdef`);
  const alive = nodePath.join(tmp, `${PREFIX}${process.ppid}-abcdef`);
  for (const dir of [dead, alive]) mkdirSync(dir, { mode: 0o700 });
  await privateRunFolder(tmp, PREFIX);
  assert.equal(existsSync(dead), false, 'the folder of a process that is gone');
  assert.equal(existsSync(alive), true, 'the folder of a process still running');
});
