import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import { invoke, waitFor } from './api.ts';

describe('a code file\'s outline in VS Code', function () {
  // The TypeScript server may start cold: its first outline can come after open_file's wait.
  this.timeout(120_000);

  it('open_file of a JavaScript file lists its functions with line ranges (the workbench\'s own symbol provider), and artifact_query returns one function\'s lines', async () => {
    const opened = await waitFor('an outline from the TypeScript service', async () => {
      const text = await invoke('open_file', { path: 'src/main.js' });
      return /\nOutline \(/.test(text) ? text : undefined;
    }, 90_000);
    console.log(`open_file outline: ${opened.split('\n').slice(1, 4).join(' | ')}`);
    assert.match(opened, /\n {2}function main {2}4-7\n/);
    const callId = /^artifact (\S+):/.exec(opened)?.[1];
    assert.ok(callId, opened);
    const query = await invoke('artifact_query', { callId, select: 'main' });
    assert.equal(query.split('\n')[0], 'function main in src/main.js (lines 4-7):');
    assert.match(query, /\n4\texport function main\(names\) \{\n5\t[^\n]+\n6\t[^\n]+\n7\t\}\n\(end of symbol\)$/);
  });
});
