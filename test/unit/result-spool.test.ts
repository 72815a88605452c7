import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { ResultSpool } from '../../src/core/artifacts/result-spool.ts';

test('a spool writes every line as given, byte for byte, across chunk edges: non-ASCII, surrogate pairs, lines longer than a chunk, empty lines', async (t) => {
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'wt-spool-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  const lines: string[] = [];
  for (let i = 0; i < 5000; i++)
    lines.push(i % 7 === 0 ? `ünïcödé ${i} 😀 ${'é'.repeat(i % 50)}` : `line ${i} ${'x'.repeat(i % 90)}`);
  lines.splice(1000, 0, 'y'.repeat(200_000), '', '中'.repeat(30_000), 'z'.repeat(21_845));
  const indexes: number[] = [];
  const spool = await ResultSpool.create(nodePath.join(dir, 'spool'), {
    onWritten: (index) => indexes.push(index.bytes),
  });
  for (const line of lines) await spool.line(line);
  const index = await spool.finish();
  const expected = Buffer.from(lines.map((l) => `${l}\n`).join(''), 'utf8');
  assert.ok(readFileSync(nodePath.join(dir, 'spool')).equals(expected));
  assert.equal(index.bytes, expected.length);
  assert.equal(index.lines, lines.length);
  assert.ok(indexes.length > 3, 'it wrote in chunks, telling readers each time');
  assert.ok(
    indexes.every((bytes, i) => i === 0 || bytes > indexes[i - 1]!),
    'what is on disk only grows',
  );
});
