// Issue 24: hosts learn what a call writes from its plan, never from a tool's name. (No import
// cycle in src/ and no domain module importing the tool contract: core-boundary.test.ts.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';

const VSCODE = nodePath.resolve(import.meta.dirname, '../../src/vscode');

function sources(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const path = nodePath.join(dir, entry.name);
    return entry.isDirectory() ? sources(path) : entry.name.endsWith('.ts') ? [path] : [];
  });
}

test('VS Code features never switch on a tool\'s name: what a call writes comes from its plan', () => {
  const offenders = sources(VSCODE).filter((file) => /\b(?:tool\.name|call\.tool)\s*[!=]==|[!=]==\s*(?:tool\.name|call\.tool)\b/.test(readFileSync(file, 'utf8')));
  assert.deepEqual(offenders.map((f) => nodePath.relative(VSCODE, f)), []);
});
