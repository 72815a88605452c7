import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import * as nodePath from 'node:path';
import { execFileSync } from 'node:child_process';
import { symlinkSync } from 'node:fs';
import { SandboxError, isCancellation } from '../../src/core/errors.ts';
import { searchFiles } from '../../src/core/tools/search_files.ts';
import { findFiles } from '../../src/core/tools/find_files.ts';
import {
  renderMatches,
  renderPaths,
  type ResultFrame,
  type SearchOutput,
  type SearchResult,
} from '../../src/core/search/results.ts';
import type { ContentQuery, PathQuery, SandboxSearch, SearchBatch, SearchFrame } from '../../src/core/search/port.ts';
import type { Tool, ToolOutcome } from '../../src/core/contract/tool.ts';
import { session, type TestSession, wholeResult, runTool } from './harness.ts';
import {
  SEARCH_TREE,
  failure,
  rgChildren,
  searchOptions,
  searchSession,
  waitFor,
  writeTree,
} from './search-helpers.ts';

const TREE = SEARCH_TREE;

async function frames(t: TestSession, tool: Tool<SearchOutput>, args: Record<string, unknown>): Promise<SearchResult> {
  return wholeResult((await runTool(t.session, tool, args)).result);
}

/** "path:line" for matches, "path" for paths, in result order. */
function hits(result: SearchResult): string[] {
  return result.flatMap((f) => (f.kind === 'match' ? [`${f.path}:${f.line}`] : f.kind === 'path' ? [f.path] : []));
}

function terminal(result: SearchResult): ResultFrame | undefined {
  return result.at(-1);
}

describe('search_files: each argument of the table', () => {
  let t: TestSession;
  before(() => {
    t = searchSession();
    writeTree(t.root, TREE);
  });
  after(async () => {
    await t.dispose();
  });

  const cases: [string, Record<string, unknown>, string[]][] = [
    [
      'pattern (regex, case-sensitive, no hidden, gitignore respected)',
      { pattern: 'Alpha' },
      ['docs/Guide.MD:1', 'src/app.ts:1', 'src/util/deep.ts:1', 'src/util/deeper/deepest.ts:1'],
    ],
    [
      'path narrows to a folder',
      { pattern: 'Alpha', path: 'src/util' },
      ['src/util/deep.ts:1', 'src/util/deeper/deepest.ts:1'],
    ],
    ['path may name one file', { pattern: 'alpha', path: 'src/app.ts' }, ['src/app.ts:2']],
    ['max_depth 1 = files directly in path', { pattern: 'Alpha', path: 'src', max_depth: 1 }, ['src/app.ts:1']],
    ['max_depth 2', { pattern: 'Alpha', path: 'src', max_depth: 2 }, ['src/app.ts:1', 'src/util/deep.ts:1']],
    ['ignore_case', { pattern: 'alpha', ignore_case: true, path: 'docs' }, ['docs/Guide.MD:1', 'docs/notes.md:1']],
    ['regex by default: "a.b" matches axb', { pattern: 'a.b' }, ['axb.txt:1', 'src/app.ts:3']],
    ['literal', { pattern: 'a.b', literal: true }, ['src/app.ts:3']],
    ['glob narrows the files searched', { pattern: 'lpha', glob: '*.md' }, ['docs/notes.md:1']],
    ['glob "!" excludes', { pattern: 'Alpha', glob: '!*.ts' }, ['docs/Guide.MD:1']],
    ['iglob matches case-insensitively', { pattern: 'lpha', iglob: '*.md' }, ['docs/Guide.MD:1', 'docs/notes.md:1']],
    ['hidden', { pattern: 'Alpha', hidden: true, glob: '!*.{ts,MD}' }, ['.dotfile:1', '.hidden/inside.txt:1']],
    ['no_ignore', { pattern: 'Alpha', no_ignore: true, glob: '!*.{ts,MD}' }, ['build.log:1', 'ignored/out.txt:1']],
    ['follow: false is accepted', { pattern: 'Alpha', path: 'docs', follow: false }, ['docs/Guide.MD:1']],
  ];
  for (const [name, args, expected] of cases) {
    it(name, async () => {
      const result = await frames(t, searchFiles, args);
      assert.deepEqual(hits(result), expected);
      assert.deepEqual(terminal(result), { kind: 'done', complete: true });
    });
  }

  it('each match carries the line text without its terminator', async () => {
    const result = await frames(t, searchFiles, { pattern: 'dotted' });
    assert.deepEqual(result, [
      { kind: 'match', path: 'src/app.ts', line: 3, text: 'const dotted = "a.b";' },
      { kind: 'done', complete: true },
    ]);
  });

  it('rejects follow: true at validation: the gate is never asked and rg never starts', async () => {
    const calls = t.gate.calls.length;
    const error = await failure(() => runTool(t.session, searchFiles, { pattern: 'Alpha', follow: true }));
    assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(error.message, /"follow"/);
    assert.match(error.message, /only false/);
    assert.equal(t.gate.calls.length, calls);
  });
});

describe('find_files: each argument of the table', () => {
  let t: TestSession;
  before(() => {
    t = searchSession();
    writeTree(t.root, TREE);
  });
  after(async () => {
    await t.dispose();
  });

  const cases: [string, Record<string, unknown>, string[]][] = [
    ['glob by name at any depth', { glob: '*.ts' }, ['src/app.ts', 'src/util/deep.ts', 'src/util/deeper/deepest.ts']],
    ['glob by path', { glob: 'src/util/*.ts' }, ['src/util/deep.ts']],
    ['path', { glob: '*.ts', path: 'src/util' }, ['src/util/deep.ts', 'src/util/deeper/deepest.ts']],
    ['max_depth', { glob: '*', max_depth: 1 }, ['axb.txt']],
    ['max_depth under path', { glob: '*.ts', path: 'src', max_depth: 2 }, ['src/app.ts', 'src/util/deep.ts']],
    ['glob is case-sensitive', { glob: '*.md' }, ['docs/notes.md']],
    [
      'iglob: an additional glob the paths must match, case-insensitively',
      { glob: '*', iglob: '*.md' },
      ['docs/Guide.MD', 'docs/notes.md'],
    ],
    ['glob and iglob must both match', { glob: 'docs/*', iglob: 'g*' }, ['docs/Guide.MD']],
    ['glob narrows but never re-includes what hidden and no_ignore leave out', { glob: '*.log' }, []],
    ['glob "!" excludes, and excludes what a matching folder holds', { glob: '!util', path: 'src' }, ['src/app.ts']],
    ['hidden', { glob: '*', hidden: true, max_depth: 1 }, ['.dotfile', '.gitignore', 'axb.txt']],
    ['no_ignore', { glob: '*', no_ignore: true, max_depth: 1 }, ['axb.txt', 'build.log']],
    ['follow: false is accepted', { glob: '*.md', follow: false }, ['docs/notes.md']],
  ];
  for (const [name, args, expected] of cases) {
    it(name, async () => {
      const result = await frames(t, findFiles, args);
      assert.deepEqual(hits(result), expected);
      assert.deepEqual(terminal(result), { kind: 'done', complete: true });
    });
  }

  it('rejects ignore_case and literal as unknown arguments (absent from its schema)', async () => {
    for (const flag of ['ignore_case', 'literal']) {
      const error = await failure(() => runTool(t.session, findFiles, { glob: '*', [flag]: true }));
      assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
      assert.match(error.message, new RegExp(`Unknown argument "${flag}"`));
    }
  });

  it('rejects follow: true at validation', async () => {
    const error = await failure(() => runTool(t.session, findFiles, { glob: '*', follow: true }));
    assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
  });

  it('refuses a file as path, since globs would not apply to it', async () => {
    const error = await failure(() => runTool(t.session, findFiles, { glob: '*.md', path: 'src/app.ts' }));
    assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT');
    assert.match(error.message, /is a file, not a folder/);
  });

  it('names a missing folder', async () => {
    const error = await failure(() => runTool(t.session, findFiles, { glob: '*', path: 'nope' }));
    assert.equal(error.code, 'E_SANDBOX_NOT_FOUND');
    assert.match(error.message, /"nope" does not exist/);
  });
});

describe('limit and done frames', () => {
  let t: TestSession;
  before(() => {
    t = searchSession();
    const files: Record<string, string> = {};
    for (let i = 0; i < 30; i++) files[`f${String(i).padStart(2, '0')}.txt`] = 'hit\nhit\n';
    writeTree(t.root, files);
  });
  after(async () => {
    await t.dispose();
  });

  it('limit omitted: every match, then done, and never a limit frame', async () => {
    const result = await frames(t, searchFiles, { pattern: 'hit' });
    assert.equal(hits(result).length, 60);
    assert.equal(
      result.some((f) => f.kind === 'limit'),
      false,
    );
    assert.deepEqual(terminal(result), { kind: 'done', complete: true });
    const paths = await frames(t, findFiles, { glob: '*.txt' });
    assert.equal(hits(paths).length, 30);
    assert.deepEqual(terminal(paths), { kind: 'done', complete: true });
  });

  it('limit exceeded: the bounded results, a note naming the value to raise, then the limit frame', async () => {
    const result = await frames(t, searchFiles, { pattern: 'hit', limit: 7 });
    assert.equal(hits(result).length, 7);
    assert.deepEqual(result.slice(-2), [
      {
        kind: 'note',
        message:
          'Result limited to 7 matching lines; more exist. Call again with a larger limit (now 7) to see more, or narrow the search.',
      },
      { kind: 'limit', limit: 7 },
    ]);
    const paths = await frames(t, findFiles, { glob: '*.txt', limit: 1 });
    assert.equal(hits(paths).length, 1);
    assert.deepEqual(paths.slice(-2), [
      {
        kind: 'note',
        message:
          'Result limited to 1 path; more exist. Call again with a larger limit (now 1) to see more, or narrow the search.',
      },
      { kind: 'limit', limit: 1 },
    ]);
    assert.deepEqual(rgChildren(), []);
  });

  it('limit equal to the number of results: complete, no limit frame', async () => {
    const paths = await frames(t, findFiles, { glob: '*.txt', limit: 30 });
    assert.equal(hits(paths).length, 30);
    assert.deepEqual(terminal(paths), { kind: 'done', complete: true });
    assert.equal(
      paths.some((f) => f.kind === 'note'),
      false,
    );
  });

  it('rejects every bad limit at validation, before the gate, for both tools', async () => {
    for (const tool of [searchFiles, findFiles]) {
      const base = tool === searchFiles ? { pattern: 'hit' } : { glob: '*' };
      for (const limit of [0, -1, 1.5, Infinity, NaN, '3']) {
        const calls = t.gate.calls.length;
        const error = await failure(() => runTool(t.session, tool, { ...base, limit }));
        assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT', `${tool.name} limit ${String(limit)}`);
        assert.match(error.message, /Argument "limit" is invalid/);
        assert.equal(t.gate.calls.length, calls);
        assert.equal(t.log.entries.at(-1)?.verdict, 'invalid');
      }
      for (const max_depth of [0, -2, 2.5, Infinity, NaN, '1']) {
        const error = await failure(() => runTool(t.session, tool, { ...base, max_depth }));
        assert.equal(error.code, 'E_SANDBOX_INVALID_INPUT', `${tool.name} max_depth ${String(max_depth)}`);
      }
    }
  });
});

describe('zero results', () => {
  it('the note says what might have hidden matches without naming protected paths', async (tc) => {
    const t = session(tc, searchOptions({ rules: [{ glob: 'classified/**', read: 'deny' }] }));
    writeTree(t.root, { 'classified/plan.txt': 'zebra\n', '.env': 'zebra\n', 'a.txt': 'nothing\n' });
    const result = await frames(t, searchFiles, { pattern: 'zebra', path: '.' });
    assert.deepEqual(result, [
      {
        kind: 'note',
        message:
          'No line matches "zebra" in ".". What might have hidden matches: dot-prefixed files and folders were skipped (pass hidden: true); files excluded by .gitignore and similar files were skipped (pass no_ignore: true); paths that the workspace rules in force protect (secrets such as environment files and keys, and denied paths) are never searched.',
      },
      { kind: 'done', complete: true },
    ]);
    const all = await frames(t, searchFiles, {
      pattern: 'zebra',
      hidden: true,
      no_ignore: true,
      max_depth: 3,
      glob: '*.txt',
    });
    assert.equal(all.length, 2);
    const note = all[0]!;
    assert.equal(note.kind, 'note');
    if (note.kind === 'note') {
      assert.doesNotMatch(note.message, /hidden: true|no_ignore: true|classified|\.env/);
      assert.match(note.message, /only 3 folder levels deep were searched \(raise or omit max_depth\)/);
      assert.match(note.message, /only files matching "\*\.txt" were searched/);
    }
    const found = await frames(t, findFiles, { glob: 'plan*', hidden: true, no_ignore: true });
    assert.equal(hits(found).length, 0);
    assert.doesNotMatch(JSON.stringify(found), /classified/);
    assert.match(
      renderPaths(found),
      /^Note: No file matches "plan\*" in the workspace\. What might have hidden files: paths that the workspace rules in force protect/,
    );
  });
});

describe('canary: secrets are never searched nor listed', () => {
  const token = `CANARY_${randomBytes(8).toString('hex')}`;
  let t: TestSession;
  before(() => {
    t = searchSession();
    writeTree(t.root, {
      '.git/': '',
      '.gitignore': 'config/\n',
      '.env': `API_KEY=${token}\n`,
      id_rsa: `-----BEGIN OPENSSH PRIVATE KEY-----\n${token}\n`,
      'config/secret.pem': `-----BEGIN CERTIFICATE-----\n${token}\n`,
      'src/ok.ts': 'export const fine = true;\n',
    });
  });
  after(async () => {
    await t.dispose();
  });

  function assertClean(label: string, pattern: string, outcome: ToolOutcome<SearchOutput>): void {
    // The zero-results note quotes the model's own pattern back; that is not a leak.
    const quoted = JSON.stringify(pattern);
    const all = (JSON.stringify(outcome.result) + '\n' + outcome.text)
      .split(JSON.stringify(quoted).slice(1, -1))
      .join('')
      .split(quoted)
      .join('');
    for (const leak of [token, 'API_KEY', 'BEGIN', 'id_rsa', 'secret.pem', '"path":".env"', 'config/'])
      assert.equal(all.includes(leak), false, `${label}: leaked ${leak}: ${all}`);
    const result = wholeResult(outcome.result);
    assert.equal(
      result.some((f) => f.kind === 'match' || f.kind === 'path' || (f.kind === 'note' && f.path !== undefined)),
      false,
      label,
    );
  }

  const bools = [false, true];
  for (const literal of bools)
    for (const hidden of bools)
      for (const no_ignore of bools) {
        const label = `literal=${literal} hidden=${hidden} no_ignore=${no_ignore}`;
        it(`search_files ${label}`, async () => {
          for (const pattern of literal
            ? [token, 'CANARY_', 'BEGIN']
            : [token, 'CANARY_[0-9a-f]{16}', '(?i)canary', 'API_KEY|BEGIN', '.']) {
            for (const extra of [
              {},
              { ignore_case: true },
              { glob: '.env' },
              { glob: '*.pem' },
              { glob: 'id_*' },
              { iglob: '*.PEM' },
              { iglob: '.ENV' },
              { path: 'config' },
            ]) {
              const args = { pattern, literal, hidden, no_ignore, ...extra };
              if (pattern === '.' && !('glob' in extra) && !('iglob' in extra) && !('path' in extra)) continue; // "." matches src/ok.ts: fine, but not a canary probe
              assertClean(JSON.stringify(args), pattern, await runTool(t.session, searchFiles, args));
            }
          }
        });
        if (!literal)
          it(`find_files hidden=${hidden} no_ignore=${no_ignore}`, async () => {
            for (const extra of [
              { glob: '*' },
              { glob: '**' },
              { glob: '.env' },
              { glob: '*.pem' },
              { glob: 'id_*' },
              { glob: 'config/**' },
              { glob: '*', iglob: '*.PEM' },
              { glob: '*', iglob: 'ID_RSA' },
              { glob: '*', path: 'config' },
            ]) {
              const args = { hidden, no_ignore, ...extra };
              const outcome = await runTool(t.session, findFiles, args);
              const all = JSON.stringify(outcome.result) + outcome.text;
              for (const leak of ['id_rsa', 'secret.pem', '"path":".env"', '\n.env'])
                assert.equal(all.includes(leak), false, `${JSON.stringify(args)}: leaked ${leak}`);
            }
          });
      }

  it('an approved search aimed straight at a secret is still skipped, with a note about the path the model named', async () => {
    const outcome = await runTool(t.session, searchFiles, {
      pattern: 'CANARY_[0-9a-f]+',
      path: '.env',
      hidden: true,
      no_ignore: true,
    });
    assert.equal(t.gate.calls.at(-1)?.secret, true);
    assert.equal(JSON.stringify(outcome.result).includes(token), false);
    assert.equal(outcome.text.includes(token), false);
    assert.match(outcome.text, /^Note: \.env: Skipped: a workspace rule protects this path/m);
  });
});

describe('paths through links', () => {
  it('a linked folder is searched at its real place, so rules anchored there still apply (path laundering)', async (tc) => {
    const t = session(tc, searchOptions({ rules: [{ glob: 'private/inner/**', read: 'deny' }] }));
    writeTree(t.root, { 'private/open.txt': 'needle\n', 'private/inner/closed.txt': 'needle\n' });
    symlinkSync('private', nodePath.join(t.root, 'alias'));
    const result = await frames(t, searchFiles, { pattern: 'needle', path: 'alias' });
    assert.deepEqual(hits(result), ['private/open.txt:1']);
    assert.deepEqual(hits(await frames(t, findFiles, { glob: '*', path: 'alias' })), ['private/open.txt']);
  });

  it('a link to a protected place is refused before any search', async (tc) => {
    const t = session(tc, searchOptions());
    writeTree(t.root, { '.ssh/id_ed25519': 'needle\n' });
    symlinkSync('.ssh', nodePath.join(t.root, 'keys'));
    const error = await failure(() =>
      runTool(t.session, searchFiles, { pattern: 'needle', path: 'keys', hidden: true }),
    );
    assert.equal(error.code, 'E_SANDBOX_REFUSED');
    assert.deepEqual(rgChildren(), []);
  });
});

describe('cancellation', () => {
  it('200 cancelled search_files calls kill their ripgrep at once and leave no rg process', async (tc) => {
    const t = session(tc, searchOptions());
    // A FIFO with no writer blocks rg forever, so every search is still running when it is cancelled.
    execFileSync('mkfifo', [nodePath.join(t.root, 'pipe')]);
    const controllers = Array.from({ length: 200 }, () => new AbortController());
    const calls = controllers.map((c) => runTool(t.session, searchFiles, { pattern: 'x', path: 'pipe' }, c.signal));
    await waitFor(() => rgChildren().length === 200, 30_000);
    const started = Date.now();
    for (const c of controllers) c.abort();
    const settled = await Promise.allSettled(calls);
    assert.ok(Date.now() - started < 5_000);
    for (const s of settled) {
      assert.equal(s.status, 'rejected');
      assert.ok(isCancellation(s.reason), String(s.reason));
    }
    assert.deepEqual(rgChildren(), []);
  });
});

describe('multi-root', () => {
  it('searches every folder and prefixes paths with the folder name', async (tc) => {
    const t = session(tc, searchOptions({ folders: ['app', 'lib'] }));
    writeTree(t.root, { 'app/main.ts': 'needle app\n', 'lib/util.ts': 'needle lib\n', 'lib/.env': 'needle\n' });
    assert.deepEqual(await frames(t, searchFiles, { pattern: 'needle', hidden: true }), [
      { kind: 'match', path: 'app/main.ts', line: 1, text: 'needle app' },
      { kind: 'match', path: 'lib/util.ts', line: 1, text: 'needle lib' },
      { kind: 'done', complete: true },
    ]);
    assert.deepEqual(hits(await frames(t, findFiles, { glob: '*.ts', path: 'lib' })), ['lib/util.ts']);
    assert.deepEqual(hits(await frames(t, findFiles, { glob: '*.ts', limit: 1 })).length, 1);
  });
});

describe('rendering for the model', () => {
  it('search_files: matches grouped by file, compact (pinned)', async (tc) => {
    const t = session(tc, searchOptions());
    writeTree(t.root, {
      'src/b.ts': 'let todo = 1;\n\nTODO: fix\n',
      'src/a.ts': 'TODO first\n',
      'long.min.js': 'x'.repeat(3000) + 'TODO' + '\n',
    });
    const outcome = await runTool(t.session, searchFiles, { pattern: 'todo', ignore_case: true });
    assert.equal(
      outcome.text,
      [
        '4 matching lines in 3 files:',
        'long.min.js',
        `  1: ${'x'.repeat(2000)} [line cut]`,
        'src/a.ts',
        '  1: TODO first',
        'src/b.ts',
        '  1: let todo = 1;',
        '  3: TODO: fix',
      ].join('\n'),
    );
    const limited = await runTool(t.session, searchFiles, { pattern: 'TODO', path: 'src', limit: 1 });
    assert.match(
      limited.text,
      /^1 matching line in 1 file \(limited\):\nsrc\/[ab]\.ts\n {2}\d: TODO.*\nNote: Result limited to 1 matching line; more exist\. Call again with a larger limit \(now 1\) to see more, or narrow the search\.$/,
    );
  });

  it('find_files: one path a line (pinned)', () => {
    const result: SearchResult = [
      { kind: 'path', path: 'a.ts' },
      { kind: 'path', path: 'src/b.ts' },
      { kind: 'done', complete: true },
    ];
    assert.equal(renderPaths(result), '2 files:\na.ts\nsrc/b.ts');
    assert.equal(
      renderMatches([
        { kind: 'note', message: 'No line matches "x".' },
        { kind: 'done', complete: true },
      ]),
      'Note: No line matches "x".',
    );
  });

  it('the result JSON is the frame list', async (tc) => {
    const t = session(tc, searchOptions());
    writeTree(t.root, { 'a.txt': 'one\n' });
    const outcome = await runTool(t.session, findFiles, { glob: '*.txt' });
    assert.deepEqual(JSON.parse(JSON.stringify(outcome.result)), [
      { kind: 'path', path: 'a.txt' },
      { kind: 'done', complete: true },
    ]);
  });
});

/** A backend that records its queries and answers from a fixed list. */
class FakeSearch implements SandboxSearch {
  readonly supportsFollow: boolean;
  readonly queries: (ContentQuery | PathQuery)[] = [];
  private readonly answer: readonly SearchFrame[];
  constructor(supportsFollow: boolean, answer: readonly SearchFrame[]) {
    this.supportsFollow = supportsFollow;
    this.answer = answer;
  }
  searchContent(query: ContentQuery): AsyncIterable<SearchBatch> {
    this.queries.push(query);
    return this.frames();
  }
  findPaths(query: PathQuery): AsyncIterable<SearchBatch> {
    this.queries.push(query);
    return this.frames();
  }
  // One frame a batch: the tools must not depend on how frames are batched.
  private async *frames(): AsyncIterable<SearchBatch> {
    for (const frame of this.answer) yield [frame];
  }
}

/**
 * A backend with a hard internal cap. Per the port's contract it cannot honour an omitted limit, so
 * it refuses unbounded calls (and limits above its cap) instead of truncating silently.
 */
class CappedSearch implements SandboxSearch {
  readonly supportsFollow = false;
  private readonly cap: number;
  constructor(cap: number) {
    this.cap = cap;
  }
  searchContent(query: ContentQuery): AsyncIterable<SearchBatch> {
    return this.run(query);
  }
  findPaths(query: PathQuery): AsyncIterable<SearchBatch> {
    return this.run(query);
  }
  private run(query: ContentQuery | PathQuery): AsyncIterable<SearchBatch> {
    if (query.limit === undefined || query.limit > this.cap) {
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        `This search backend returns at most ${this.cap} results per call, so it cannot run ${query.limit === undefined ? 'an unbounded search' : `a search with limit ${query.limit}`}.`,
        `Call again with limit between 1 and ${this.cap}.`,
      );
    }
    const limit = query.limit;
    const cap = this.cap;
    return (async function* (): AsyncIterable<SearchBatch> {
      yield Array.from({ length: Math.min(limit, cap) }, (_, i): SearchFrame => ({
        kind: 'path',
        folder: query.scopes[0]!.folder,
        path: `f${i}`,
      }));
      yield [{ kind: 'limit', limit }];
    })();
  }
}

describe('custom backends', () => {
  it('a declared supportsFollow restores the full follow option and passes it through', async (tc) => {
    const fake = new FakeSearch(true, [{ kind: 'done', complete: true }]);
    const t = session(tc, searchOptions({ search: fake }));
    await runTool(t.session, findFiles, { glob: '*', follow: true });
    await runTool(t.session, searchFiles, { pattern: 'x', follow: true, limit: 3 });
    assert.deepEqual(
      fake.queries.map((q) => [q.follow, q.limit]),
      [
        [true, undefined],
        [true, 3],
      ],
    );
    assert.deepEqual(fake.queries[0]!.scopes, [{ folder: nodePath.basename(t.root), cwd: t.root, path: '' }]);
  });

  it('a backend with a hard cap refuses unbounded calls instead of imposing its own bound', async (tc) => {
    const t = session(tc, searchOptions({ search: new CappedSearch(10) }));
    const unbounded = await failure(() => runTool(t.session, findFiles, { glob: '*' }));
    assert.equal(unbounded.code, 'E_SANDBOX_UNSUPPORTED');
    assert.match(unbounded.message, /cannot run an unbounded search\. Call again with limit between 1 and 10/);
    const over = await failure(() => runTool(t.session, searchFiles, { pattern: 'x', limit: 11 }));
    assert.match(over.message, /a search with limit 11/);
    const bounded = await frames(t, findFiles, { glob: '*', limit: 3 });
    assert.deepEqual(hits(bounded), ['f0', 'f1', 'f2']);
    assert.deepEqual(terminal(bounded), { kind: 'limit', limit: 3 });
  });

  it('a backend that reports a limit although none was given, or never ends its stream, is a narrated io failure', async (tc) => {
    for (const answer of [
      [{ kind: 'limit', limit: 5 }],
      [{ kind: 'path', folder: 'x', path: 'a' }],
    ] as SearchFrame[][]) {
      const t = session(tc, searchOptions({ search: new FakeSearch(false, answer) }));
      const error = await failure(() => runTool(t.session, findFiles, { glob: '*' }));
      assert.equal(error.code, 'E_SANDBOX_IO');
    }
  });
});
