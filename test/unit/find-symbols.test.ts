import { describe, it, type TestContext } from 'node:test';
import assert from 'node:assert/strict';
import * as nodePath from 'node:path';
import { session, type TestSession } from './harness.ts';
import type { Rule } from '../../src/core/policy/policy.ts';
import { isPaged } from '../../src/core/paging/paged.ts';
import type { CodeSymbol, OutlinePort, WorkspaceSymbol } from '../../src/core/outline/port.ts';

/** The host's workspace symbol search as a language service answers it: every symbol whose name contains the query. */
class SymbolIndex implements OutlinePort {
  readonly queries: string[] = [];
  private readonly all: readonly WorkspaceSymbol[];
  constructor(all: readonly WorkspaceSymbol[]) {
    this.all = all;
  }
  async symbols(): Promise<readonly CodeSymbol[] | undefined> {
    return undefined;
  }
  async workspaceSymbols(query: string): Promise<readonly WorkspaceSymbol[] | undefined> {
    this.queries.push(query);
    return this.all.filter((s) => s.name.toLowerCase().includes(query.toLowerCase()));
  }
}

/** A session whose host's symbol index holds what `symbols` lists for the session's workspace folder. */
function symbolSession(
  t: TestContext,
  symbols: (root: string) => readonly WorkspaceSymbol[],
  options: { rules?: Rule[] } = {},
): TestSession {
  const holder: { index?: SymbolIndex } = {};
  const s = session(t, {
    ...options,
    overrides: {
      outline: { symbols: async () => undefined, workspaceSymbols: (q) => holder.index!.workspaceSymbols(q) },
    },
  });
  holder.index = new SymbolIndex(symbols(s.root));
  return s;
}

const at = (
  root: string,
  rel: string,
  name: string,
  kind: string,
  startLine: number,
  endLine: number,
  container?: string,
): WorkspaceSymbol => ({
  name,
  kind,
  address: nodePath.join(root, ...rel.split('/')),
  startLine,
  endLine,
  ...(container ? { container } : {}),
});

describe('find_symbols', () => {
  it('finds definitions by name across the workspace, grouped by file with kind, container and line range', async (t) => {
    const s = symbolSession(t, (root) => [
      at(root, 'src/ledger.ts', 'Ledger', 'class', 1, 9),
      at(root, 'src/ledger.ts', 'total', 'method', 6, 8, 'Ledger'),
      at(root, 'src/a/ledger-view.ts', 'LedgerView', 'function', 3, 3),
      at(root, 'src/other.ts', 'Other', 'class', 1, 2),
    ]);
    const outcome = await s.invoke('find_symbols', { query: 'ledger' });
    assert.equal(
      outcome.text,
      [
        '2 symbols in 2 files matching "ledger" in the workspace (line ranges are whole definitions):',
        'src/a/ledger-view.ts',
        '  function LedgerView  3',
        'src/ledger.ts',
        '  class Ledger  1-9',
      ].join('\n'),
    );
    assert.equal(s.gate.calls[0]!.summary, 'find symbols matching "ledger" in the workspace');
    const method = await s.invoke('find_symbols', { query: 'total', path: 'src' });
    assert.match(method.text, /\nsrc\/ledger\.ts\n {2}method total \(in Ledger\) {2}6-8$/);
    const elsewhere = await s.invoke('find_symbols', { query: 'ledger', path: 'src/a' });
    assert.doesNotMatch(elsewhere.text, /src\/ledger\.ts/, 'only the folder asked about');
  });

  it('attack: symbols in denied files, protected files (.env) and outside the workspace never appear', async (t) => {
    const s = symbolSession(
      t,
      (root) => [
        at(root, 'private/keys.ts', 'KEY_sk_live_canary', 'constant', 1, 1),
        at(root, '.env.ts', 'KEY_from_env', 'constant', 1, 1),
        at(nodePath.dirname(root), 'elsewhere/keys.ts', 'KEY_outside', 'constant', 1, 1),
        at(root, 'src/config.ts', 'KEY_NAME', 'constant', 2, 2),
      ],
      { rules: [{ glob: 'private/**', read: 'deny' }] },
    );
    const outcome = await s.invoke('find_symbols', { query: 'KEY' });
    assert.doesNotMatch(outcome.text, /canary|KEY_outside|private|elsewhere/);
    assert.match(outcome.text, /^1 symbol in 1 file matching "KEY" in the workspace/);
    assert.match(outcome.text, /\nsrc\/config\.ts\n {2}constant KEY_NAME {2}2/);
  });

  it('a limit says more match; a large answer goes to a result artifact, paged', async (t) => {
    const s = symbolSession(t, (root) =>
      Array.from({ length: 3000 }, (_, i) =>
        at(root, `src/m${Math.floor(i / 10)}.ts`, `handler${i}`, 'function', i + 1, i + 2),
      ),
    );
    const limited = await s.invoke('find_symbols', { query: 'handler', limit: 2 });
    assert.match(
      limited.text,
      /^2 symbols in 1 file \(limited\) matching "handler"[\s\S]*\nNote: more symbols match; call again with a larger limit \(now 2\) or a longer query\.$/,
    );
    const paged = await s.invoke('find_symbols', { query: 'handler', limit: 2000 });
    assert.ok(isPaged<string>(paged.result), paged.text.slice(0, 300));
    assert.match(
      paged.text,
      /^2000 symbols in 200 files \(limited\) matching "handler" in the workspace: more than one page, so the whole result is artifact /,
    );
    const callId = paged.result.artifact.callId;
    const end = await s.invoke('artifact_read', { callId, offset: -1 });
    assert.match(end.text, /done complete \(2000 symbols in 200 files \(limited\)\)/);
  });

  it('where no language services run (the CLI) it says so and what to use instead', async (t) => {
    const s = session(t);
    await assert.rejects(s.invoke('find_symbols', { query: 'x' }), {
      code: 'E_SANDBOX_UNSUPPORTED',
      message: /find_symbols needs language services[\s\S]*search_files/,
    });
  });
});
