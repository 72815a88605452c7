import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { copyFileSync, mkdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import { locateRipgrep, vscodeRipgrep } from '../../src/core/ripgrep/binary.ts';
import { testDir } from './harness.ts';

test("ripgrep is found in @vscode/ripgrep's platform package from a checkout", () => {
  const rg = locateRipgrep();
  assert.ok(rg);
  assert.equal(rg.source, 'package');
  assert.match(spawnSync(rg.path, ['--version'], { encoding: 'utf8' }).stdout, /^ripgrep \d+\./);
});

for (const layout of [
  ['node_modules', '@vscode', 'ripgrep-universal', 'bin', `${process.platform}-${process.arch}`],
  ['node_modules.asar.unpacked', '@vscode', 'ripgrep-universal', 'bin', `${process.platform}-${process.arch}`],
  ['node_modules', '@vscode', 'ripgrep', 'bin'],
]) {
  test(`the rg VS Code ships is found under appRoot/${layout.join('/')}`, (tc) => {
    const appRoot = testDir(tc, 'wt-approot-');
    const dir = nodePath.join(appRoot.path, ...layout);
    mkdirSync(dir, { recursive: true });
    copyFileSync(locateRipgrep()!.path, nodePath.join(dir, 'rg'));
    assert.equal(vscodeRipgrep(appRoot.path), nodePath.join(dir, 'rg'));
    assert.equal(vscodeRipgrep(nodePath.join(appRoot.path, 'elsewhere')), undefined);
  });
}
