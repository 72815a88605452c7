/**
 * The byte paths of a UTF-8 media (find/replace spliced into the bytes, line stats and line counts
 * read from the bytes) give exactly what the text paths give, for any text and any edits.
 */
import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { writeFileSync } from 'node:fs';
import { TOOLS } from '../../src/core/tools/index.ts';
import { spliceUtf8 } from '../../src/core/media/patch-utf8.ts';
import { applyEdits, type FindReplace, type PatchOutcome } from '../../src/core/media/patch.ts';
import { lineFeedsOfUtf8, lineStats, lineStatsOfUtf8 } from '../../src/core/text/eol.ts';
import { lineCounts, lineCountsOfUtf8, MAX_DECODED_BYTES } from '../../src/core/text/line-counts.ts';
import { session, runTool } from './harness.ts';
import { join } from './media-fixtures.ts';

const piece = fc.constantFrom(
  'a',
  'b',
  'ab',
  ' ',
  '\n',
  '\r\n',
  '\r',
  'x\n',
  'é',
  '€',
  '😀',
  '\uFEFF',
  'line one\n',
  'line two\r\n',
);
const text = fc.array(piece, { maxLength: 40 }).map((parts) => parts.join(''));
const utf8 = (s: string): Buffer => Buffer.from(s, 'utf8');
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/** An edit whose find is a slice of `of` (which may split a surrogate pair) or any text. */
function edit(of: string): fc.Arbitrary<FindReplace> {
  const sliced = fc.tuple(fc.nat(of.length), fc.integer({ min: 1, max: 6 })).map(([at, n]) => of.slice(at, at + n));
  return fc.record({ find: fc.oneof(sliced, sliced, text), replace: text, replace_all: fc.boolean() });
}

function textPath(before: string, edits: readonly FindReplace[], maxChars: number): PatchOutcome | undefined {
  try {
    const outcome = applyEdits(before, edits, lineStats(before).eol, { mediaId: 'm1', display: 'f.txt', maxChars });
    return outcome.text === before ? undefined : outcome;
  } catch {
    return undefined;
  }
}

test('lineStatsOfUtf8 of the bytes is lineStats of the text, after a BOM too; line feeds of a window that starts at a line start add up', () => {
  fc.assert(
    fc.property(text, fc.nat(), (s, cut) => {
      assert.deepEqual(lineStatsOfUtf8(utf8(s)), lineStats(s));
      assert.deepEqual(lineStatsOfUtf8(Buffer.concat([BOM, utf8(s)]), 3), lineStats(s));
      const bytes = utf8(s);
      const starts = [0, ...[...bytes.keys()].filter((i) => bytes[i] === 10).map((i) => i + 1)];
      const at = starts[cut % starts.length]!;
      const [head, tail, whole] = [
        lineFeedsOfUtf8(bytes, 0, at),
        lineFeedsOfUtf8(bytes, at, bytes.length),
        lineFeedsOfUtf8(bytes, 0, bytes.length),
      ];
      assert.deepEqual({ newlines: head.newlines + tail.newlines, crlf: head.crlf + tail.crlf }, whole);
    }),
    { numRuns: 2000 },
  );
});

test('lineCountsOfUtf8 of two byte arrays is lineCounts of their texts', () => {
  const pair = text.chain((a) =>
    fc.tuple(
      fc.constant(a),
      fc.oneof(
        text,
        fc.array(edit(a), { minLength: 1, maxLength: 3 }).map((edits) => textPath(a, edits, 1e6)?.text ?? a),
      ),
    ),
  );
  fc.assert(
    fc.property(pair, ([a, b]) => {
      assert.deepEqual(lineCountsOfUtf8(utf8(a), utf8(b)), lineCounts(a, b));
      assert.deepEqual(
        lineCountsOfUtf8(Buffer.concat([BOM, utf8(a)]), Buffer.concat([BOM, utf8(b)]), 3),
        lineCounts(a, b),
      );
    }),
    { numRuns: 3000 },
  );
});

test('spliceUtf8 gives the bytes and counts of applyEdits then encoding, or leaves the edit to it', () => {
  let spliced = 0;
  let runs = 0;
  const cases = text.chain((s) =>
    fc.tuple(
      fc.constant(s),
      fc.array(edit(s), { minLength: 1, maxLength: 3 }),
      fc.oneof(fc.constant(1_000_000), fc.integer({ min: 0, max: 400 })),
    ),
  );
  fc.assert(
    fc.property(cases, ([before, edits, maxChars]) => {
      runs++;
      const expected = textPath(before, edits, maxChars);
      const bom = before.length % 2 === 0;
      const bytes = bom ? Buffer.concat([BOM, utf8(before)]) : utf8(before);
      const stats = lineStats(before);
      const result = spliceUtf8(bytes, bom ? 3 : 0, edits, stats, maxChars);
      if (result === undefined) return;
      spliced++;
      assert.ok(expected, `spliced where the text path refuses: ${JSON.stringify({ before, edits, maxChars })}`);
      assert.deepEqual(
        expected.normalizedEdits,
        [],
        'an edit that needs its line endings normalized is left to the text path',
      );
      assert.deepEqual(
        Buffer.from(result.bytes),
        bom ? Buffer.concat([BOM, utf8(expected.text)]) : utf8(expected.text),
      );
      assert.deepEqual(result.counts, lineCounts(before, expected.text));
      assert.deepEqual(
        result.stats,
        stats.eol === 'mixed' ? undefined : lineStats(expected.text),
        'counted from the changed lines alone',
      );
    }),
    { numRuns: 4000 },
  );
  assert.ok(spliced > runs / 8, `the byte path decided ${spliced} of ${runs} cases`);
});

test('spliceUtf8 leaves bytes that are not valid UTF-8 to the text path', () => {
  assert.equal(
    spliceUtf8(Buffer.from([0x61, 0xff, 0x0a]), 0, [{ find: 'a', replace: 'b' }], { eol: 'lf', lines: 1 }, undefined),
    undefined,
  );
  assert.equal(
    spliceUtf8(utf8('a😀b'), 0, [{ find: '\ud83d', replace: 'x' }], { eol: 'none', lines: 1 }, undefined),
    undefined,
    'a lone surrogate in find',
  );
});

test("a UTF-8 file is staged, patched and saved without its text, and the result is the text path's", async (tc) => {
  const t = session(tc);
  const body = Array.from({ length: 3000 }, (_, i) => `row ${i} é€😀${i % 7 === 0 ? '\r' : ''}\n`).join('');
  writeFileSync(join(t.root, 'u.txt'), Buffer.concat([BOM, utf8(body)]));
  const staged = await runTool(t.session, TOOLS.stage_file, { path: 'u.txt' });
  assert.deepEqual(
    { lines: staged.result.lines, eol: staged.result.eol, encoding: staged.result.encoding },
    { lines: 3000, eol: 'mixed', encoding: 'utf8bom' },
  );
  const patched = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm1',
    patch: [
      { find: 'row 10 é', replace: 'row ten\nand a half é' },
      { find: '😀', replace: ':)', replace_all: true },
    ],
  });
  assert.deepEqual(
    { added: patched.result.added, removed: patched.result.removed, lines: patched.result.lines },
    { added: 3001, removed: 3000, lines: 3001 },
  );
  const expected = body.replace('row 10 é', 'row ten\nand a half é').replaceAll('😀', ':)');
  assert.deepEqual(Buffer.from(t.session.media.get('m2').bytes), Buffer.concat([BOM, utf8(expected)]));
  const saved = await runTool(t.session, TOOLS.save_media, { media_id: 'm2' });
  assert.deepEqual({ added: saved.result.added, removed: saved.result.removed }, { added: 3001, removed: 3000 });
  const again = await runTool(t.session, TOOLS.media_apply_patch, {
    media_id: 'm2',
    patch: { find: 'row 2999', replace: 'last row' },
  });
  assert.deepEqual({ added: again.result.added, removed: again.result.removed }, { added: 1, removed: 1 });
  assert.deepEqual(t.session.media.changes('m3'), { added: 1, removed: 1 }, 'against what the save wrote');
});

test('line counts under a bound of work: a rewrite past it counts its changed region whole; small edits and work within it, the exact diff', () => {
  const before = Array.from({ length: 300 }, (_, i) => `line ${i}`).join('\n') + '\n';
  const everyOther = before
    .split('\n')
    .map((line, i) => (i % 2 === 0 && line !== '' ? line.toUpperCase() : line))
    .join('\n');
  assert.deepEqual(lineCounts(before, everyOther), { added: 150, removed: 150 });
  // Past the bound: from the first changed line (0) to the last (298), whole.
  assert.deepEqual(lineCountsOfUtf8(Buffer.from(before), Buffer.from(everyOther), 0, undefined, 1_000), {
    added: 299,
    removed: 299,
  });
  // A few changed lines are always diffed exactly, whatever the bound.
  const lines = before.split('\n');
  lines[100] = 'changed';
  lines[200] = 'changed';
  assert.deepEqual(lineCounts(before, lines.join('\n'), 1_000), { added: 2, removed: 2 });
});

test('line counts of a changed region past MAX_DECODED_BYTES: counted whole from its bytes, as past the bound of work', () => {
  const lines = Math.ceil(MAX_DECODED_BYTES / 2 / 'line\n'.length) + 10;
  const before = 'line\n'.repeat(lines);
  // The first and the last line change: the region between them is every line, too large to decode.
  const after = `first\n${'line\n'.repeat(lines - 2)}last`;
  assert.deepEqual(lineCountsOfUtf8(Buffer.from(before), Buffer.from(after)), { added: lines, removed: lines });
  // One long line rewritten (a bundle, a data file): one line each way.
  const long = (fill: string): Buffer => Buffer.from(`head\n${fill.repeat(MAX_DECODED_BYTES / 2 + 1)}\ntail\n`);
  assert.deepEqual(lineCountsOfUtf8(long('a'), long('b')), { added: 1, removed: 1 });
  // Below the bound the exact diff is kept.
  assert.deepEqual(lineCountsOfUtf8(Buffer.from('a\nb\nc\n'), Buffer.from('x\nb\ny\n')), { added: 2, removed: 2 });
});
