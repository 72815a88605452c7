// Issue 44, item 8: a result keeps being written after its call returned; it stays within the
// artifact disk budget, and stops when nobody can read it any more.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createWriteStream, readdirSync, statSync, type WriteStream } from 'node:fs';
import * as nodePath from 'node:path';
import type { TestContext } from 'node:test';
import { DEFAULT_LIMITS } from '../../src/core/pipeline/session-options.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import { pagedResult, session, type TestSession } from './harness.ts';
import { rgChildren, searchOptions, waitFor, writeTree } from './search-helpers.ts';

const BUDGET = 1024 * 1024;

/** A session with real ripgrep whose artifacts share a disk budget of `budget` bytes. */
function budgeted(t: TestContext, budget = BUDGET): TestSession {
  const options = searchOptions();
  return session(t, {
    ...options,
    overrides: { ...options.overrides, limits: () => ({ ...DEFAULT_LIMITS, artifactBudgetBytes: budget }) },
  });
}

/** Bytes of every spool file the session's artifacts have on disk now. */
function spooledBytes(t: TestSession): number {
  const dir = t.session.artifacts.spoolDir;
  return readdirSync(dir).reduce((sum, name) => sum + statSync(nodePath.join(dir, name)).size, 0);
}

/** A named pipe in the workspace that ripgrep reads, fed 5,000 matching lines and kept open: a result that does not end. */
function endlessPipe(t: TestContext, s: TestSession): WriteStream {
  const pipe = nodePath.join(s.root, 'stream.log');
  execFileSync('mkfifo', [pipe]);
  const writer = createWriteStream(pipe);
  // Writes still pending when ripgrep is stopped fail with EPIPE: that is what the tests want.
  writer.on('error', () => undefined);
  writer.write(Array.from({ length: 5000 }, (_, i) => `hit ${i} ${'x'.repeat(40)}`).join('\n') + '\n');
  t.after(() => writer.destroy());
  return writer;
}

describe('a result written after its call returned stays within the artifact disk budget', () => {
  it('attack: one search cannot fill the disk after it returned: its spooling stops at the budget, ripgrep is stopped, and the artifact says it was cut and why', async (t) => {
    const s = budgeted(t);
    // About 7 MB of matching lines: seven times the budget.
    const tree: Record<string, string> = {};
    for (let f = 0; f < 200; f++)
      tree[`src/d${String(f).padStart(3, '0')}/notes.txt`] =
        Array.from({ length: 1000 }, (_, i) => `line ${i} of file ${f}: words go on`).join('\n') + '\n';
    tree['old.txt'] = 'z'.repeat(300 * 1024);
    writeTree(s.root, tree);
    // An artifact opened earlier, and not used since: the least recently used, it makes room first.
    const old = oneFile((await s.invoke('open_file', { path: 'old.txt' })).result).callId;

    const paged = pagedResult((await s.invoke('search_files', { pattern: 'o' })).result);
    const callId = paged.artifact.callId;
    await s.session.artifacts.settled(callId);
    await waitFor(() => rgChildren().length === 0);

    const info = s.session.artifacts.get(callId);
    assert.ok(info.spoolBytes <= BUDGET, `the result holds ${info.spoolBytes} bytes, over the ${BUDGET}-byte budget`);
    assert.ok(
      spooledBytes(s) <= BUDGET,
      `${spooledBytes(s)} bytes of spool files on disk, over the ${BUDGET}-byte budget`,
    );
    assert.ok(info.lines < 200_000, `all ${info.lines} lines were kept`);
    const last = (await s.invoke('artifact_read', { callId, offset: -1 })).result.lines[0]!.text;
    assert.match(
      last,
      /^cut: the result reached the artifact disk budget \(1\.0 MiB\), so the search was stopped after [\d,]+ matching lines in [\d,]+ files; the lines above are those that fit\. Narrow the search \(a path, a glob, a limit\), or ask the user to raise the artifact budget\.$/,
    );
    await assert.rejects(s.invoke('artifact_read', { callId: old }), {
      code: 'E_SANDBOX_NOT_FOUND',
      message: /was evicted to keep artifacts within their disk budget/,
    });
  });

  it('a budget too small for one write: the model still gets its first page, and the artifact holds only the line saying it was cut', async (t) => {
    const s = budgeted(t, 48 * 1024);
    writeTree(s.root, {
      'many.txt': Array.from({ length: 20_000 }, (_, i) => `match ${i} ${'w'.repeat(30)}`).join('\n'),
    });
    const paged = pagedResult((await s.invoke('search_files', { pattern: 'match' })).result);
    assert.ok(paged.page.length > 0);
    await s.session.artifacts.settled(paged.artifact.callId);
    await waitFor(() => rgChildren().length === 0);
    const lines = (await s.invoke('artifact_read', { callId: paged.artifact.callId })).result.lines.map((l) => l.text);
    assert.equal(lines.length, 1);
    assert.match(
      lines[0]!,
      /^cut: the result reached the artifact disk budget \(48\.0 KiB\), so the search was stopped after [\d,]+ matching lines in 1 file; the lines above are those that fit\./,
    );
    assert.ok(spooledBytes(s) <= 48 * 1024);
  });

  it('a result nobody can read any more stops: ripgrep ends when its artifact is evicted', async (t) => {
    const s = budgeted(t);
    const pipe = endlessPipe(t, s);
    writeTree(s.root, { 'big.txt': 'y'.repeat(BUDGET - 64 * 1024) });
    const paged = pagedResult((await s.invoke('search_files', { pattern: 'hit', path: 'stream.log' })).result);
    assert.equal(paged.artifact.complete, false, 'the first page came back while ripgrep still read the pipe');
    assert.equal(rgChildren().length, 1);
    // Opening a file that needs the room evicts the result, least recently used.
    await s.invoke('open_file', { path: 'big.txt' });
    await assert.rejects(s.invoke('artifact_read', { callId: paged.artifact.callId }), { code: 'E_SANDBOX_NOT_FOUND' });
    await waitFor(() => rgChildren().length === 0);
    pipe.write('hit after the eviction\n');
    assert.ok(spooledBytes(s) <= BUDGET);
  });

  it('a result nobody can read any more stops: ripgrep ends when its session ends', async (t) => {
    const s = budgeted(t);
    endlessPipe(t, s);
    const paged = pagedResult((await s.invoke('search_files', { pattern: 'hit', path: 'stream.log' })).result);
    assert.equal(paged.artifact.complete, false);
    assert.equal(rgChildren().length, 1);
    await s.session.dispose();
    await waitFor(() => rgChildren().length === 0);
  });
});
