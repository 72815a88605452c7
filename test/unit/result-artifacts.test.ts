import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import type { ToolName } from '../../src/core/contract/names.ts';
import type { ArtifactPage } from '../../src/core/artifacts/types.ts';
import type { PageBudget } from '../../src/core/paging/budget.ts';
import { pagedResult, type TestSession, wholeResult } from './harness.ts';
import { rgPath, searchSession, writeTree } from './search-helpers.ts';

const PAGE = 50 * 1024;
const FILES = 100;
const LINES_PER_FILE = 1000;

function call<N extends ToolName>(t: TestSession, tool: N, input: object, page?: PageBudget) {
  return t.invoke(tool, input, page ? { page } : {});
}

/** Every line of an artifact, read through artifact_read page by page. */
async function readAll(t: TestSession, callId: string): Promise<string[]> {
  const lines: string[] = [];
  for (let offset: number | undefined = 1; offset !== undefined;) {
    const page: ArtifactPage = (await call(t, 'artifact_read', { callId, offset })).result;
    for (const line of page.lines) lines.push(line.text);
    offset = page.nextOffset;
  }
  return lines;
}

/** "path:line:text" for each match line of a search result artifact (path lines set the file). */
function matchesOf(artifactLines: readonly string[]): string[] {
  const out: string[] = [];
  let file = '';
  for (const line of artifactLines) {
    const m = /^ {2}(\d+): (.*)$/.exec(line);
    if (m) out.push(`${file}:${m[1]}:${m[2]}`);
    else if (!line.startsWith('Note: ') && !line.startsWith('done complete')) file = line;
  }
  return out;
}

describe('result artifacts: a result larger than one page', () => {
  let t: TestSession;
  const tree: Record<string, string> = {};
  before(() => {
    t = searchSession();
    for (let f = 0; f < FILES; f++) {
      tree[`src/m${String(f).padStart(3, '0')}/file.txt`] =
        Array.from({ length: LINES_PER_FILE }, (_, i) => `hit ${f}-${i} of the many`).join('\n') + '\n';
    }
    writeTree(t.root, tree);
  });
  after(async () => {
    await t.dispose();
  });

  it('search_files with 100,000 matching lines: at most 50 KiB to the model, all of them in the artifact, ending "done complete"', async () => {
    const outcome = await call(t, 'search_files', { pattern: 'hit' });
    assert.ok(Buffer.byteLength(outcome.text) <= PAGE, `${Buffer.byteLength(outcome.text)} bytes reached the model`);
    const paged = pagedResult(outcome.result);
    // The first page reached the model as soon as it was full; the rest was still being written.
    assert.match(paged.summary, /^\d+ matching lines in \d+ files? so far$/);
    assert.equal(paged.artifact.complete, false);
    assert.match(
      outcome.text.split('\n')[0]!,
      /more than one page, so the whole result goes to artifact art-[0-9a-f]+-\d+, which is still being written/,
    );
    assert.ok(paged.page.length > 100, 'the first page is a full page');
    const lines = await readAll(t, paged.artifact.callId);
    assert.equal(lines.length, t.session.artifacts.get(paged.artifact.callId).lines);
    assert.equal(lines.at(-1), 'done complete (100000 matching lines in 100 files)');
    // The page shown is the artifact's first lines, word for word.
    const shown = outcome.text.split('\n').slice(1, -1);
    assert.deepEqual(shown, lines.slice(0, paged.artifact.nextOffset - 1));
    const raw = execFileSync(rgPath(), ['--no-config', '--no-heading', '--with-filename', '--line-number', 'hit'], {
      cwd: t.root,
      maxBuffer: 64 * 1024 * 1024,
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    const expected = raw.trimEnd().split('\n').sort();
    assert.equal(expected.length, 100_000);
    assert.deepEqual(matchesOf(lines).sort(), expected);
  });

  it('artifact_grep searches the result artifact like any artifact', async () => {
    const paged = pagedResult((await call(t, 'search_files', { pattern: 'hit 7' })).result);
    const grep = wholeResult(
      (await call(t, 'artifact_grep', { callId: paged.artifact.callId, pattern: 'hit 7-99 ' })).result,
    );
    assert.deepEqual(
      grep.lines.map((l) => l.text),
      ['  100: hit 7-99 of the many'],
    );
  });

  it('find_files past one page: every path in the artifact', async () => {
    writeTree(
      t.root,
      Object.fromEntries(
        Array.from({ length: 3000 }, (_, i) => [`names/n${String(i).padStart(4, '0')}-${'x'.repeat(20)}.txt`, '']),
      ),
    );
    const outcome = await call(t, 'find_files', { glob: 'names/*.txt' });
    assert.ok(Buffer.byteLength(outcome.text) <= PAGE);
    const paged = pagedResult(outcome.result);
    assert.match(paged.summary, /^\d+ paths so far$/);
    const lines = await readAll(t, paged.artifact.callId);
    assert.equal(lines.at(-1), 'done complete (3000 paths)');
    assert.deepEqual(
      lines.slice(0, -1).sort(),
      Array.from({ length: 3000 }, (_, i) => `names/n${String(i).padStart(4, '0')}-${'x'.repeat(20)}.txt`),
    );
  });

  it('list_directory past one page: the whole tree in the artifact, in listing order', async () => {
    const outcome = await call(t, 'list_directory', {});
    assert.ok(Buffer.byteLength(outcome.text) <= PAGE);
    const paged = pagedResult(outcome.result);
    const lines = await readAll(t, paged.artifact.callId);
    assert.equal(lines[0], '.:');
    assert.match(lines.at(-1)!, /^done complete \(3\d{3} entries in \.\)$/);
    assert.match(paged.summary, /^\d+ entries in \. so far$/);
    assert.ok(lines.includes('  n0000-xxxxxxxxxxxxxxxxxxxx.txt  0 B'));
    assert.deepEqual(outcome.text.split('\n').slice(1, -1), lines.slice(0, paged.artifact.nextOffset - 1));
  });

  it('a small token budget shrinks the first page to fit it', async () => {
    // The host's tokenizer: here one token per 4 bytes, rounded up.
    const count = async (text: string): Promise<number> => Math.ceil(Buffer.byteLength(text) / 4);
    const full = pagedResult((await call(t, 'search_files', { pattern: 'hit 3' })).result);
    const outcome = await call(
      t,
      'search_files',
      { pattern: 'hit 3' },
      { bytes: PAGE, tokens: { budget: 1000, count } },
    );
    const small = pagedResult(outcome.result);
    assert.ok((await count(outcome.text)) <= 1000, `${await count(outcome.text)} tokens`);
    assert.ok(
      small.page.length > 0 && small.page.length < full.page.length / 4,
      `${small.page.length} of ${full.page.length} lines`,
    );
    await t.session.artifacts.settled(small.artifact.callId);
    await t.session.artifacts.settled(full.artifact.callId);
    assert.equal(
      t.session.artifacts.get(small.artifact.callId).lines,
      t.session.artifacts.get(full.artifact.callId).lines,
    );
  });

  it('a result within the bytes but over the token budget becomes an artifact too; one within both is unchanged', async () => {
    const count = async (text: string): Promise<number> => Math.ceil(Buffer.byteLength(text) / 4);
    const plain = await call(t, 'search_files', { pattern: 'hit 5-[12]\\d\\b' });
    assert.ok(Array.isArray(plain.result));
    assert.equal(wholeResult(plain.result).at(-1)?.kind, 'done');
    const roomy = await call(
      t,
      'search_files',
      { pattern: 'hit 5-[12]\\d\\b' },
      { bytes: PAGE, tokens: { budget: 100_000, count } },
    );
    assert.equal(roomy.text, plain.text);
    const tight = await call(
      t,
      'search_files',
      { pattern: 'hit 5-[12]\\d\\b' },
      { bytes: PAGE, tokens: { budget: 130, count } },
    );
    const paged = pagedResult(tight.result);
    assert.equal(paged.summary, '20 matching lines in 1 file');
    assert.ok((await count(tight.text)) <= 130);
    assert.ok(paged.page.length >= 1);
    const lines = await readAll(t, paged.artifact.callId);
    // The sorted rendering went to the artifact: the file's path, its lines, the terminal line.
    assert.deepEqual(lines, [
      'src/m005/file.txt',
      ...Array.from({ length: 20 }, (_, i) => `  ${11 + i}: hit 5-${10 + i} of the many`),
      'done complete (20 matching lines in 1 file)',
    ]);
  });
});
