import * as assert from 'node:assert/strict';
import { describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, setSetting, waitFor, workspaceUri } from './api.ts';

describe("a code file's outline in VS Code", function () {
  // The TypeScript server may start cold: its first outline can come after open_file's wait.
  this.timeout(120_000);

  it("open_file of a JavaScript file lists its functions with line ranges (the workbench's own symbol provider), and artifact_query returns one function's lines", async () => {
    const opened = await waitFor(
      'an outline from the TypeScript service',
      async () => {
        const text = await invoke('open_file', { path: 'src/main.js' });
        return /\nOutline \(/.test(text) ? text : undefined;
      },
      90_000,
    );
    console.log(`open_file outline: ${opened.split('\n').slice(1, 4).join(' | ')}`);
    assert.match(opened, /\n {2}function main {2}4-7\n/);
    const callId = /^artifact (\S+):/.exec(opened)?.[1];
    assert.ok(callId, opened);
    const query = await invoke('artifact_query', { callId, select: 'main' });
    assert.equal(query.split('\n')[0], 'function main in src/main.js (lines 4-7):');
    assert.match(query, /\n4\texport function main\(names\) \{\n5\t[^\n]+\n6\t[^\n]+\n7\t\}\n\(end of symbol\)$/);
  });

  it("open_file of a TypeScript file lists its class, its methods and its functions with line ranges, artifact_query returns one method's lines, and find_symbols finds them by name (a denied file's never)", async () => {
    const file = workspaceUri('src', 'ledger.ts');
    const source = [
      'export class Ledger {', // 1
      '  private readonly entries: number[] = [];', // 2
      '  add(amount: number): void {', // 3
      '    this.entries.push(amount);', // 4
      '  }', // 5
      '  total(): number {', // 6
      '    return this.entries.reduce((a, b) => a + b, 0);', // 7
      '  }', // 8
      '}', // 9
      '', // 10
      'export function formatAmount(amount: number): string {', // 11
      '  return amount.toFixed(2);', // 12
      '}', // 13
      '',
    ].join('\n');
    await vscode.workspace.fs.writeFile(file, new TextEncoder().encode(source));
    try {
      const opened = await waitFor(
        'an outline of the TypeScript file',
        async () => {
          const text = await invoke('open_file', { path: 'src/ledger.ts' });
          return /\n {2}function formatAmount {2}11-13\n/.test(text) ? text : undefined;
        },
        90_000,
      );
      console.log(`open_file outline (TypeScript): ${opened.split('\n').slice(1, 6).join(' | ')}`);
      assert.match(opened, /\n {2}class Ledger {2}1-9\n/);
      assert.match(opened, /\n {4}method add {2}3-5\n/);
      assert.match(opened, /\n {4}method total {2}6-8\n/);
      const callId = /^artifact (\S+):/.exec(opened)?.[1];
      assert.ok(callId, opened);
      const query = await invoke('artifact_query', { callId, select: 'Ledger/total' });
      assert.equal(query.split('\n')[0], 'method Ledger/total in src/ledger.ts (lines 6-8):');
      assert.match(query, /\n6\t {2}total\(\): number \{\n7\t[^\n]+\n8\t {2}\}\n\(end of symbol\)$/);

      // find_symbols: the workbench's workspace symbol search, fuzzy, through the search filter.
      // TypeScript's workspace symbols cover the projects of the files open in editors, as when a
      // person works: with none open it answers nothing (find_symbols then says so).
      await vscode.window.showTextDocument(file, { preview: true });
      let last = '';
      const found = await waitFor(
        'Ledger in find_symbols',
        async () => {
          last = await invoke('find_symbols', { query: 'Ledger' });
          return /\nsrc\/ledger\.ts\n {2}class Ledger {2}1-9(\n|$)/.test(last) ? last : undefined;
        },
        30_000,
      ).catch(async (e: unknown) => {
        const raw = await vscode.commands.executeCommand<vscode.SymbolInformation[]>(
          'vscode.executeWorkspaceSymbolProvider',
          'Ledger',
        );
        throw new Error(
          `${String(e)}; the last answer: ${last}; raw: ${JSON.stringify(raw?.map((r) => [r.name, r.location.uri.toString()]))}; root ${vscode.workspace.workspaceFolders?.[0]?.uri.toString()}`,
        );
      });
      console.log(`find_symbols: ${found.split('\n').slice(0, 3).join(' | ')}`);
      const method = await invoke('find_symbols', { query: 'total', path: 'src' });
      assert.match(method, /\nsrc\/ledger\.ts\n {2}method total \(in Ledger\) {2}6-8(\n|$)/);
      await setSetting('rules', [{ glob: 'src/ledger.ts', read: 'deny' }]);
      const denied = await invoke('find_symbols', { query: 'Ledger' });
      assert.doesNotMatch(denied, /ledger\.ts/, "a denied file's symbols never appear");
    } finally {
      await setSetting('rules', undefined);
      await vscode.commands.executeCommand('workbench.action.closeAllEditors');
      await vscode.workspace.fs.delete(file);
    }
  });
});
