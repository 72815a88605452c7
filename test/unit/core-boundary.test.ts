import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';

function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = nodePath.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

test('src/core never imports vscode', () => {
  const offenders = filesUnder('src/core').filter((file) => /from\s+['"]vscode['"]|require\(\s*['"]vscode['"]\s*\)|import\(\s*['"]vscode['"]\s*\)/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders, []);
});

test('only src/vscode and src/extension.ts import vscode', () => {
  const offenders = filesUnder('src')
    .filter((file) => !file.startsWith(nodePath.join('src', 'vscode')) && file !== nodePath.join('src', 'extension.ts'))
    .filter((file) => /from\s+['"]vscode['"]/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders, []);
});
