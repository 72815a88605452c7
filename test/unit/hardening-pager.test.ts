// Issue 26, item 2: artifact_grep with context froze the extension host. The pager stepped down one
// item at a time copying the page twice per step, and the grep held every line before paging them.
// The work is counted here, never timed; bench/cases/artifacts.ts times it against `rg -C 50`.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { PAGE_MAX_BYTES, largestFitting } from '../../src/core/paging/budget.ts';
import { ResultPager } from '../../src/core/results/pager.ts';
import { renderPaged } from '../../src/core/paging/paged.ts';
import { GREP_WRITE_BYTES } from '../../src/core/artifacts/grep-bytes.ts';
import { SpoolReader, type SpoolLine } from '../../src/core/artifacts/reader.ts';
import { LineIndexBuilder } from '../../src/core/artifacts/line-index.ts';
import { createNewlineCounter } from '../../src/core/artifacts/newlines.ts';
import fc from 'fast-check';
import { pagedResult, session, testDir, type TestSession } from './harness.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

/** What the spool holds in memory before a write (see ResultSpool). */
const CHUNK = 64 * 1024;

/** `lines` lines, every 101st (from line 51) matching "needle": with context 50 the groups touch, so a grep shows every line. */
function needleEvery101(lines: number): string {
  let text = '';
  for (let i = 1; i <= lines; i++) text += i % 101 === 51 ? `needle at line ${i}\n` : `line ${i} lorem ipsum\n`;
  return text;
}

test('attack: a page chosen from 100,000 items measures O(log n) page sizes, not one per item dropped', async () => {
  const max = 100_000;
  let measured = 0;
  let texts = 0;
  // Item k is 20 bytes: 2,560 of them fill 50 KiB.
  const fitting = await largestFitting(
    max,
    (k) => {
      measured++;
      return 100 + 20 * k;
    },
    () => {
      texts++;
      return '';
    },
    { bytes: PAGE_MAX_BYTES },
  );
  assert.equal(fitting, Math.floor((PAGE_MAX_BYTES - 100) / 20));
  assert.ok(measured <= 2 * Math.ceil(Math.log2(max + 1)), `measured ${measured} page sizes for ${max} items`);
  assert.equal(texts, 0, 'no page text is built when bytes settle it');
});

test('attack: the first page of a result artifact measures each held item once, whatever the number of items', async (tc) => {
  const t = session(tc);
  const n = 5000;
  const items = Array.from({ length: n }, (_, i) => `item ${i} ${'x'.repeat(40)}`);
  let rendered = 0;
  const pager = new ResultPager<string>({
    store: t.session.artifacts,
    budget: { bytes: PAGE_MAX_BYTES },
    label: 'many items',
    source: { root: t.session.roots[0]!, rel: '', display: '' },
    render: (item) => {
      rendered++;
      return item;
    },
  });
  await pager.overflow(items);
  await pager.complete(['done complete']);
  rendered = 0;
  // Every UTF-8 size measured while the page is chosen: one per item, and a few per size tried.
  const byteLength = Buffer.byteLength;
  let measures = 0;
  Buffer.byteLength = ((...args: Parameters<typeof byteLength>) => {
    measures++;
    return byteLength(...args);
  }) as typeof byteLength;
  let page;
  try {
    page = await pager.page('5000 items');
  } finally {
    Buffer.byteLength = byteLength;
  }
  // The largest page that fits: one item more would not.
  const k = page.page.length;
  const text = (m: number): string =>
    renderPaged(
      { ...page, artifact: { ...page.artifact, nextOffset: m + 1 }, page: items.slice(0, m) },
      (item) => item,
    );
  assert.ok(
    k > 900 && Buffer.byteLength(text(k)) <= PAGE_MAX_BYTES && Buffer.byteLength(text(k + 1)) > PAGE_MAX_BYTES,
    `${k} items on the page`,
  );
  assert.equal(rendered, n, 'each item rendered once');
  assert.ok(measures <= n + 4 * Math.ceil(Math.log2(n + 1)), `${measures} sizes measured for ${n} items`);
});

/** Opens `text` as big.txt in a new session and returns the session and the artifact's callId. */
async function openBig(tc: Parameters<typeof session>[0], text: string): Promise<{ t: TestSession; callId: string }> {
  const t = session(tc);
  writeFileSync(nodePath.join(t.root, 'big.txt'), text);
  const opened = await t.invoke('open_file', { path: 'big.txt' });
  return { t, callId: oneFile(opened.result).callId };
}

test('attack: artifact_grep with context 50 on 100,000 lines (a match every 101) streams them to a result artifact, holding one page and one write chunk at most (the lines past the page are written as bytes, 256 KiB at a time, one buffer written while the next fills)', async (tc) => {
  const { t, callId } = await openBig(tc, needleEvery101(100_000));
  const outcome = await t.invoke('artifact_grep', { callId, pattern: 'needle', context: 50, maxResults: 10_000 });
  const paged = pagedResult(outcome.result);
  assert.ok(Buffer.byteLength(outcome.text) <= PAGE_MAX_BYTES);
  assert.equal(paged.summary, '990 matching lines for /needle/ in big.txt');
  assert.equal(paged.artifact.complete, true);
  const info = t.session.artifacts.get(paged.artifact.callId);
  // Lines 1 to 99,990 (the last match, 99,940, and its 50 lines after), then "done complete".
  assert.equal(info.lines, 99_990 + 1);
  assert.ok(
    info.heldBytes !== undefined && info.heldBytes <= PAGE_MAX_BYTES + CHUNK + 2 * GREP_WRITE_BYTES + 200,
    `held ${info.heldBytes} bytes at most`,
  );
  const head = (await t.invoke('artifact_read', { callId: paged.artifact.callId, offset: 50, limit: 3 })).result;
  assert.deepEqual(
    head.lines.map((l) => l.text),
    ['50-\tline 50 lorem ipsum', '51:\tneedle at line 51', '52-\tline 52 lorem ipsum'],
  );
  const tail = (await t.invoke('artifact_read', { callId: paged.artifact.callId, offset: -2 })).result;
  assert.deepEqual(
    tail.lines.map((l) => l.text),
    ['99990-\tline 99990 lorem ipsum', 'done complete (990 matching lines for /needle/ in big.txt)'],
  );
});

test('attack: cancelling artifact_grep once its result artifact exists ends the call as cancelled, and the artifact says where it stopped', async (tc) => {
  const { t, callId } = await openBig(tc, needleEvery101(20_000));
  const controller = new AbortController();
  const opened: string[] = [];
  // The first output exists: the result artifact is opened (the first page is full). Cancel right then.
  t.session.artifacts.onDidChange((change) => {
    if (change.type !== 'opened' || change.callId === callId) return;
    opened.push(change.callId);
    controller.abort();
  });
  await assert.rejects(
    t.invoke(
      'artifact_grep',
      { callId, pattern: 'needle', context: 50, maxResults: 10_000 },
      { signal: controller.signal },
    ),
    { code: 'E_SANDBOX_CANCELLED' },
  );
  assert.equal(opened.length, 1);
  const result = opened[0]!;
  await t.session.artifacts.settled(result);
  const info = t.session.artifacts.get(result);
  assert.ok(info.lines < 19_990, `${info.lines} lines written of 19,990`);
  const end = (await t.invoke('artifact_read', { callId: result, offset: -1 })).result;
  assert.equal(
    end.lines[0]!.text,
    `incomplete: the call was cancelled after ${info.lines - 1} lines of the result (198 matching lines for /needle/ in big.txt); the lines above are all that was written`,
  );
});

/** The CLI session's spool folders in the temp folder. */
const cliSpools = (): string[] => readdirSync(tmpdir()).filter((n) => n.startsWith('workspace-tools-cli-'));

/** The size of the first result artifact's spool file under `spool` (the second spool file of the run), or 0. */
function resultSpoolBytes(spool: string): number {
  for (const run of readdirSync(spool)) {
    try {
      return statSync(nodePath.join(spool, run, '2.spool')).size;
    } catch {
      /* not yet */
    }
  }
  return 0;
}

// A hang is the failure this guards against (a frozen event loop cannot hear the signal): the timeout only turns it into a failed test.
test(
  'attack: SIGTERM to a CLI session in the middle of a 300,000-line artifact_grep with context ends the call and the process at once',
  { timeout: 120_000 },
  async (tc) => {
    const ws = testDir(tc);
    writeFileSync(nodePath.join(ws.path, 'big.txt'), needleEvery101(300_000));
    const before = cliSpools();
    const child = spawn(
      process.execPath,
      [
        '--disable-warning=MODULE_TYPELESS_PACKAGE_JSON',
        nodePath.resolve(import.meta.dirname, '../../src/cli/main.ts'),
        '--root',
        ws.path,
        '--gate',
        'approve',
      ],
      { stdio: ['pipe', 'pipe', 'pipe'] },
    );
    tc.after(() => {
      child.kill('SIGKILL');
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
    const replies: string[] = [];
    let buffer = '';
    child.stdout.on('data', (chunk: Buffer) => {
      buffer += chunk.toString();
      for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
        replies.push(buffer.slice(0, nl));
        buffer = buffer.slice(nl + 1);
      }
    });
    const waitFor = async (done: () => boolean): Promise<void> => {
      while (!done()) await new Promise((r) => setTimeout(r, 5));
    };
    try {
      child.stdin.write('{"tool":"open_file","input":{"path":"big.txt"}}\n');
      await waitFor(() => replies.length === 1);
      const { callId } = (JSON.parse(replies[0]!) as { result: { callId: string } }).result;
      const spool = nodePath.join(
        tmpdir(),
        cliSpools().find((n) => !before.includes(n))!,
      );
      child.stdin.write(
        `${JSON.stringify({ tool: 'artifact_grep', input: { callId, pattern: 'needle', context: 50, maxResults: 10_000 } })}\n`,
      );
      // The result artifact has its first lines on disk: the grep is under way (it has about 8 MB to write).
      await waitFor(() => resultSpoolBytes(spool) > 0 || replies.length > 1);
      assert.equal(replies.length, 1, 'the grep was still running');
      child.kill('SIGTERM');
      // stdin stays open: the signal alone ends the call and the session.
      assert.equal(await exited, 143);
      assert.equal(replies.length, 2);
      assert.equal((JSON.parse(replies[1]!) as { error?: { code: string } }).error?.code, 'E_SANDBOX_CANCELLED');
      assert.equal(cliSpools().includes(nodePath.basename(spool)), false, 'the session removed its spool folder');
    } finally {
      child.kill('SIGKILL');
    }
  },
);

/** The lines of `bytes` (as a spool file, with a BOM or not) in each range, in order on one reader, by `lines` and by `lineBatches`. */
async function bothReads(
  dir: string,
  bytes: Buffer,
  bom: boolean,
  ranges: readonly (readonly [number, number])[],
): Promise<[SpoolLine[], SpoolLine[]]> {
  const file = nodePath.join(dir, 'spool');
  writeFileSync(file, bytes);
  const builder = new LineIndexBuilder(createNewlineCounter());
  builder.feed(bytes);
  return SpoolReader.with(file, builder.finish(), bom, async (reader) => {
    const one: SpoolLine[] = [];
    const batched: SpoolLine[] = [];
    for (const [from, to] of ranges) {
      for await (const line of reader.lines(from, to)) one.push(line);
      for await (const batch of reader.lineBatches(from, to)) batched.push(...batch);
    }
    return [one, batched];
  });
}

test("grep reads lines in batches exactly as the line reader reads them one by one: long lines at the scan's edge, CRLF, a BOM, characters cut in half, bytes that are not UTF-8", async (tc) => {
  const dir = testDir(tc).path;
  const scan = 8000;
  const cases: Buffer[] = [
    Buffer.from(
      `${'a'.repeat(scan)}\n${'b'.repeat(scan + 1)}\n${'c'.repeat(scan + 2)}\nshort\r\n\n${'é'.repeat(3000)}\n${'d'.repeat(scan + 1)}`,
    ),
    Buffer.from(`${'x'.repeat(scan + 1)}`),
    Buffer.from(`${'x'.repeat(scan + 2)}`),
    Buffer.concat([Buffer.from([0xef, 0xbb, 0xbf]), Buffer.from('first\r\nsecond\r\n')]),
    Buffer.from(Array.from({ length: 30_000 }, (_, i) => `line ${i} ${'z'.repeat(i % 97)}`).join('\n')),
  ];
  for (const [i, bytes] of cases.entries()) {
    const builder = new LineIndexBuilder(createNewlineCounter());
    builder.feed(bytes);
    const lines = builder.finish().lines;
    const [one, batched] = await bothReads(dir, bytes, i === 3, [[1, lines]]);
    assert.equal(one.length, lines);
    assert.deepEqual(batched, one, `case ${i}`);
  }
  // Text, and bytes that are not UTF-8: a stray continuation, a lead byte cut short, an encoded surrogate, past U+10FFFF, a BOM mid-file.
  const pieces = fc.constantFrom(
    ...['a', 'é', '😀', '\n', '\r\n', '\r', 'x'.repeat(4000), 'y'.repeat(8001), '\u0000'].map((p) => Buffer.from(p)),
    ...[
      [0x80],
      [0xff],
      [0xc3],
      [0xe2, 0x82],
      [0xed, 0xa0, 0x80],
      [0xf4, 0x90, 0x80, 0x80],
      [0xef, 0xbb, 0xbf],
      [0xf0, 0x9f, 0x98],
    ].map((b) => Buffer.from(b)),
  );
  // Several ranges on one reader, as grep reads its groups: a later range may start inside the last read.
  await fc.assert(
    fc.asyncProperty(
      fc.array(pieces, { maxLength: 40 }),
      fc.array(fc.tuple(fc.nat(40), fc.nat(3)), { minLength: 1, maxLength: 4 }),
      async (parts, spans) => {
        const bytes = Buffer.concat(parts);
        let at = 0;
        const ranges = spans.map(([gap, length]): [number, number] => {
          const from = at + gap + 1;
          at = from + length;
          return [from, from + length];
        });
        const [one, batched] = await bothReads(dir, bytes, false, ranges);
        assert.deepEqual(batched, one);
      },
    ),
    { numRuns: 200 },
  );
});
