import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session } from './harness.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import type { CodeSymbol, OutlinePort, WorkspaceSymbol } from '../../src/core/outline/port.ts';
import type { ProblemScope } from '../../src/core/problems/port.ts';
import { flattenSymbols } from '../../src/core/outline/symbols.ts';

const SOURCE =
  [
    'export class Session {', // 1
    '  private count = 0;', // 2
    '  invoke(name: string) {', // 3
    '    this.count++;', // 4
    '    return name;', // 5
    '  }', // 6
    '}', // 7
    '', // 8
    'export function helper() {', // 9
    '  return 1;', // 10
    '}', // 11
  ].join('\n') + '\n';

const sym = (
  name: string,
  kind: string,
  startLine: number,
  endLine: number,
  children: CodeSymbol[] = [],
): CodeSymbol => ({ name, kind, startLine, endLine, children });

/** A document symbol provider as the host hands its answer over (the VS Code one is tested in test/integration/outline.test.ts). */
class Provider implements OutlinePort {
  readonly asked: string[] = [];
  private readonly answer: readonly CodeSymbol[] | undefined;
  constructor(answer: readonly CodeSymbol[] | undefined) {
    this.answer = answer;
  }
  async symbols(file: ProblemScope): Promise<readonly CodeSymbol[] | undefined> {
    this.asked.push(file.rel);
    return this.answer;
  }
  async workspaceSymbols(): Promise<readonly WorkspaceSymbol[] | undefined> {
    return [];
  }
}

const TREE = [
  sym('helper', 'function', 9, 11),
  sym('Session', 'class', 1, 7, [sym('invoke', 'method', 3, 6), sym('count', 'property', 2, 2)]),
];

describe("a code file's outline", () => {
  it('open_file of a source file returns its outline (kind, name, line range, nesting), and artifact_query reads one symbol by its path', async (t) => {
    const provider = new Provider(TREE);
    const s = session(t, { overrides: { outline: provider } });
    writeFileSync(nodePath.join(s.root, 'session.ts'), SOURCE);
    const outcome = await s.invoke('open_file', { path: 'session.ts' });
    const handle = oneFile(outcome.result);
    assert.deepEqual(provider.asked, ['session.ts']);
    assert.deepEqual(outcome.text.split(handle.callId).join('ID').split('\n').slice(1), [
      'Outline (4 symbols; line ranges are whole definitions):',
      '  class Session  1-7',
      '    property count  2-2',
      '    method invoke  3-6',
      '  function helper  9-11',
      '(artifact_query {callId: "ID", select: "Session/count"} reads a symbol\'s lines)',
      'Next: artifact_read {callId: "ID", offset} pages it (2000 lines or 50 KiB a page); artifact_grep {callId: "ID", pattern} finds lines.',
    ]);
    const query = await s.invoke('artifact_query', { callId: handle.callId, select: 'Session/invoke' });
    assert.equal(
      query.text,
      [
        'method Session/invoke in session.ts (lines 3-6):',
        '3\t  invoke(name: string) {',
        '4\t    this.count++;',
        '5\t    return name;',
        '6\t  }',
        '(end of symbol)',
      ].join('\n'),
    );
    await assert.rejects(s.invoke('artifact_query', { callId: handle.callId, select: 'Session/invok' }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message: /^No symbol matches the path "Session\/invok" in "session\.ts"\. Symbols near it: "Session\/invoke"/,
    });
  });

  it('says so when no provider answers, and opens the file all the same', async (t) => {
    const s = session(t, { overrides: { outline: new Provider(undefined) } });
    writeFileSync(nodePath.join(s.root, 'notes.xyz'), 'plain\n');
    const outcome = await s.invoke('open_file', { path: 'notes.xyz' });
    assert.match(outcome.text, /\nNo outline \(no symbol provider answered\)\.\nNext: artifact_read/);
    await assert.rejects(s.invoke('artifact_query', { callId: oneFile(outcome.result).callId, select: 'x' }), {
      code: 'E_SANDBOX_UNSUPPORTED',
      message: /was opened with open_file as plain text \(no outline\)/,
    });
  });

  it('asks no provider for a binary or empty file, and a host without providers (the CLI) adds nothing', async (t) => {
    const provider = new Provider(TREE);
    const s = session(t, { overrides: { outline: provider } });
    writeFileSync(nodePath.join(s.root, 'blob.bin'), Buffer.from([0, 1, 2, 0]));
    writeFileSync(nodePath.join(s.root, 'empty.ts'), '');
    await s.invoke('open_file', { path: 'blob.bin' });
    await s.invoke('open_file', { path: 'empty.ts' });
    assert.deepEqual(provider.asked, []);
    const cli = session(t);
    writeFileSync(nodePath.join(cli.root, 'session.ts'), SOURCE);
    const text = (await cli.invoke('open_file', { path: 'session.ts' })).text;
    assert.equal(text.split('\n').length, 2);
  });

  it('an outline is bounded: the symbols past the bound are counted, not listed', () => {
    const many = Array.from({ length: 30 }, (_, i) => sym(`f${i}`, 'function', i + 1, i + 1));
    const outline = flattenSymbols(many, 10);
    assert.equal(outline.symbols.length, 10);
    assert.equal(outline.omitted, 20);
  });

  it("open_file with a window asks for no outline: the model already knows where to look (bytes, and a cold language server's wait)", async (t) => {
    const provider = new Provider(TREE);
    const s = session(t, { overrides: { outline: provider } });
    writeFileSync(nodePath.join(s.root, 'session.ts'), SOURCE);
    const outcome = await s.invoke('open_file', { path: 'session.ts', offset: 3, limit: 4 });
    assert.deepEqual(provider.asked, []);
    assert.doesNotMatch(outcome.text, /Outline/);
    assert.match(outcome.text, /^lines 3-6 of 11, artifact [^\n]+\n {2}invoke\(name: string\) \{\n/);
  });
});
