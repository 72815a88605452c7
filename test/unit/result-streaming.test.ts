import { throttledProgress } from '../../src/core/results/progress.ts';
import { describe, it, before, after } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createWriteStream, writeFileSync, type WriteStream } from 'node:fs';
import * as nodePath from 'node:path';
import { TOOLS } from '../../src/core/tools/index.ts';
import { PAGE_MAX_BYTES } from '../../src/core/paging/budget.ts';
import { readArtifact } from '../../src/core/artifacts/page.ts';
import { pagedResult, type TestSession, runTool } from './harness.ts';
import { rgChildren, searchSession, waitFor, writeTree } from './search-helpers.ts';

/** What the spool holds in memory before a write (see ResultSpool). */
const CHUNK = 64 * 1024;

describe('unbounded results stream to disk in bounded memory', () => {
  let t: TestSession;
  const FOLDERS = 200;
  const PER_FOLDER = 100;
  before(() => {
    t = searchSession();
    const files: Record<string, string> = {};
    for (let f = 0; f < FOLDERS; f++)
      for (let i = 0; i < PER_FOLDER; i++)
        files[`tree/d${String(f).padStart(3, '0')}/file-${String(i).padStart(3, '0')}-${'n'.repeat(50)}.txt`] = '';
    writeTree(t.root, files);
  });
  after(async () => {
    await t.dispose();
  });

  it('find_files "*" over 20,000 files holds at most one page and one write chunk, whatever the result\'s size', async () => {
    const outcome = await runTool(t.session, TOOLS.find_files, { glob: '*' });
    const paged = pagedResult(outcome.result);
    await t.session.artifacts.settled(paged.artifact.callId);
    const info = t.session.artifacts.get(paged.artifact.callId);
    assert.equal(info.lines, FOLDERS * PER_FOLDER + 1, 'every path and the "done complete" line');
    assert.ok(
      info.bytes > 10 * (PAGE_MAX_BYTES + CHUNK),
      `the result (${info.bytes} bytes) is ten times the bound and more`,
    );
    assert.ok(
      info.heldBytes !== undefined && info.heldBytes <= PAGE_MAX_BYTES + CHUNK + 200,
      `held ${info.heldBytes} bytes at most`,
    );
  });

  it('list_directory of the whole tree: the same bound', async () => {
    const outcome = await runTool(t.session, TOOLS.list_directory, { path: 'tree' });
    const paged = pagedResult(outcome.result);
    await t.session.artifacts.settled(paged.artifact.callId);
    const info = t.session.artifacts.get(paged.artifact.callId);
    assert.equal(
      info.lines,
      1 + FOLDERS + FOLDERS * PER_FOLDER + 1,
      'the folder line, every entry, and the "done complete" line',
    );
    assert.ok(
      info.heldBytes !== undefined && info.heldBytes <= PAGE_MAX_BYTES + CHUNK + 200,
      `held ${info.heldBytes} bytes at most`,
    );
  });

  it('a result artifact still being written: artifact_read waits for the lines it asks for, artifact_grep for the end', async () => {
    const outcome = await runTool(t.session, TOOLS.find_files, { glob: '*.txt' });
    const paged = pagedResult(outcome.result);
    const last = (
      await runTool(t.session, TOOLS.artifact_read, { callId: paged.artifact.callId, offset: 19_000, limit: 1 })
    ).result;
    assert.equal(last.lines.length, 1);
    const grep = await runTool(t.session, TOOLS.artifact_grep, {
      callId: paged.artifact.callId,
      pattern: '^done complete',
    });
    assert.equal(
      grep.text,
      '1 matching line for /^done complete/ in find_files "*.txt":\n20001:\tdone complete (20000 paths)',
    );
  });
});

/**
 * The FIFO "stream.log" in the workspace, with 5,000 lines "hit N …" (more than a page) written and
 * the pipe left open: ripgrep reading it waits for the rest until the writer ends.
 */
function pipeOfHits(t: TestSession): WriteStream {
  const pipe = nodePath.join(t.root, 'stream.log');
  execFileSync('mkfifo', [pipe]);
  const writer = createWriteStream(pipe);
  writer.write(Array.from({ length: 5000 }, (_, i) => `hit ${i} ${'x'.repeat(40)}`).join('\n') + '\n');
  return writer;
}

describe('reading a result still being written from its end', () => {
  it('artifact_read with a negative offset waits for the result to end and returns its last lines, "done complete" last', async () => {
    const t = searchSession();
    const writer = pipeOfHits(t);
    try {
      const outcome = await runTool(t.session, TOOLS.search_files, { pattern: 'hit', path: 'stream.log' });
      const paged = pagedResult(outcome.result);
      assert.equal(paged.artifact.complete, false, 'the first page came back while ripgrep still read the pipe');
      // Asked while the pipe is open: the result cannot end before the last lines below are written and the pipe closed.
      const tail = runTool(t.session, TOOLS.artifact_read, { callId: paged.artifact.callId, offset: -2 });
      writer.end('hit 5000 last\n');
      const page = (await tail).result;
      assert.deepEqual(
        page.lines.map((l) => l.text),
        ['  5001: hit 5000 last', 'done complete (5001 matching lines in 1 file)'],
      );
      assert.deepEqual(
        [page.startLine, page.endLine, page.totalLines, page.nextOffset, page.spooling],
        [5002, 5003, 5003, undefined, undefined],
      );
    } finally {
      writer.destroy();
      await t.dispose();
    }
  });
});

describe("cancelling a read that waits for a result's end", () => {
  it('a read from the end of a result that has not ended settles when its call is cancelled', async () => {
    const t = searchSession();
    try {
      const store = t.session.artifacts;
      const writer = await store.openResult({
        label: 'unending',
        source: { root: t.session.roots[0]!, rel: '', display: '' },
        stop: () => {},
      });
      writeFileSync(writer.spoolPath, '');
      const controller = new AbortController();
      // readArtifact is waiting for the end once it returns: the result never ends, so only the cancellation settles it.
      const tail = assert.rejects(readArtifact(store, writer.callId, { offset: -1 }, controller.signal), {
        code: 'E_SANDBOX_CANCELLED',
      });
      controller.abort();
      await tail;
      await writer.remove();
    } finally {
      await t.dispose();
    }
  });
});

describe('a result dropped while it is written', () => {
  // A hang is the failure this guards against: the timeout only turns it into a failed test.
  it('ends the reads waiting for it, from the end or for lines never written', { timeout: 30_000 }, async () => {
    const t = searchSession();
    try {
      const store = t.session.artifacts;
      const writer = await store.openResult({
        label: 'dropped',
        source: { root: t.session.roots[0]!, rel: '', display: '' },
        stop: () => {},
      });
      // Nothing was written before the result was dropped: its spool file is empty.
      writeFileSync(writer.spoolPath, '');
      const fromEnd = readArtifact(store, writer.callId, { offset: -1 });
      const ahead = assert.rejects(readArtifact(store, writer.callId, { offset: 10 }), {
        code: 'E_SANDBOX_INVALID_INPUT',
        message: 'offset 10 is past the end: "dropped" is empty (0 lines). There is nothing to read.',
      });
      await writer.remove();
      assert.deepEqual((await fromEnd).lines, []);
      await ahead;
      assert.throws(() => store.get(writer.callId), /not found|no artifact|unknown/i);
    } finally {
      await t.dispose();
    }
  });
});

describe('cancelling a result still being written', () => {
  it('stops ripgrep at once and keeps what was spooled, marked incomplete', async () => {
    const t = searchSession();
    const writer = pipeOfHits(t);
    // Writes still pending when ripgrep is stopped fail with EPIPE: that is the point of the test.
    const writeErrors: NodeJS.ErrnoException[] = [];
    writer.on('error', (e: NodeJS.ErrnoException) => writeErrors.push(e));
    try {
      const controller = new AbortController();
      const outcome = await runTool(
        t.session,
        TOOLS.search_files,
        { pattern: 'hit', path: 'stream.log' },
        controller.signal,
      );
      const paged = pagedResult(outcome.result);
      assert.equal(paged.artifact.complete, false, 'the first page came back while ripgrep still read the pipe');
      assert.equal(rgChildren().length, 1);
      controller.abort();
      await t.session.artifacts.settled(paged.artifact.callId);
      await waitFor(() => rgChildren().length === 0);
      const info = t.session.artifacts.get(paged.artifact.callId);
      const end = (
        await runTool(t.session, TOOLS.artifact_read, { callId: paged.artifact.callId, offset: info.lines, limit: 1 })
      ).result;
      // ripgrep may not have printed every line it read before it was stopped: the artifact holds what it did print.
      const found = Number(
        /^incomplete: the call was cancelled after (\d+) matching lines in 1 file; the lines above are all that was found$/.exec(
          end.lines[0]!.text,
        )?.[1],
      );
      assert.ok(found >= paged.page.length && found <= 5000, end.lines[0]!.text);
      assert.equal(info.lines, 1 + found + 1, 'the path, every line ripgrep printed, and the incomplete line');
      assert.ok(
        writeErrors.every((e) => e.code === 'EPIPE'),
        String(writeErrors[0]),
      );
    } finally {
      writer.destroy();
      await t.dispose();
    }
  });
});

describe('progress', () => {
  it('is reported for the first item at once, then at most once per interval, however fast items come', () => {
    let now = 1_000;
    const heard: number[] = [];
    const report = throttledProgress(
      (done) => heard.push(done),
      250,
      () => now,
    );
    for (let done = 1; done <= 1_000; done++) {
      report(done, `${done} so far`);
      if (done % 100 === 0) now += 100;
    }
    assert.deepEqual(heard, [1, 301, 601, 901]);
  });
});
