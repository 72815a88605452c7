import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';

test('the .vsix holds only what the extension needs at run time', { skip: !existsSync('dist/extension.js') && 'build first (npm run build)' }, () => {
  const vsce = nodePath.join('node_modules', '@vscode', 'vsce', 'vsce');
  const listed = spawnSync(process.execPath, [vsce, 'ls', '--no-dependencies'], { encoding: 'utf8', timeout: 60_000 });
  assert.equal(listed.status, 0, listed.stderr);
  const files = listed.stdout.trim().split('\n').sort();
  assert.deepEqual(files.filter((f) => !f.startsWith('media/')), ['LICENSE', 'README.md', 'agents/workspace-tools.agent.md', 'dist/cli.js', 'dist/extension.js', 'dist/iconv-lite.js', 'dist/markdown-it.js', 'dist/package.json', 'package.json']);
  assert.ok(files.includes('media/staged.svg'));
  assert.deepEqual(files.filter((f) => /^(src|test|node_modules|bench|scripts)\//.test(f) || f.endsWith('.map')), []);
});
