// Issue 26, item 2: past its first page, artifact_grep writes its lines to the result artifact as
// bytes (a plain line copied behind its prefix), the rest through the string path. The artifact must
// hold exactly what the string path renders: the same result asked with a page large enough to hold
// it whole is rendered line by line from GrepLine objects, and the two are compared byte for byte.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import fc from 'fast-check';
import { grepLineRenderer } from '../../src/core/artifacts/render.ts';
import type { ArtifactGrepResult } from '../../src/core/artifacts/types.ts';
import { pagedResult, session, wholeResult, type TestSession } from './harness.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';

const WHOLE = { bytes: 64 * 1024 * 1024 };
const SMALL = { bytes: 256 };

/** The grep rendered from its GrepLine objects (a page that holds it all), and the result artifact written past a small page. */
async function bothWays(
  t: TestSession,
  bytes: Buffer,
  input: { pattern: string; context: number; literal?: boolean },
): Promise<{ expected: string; actual: string } | undefined> {
  writeFileSync(nodePath.join(t.root, 'f.txt'), bytes);
  const { callId } = oneFile((await t.invoke('open_file', { path: 'f.txt' })).result);
  const grep = { callId, maxResults: 10_000, ...input };
  const whole: ArtifactGrepResult = wholeResult((await t.invoke('artifact_grep', grep, { page: WHOLE })).result);
  const render = grepLineRenderer(false);
  const expected = whole.lines.map((line, i) => render(line, i > 0 ? whole.lines[i - 1] : undefined) + '\n').join('');
  if (Buffer.byteLength(expected) < 4 * SMALL.bytes) return undefined;
  const paged = pagedResult((await t.invoke('artifact_grep', grep, { page: SMALL })).result);
  assert.equal(paged.artifact.complete, true);
  const spool = await t.session.artifacts.lease(paged.artifact.callId, async (artifact) =>
    readFileSync(artifact.spoolPath, 'utf8'),
  );
  // The artifact ends with its "done complete (…)" line after the lines.
  const actual = spool.slice(0, spool.lastIndexOf('\n', spool.length - 2) + 1);
  assert.match(spool.slice(actual.length), /^done complete \(/);
  return { expected, actual };
}

/** A line of the kinds the byte path must leave to the string path, or copy exactly. */
const lineKind = fc.oneof(
  fc.constantFrom(
    '',
    'needle',
    'a plain line',
    '\tindented needle\t',
    'ends in CR needle\r',
    'x'.repeat(1999) + 'needle',
    'é'.repeat(1001) + ' needle',
  ),
  fc.string({ unit: 'grapheme', maxLength: 60 }).map((s) => s.replace(/[\n\r]/g, ' ')),
  fc.integer({ min: 1995, max: 2010 }).map((n) => 'y'.repeat(n)),
  fc.integer({ min: 2100, max: 9000 }).map((n) => 'z'.repeat(n) + ' needle at the end'),
  fc.integer({ min: 700, max: 1200 }).map((n) => '€'.repeat(n) + ' needle'),
);

test('attack: artifact_grep written as bytes past its first page equals the lines rendered one by one (any lines, any context)', async (tc) => {
  const t = session(tc);
  await fc.assert(
    fc.asyncProperty(
      fc.array(lineKind, { minLength: 10, maxLength: 200 }),
      fc.boolean(),
      fc.boolean(),
      fc.integer({ min: 0, max: 6 }),
      async (lines, bom, lastNewline, context) => {
        const text = lines.join('\n') + (lastNewline ? '\n' : '');
        const bytes = Buffer.concat([
          bom ? Buffer.from([0xef, 0xbb, 0xbf]) : Buffer.alloc(0),
          Buffer.from(text, 'utf8'),
        ]);
        if (!text.includes('needle')) return;
        const both = await bothWays(t, bytes, { pattern: 'needle', context, literal: true });
        fc.pre(both !== undefined);
        assert.equal(both.actual, both.expected);
      },
    ),
    { numRuns: 40 },
  );
});

test('attack: artifact_grep as bytes over reads that cut lines (256 KiB reads, long lines, CRLF) equals the string path', async (tc) => {
  const t = session(tc);
  const parts: Buffer[] = [];
  for (let i = 1; i <= 30_000; i++) {
    const line =
      i % 997 === 0
        ? 'w'.repeat(5000 + (i % 3000)) + ' needle'
        : i % 7 === 0
          ? `needle ${i} ünïcödé`
          : `line ${i} ${'•'.repeat(i % 40)}`;
    parts.push(Buffer.from(line + (i % 5 === 0 ? '\r\n' : '\n'), 'utf8'));
  }
  for (const context of [0, 3, 50]) {
    const both = await bothWays(t, Buffer.concat(parts), { pattern: 'needle', context });
    assert.ok(both && both.actual.length > 100_000, `${both?.actual.length ?? 0} bytes`);
    assert.equal(both.actual, both.expected, `context ${context}`);
  }
});
