import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { lineStats } from '../../src/core/text/eol.ts';

/** The same figures the slow, obvious way: split on line feeds. */
function reference(t: string): { eol: string; lines: number } {
  const parts = t.split('\n');
  const breaks = parts.length - 1;
  const crlf = parts.slice(0, -1).filter((p) => p.endsWith('\r')).length;
  const eol = breaks === 0 ? 'none' : crlf === breaks ? 'crlf' : crlf === 0 ? 'lf' : 'mixed';
  return { eol, lines: t === '' ? 0 : t.endsWith('\n') ? breaks : breaks + 1 };
}

test('lineStats (and detectEol, countLines, which read it) gives the line endings and lines a split on line feeds gives, for any text of line feeds, carriage returns and letters', () => {
  const text = fc
    .array(fc.constantFrom('\n', '\r', '\r\n', 'a', 'é', ' '), { maxLength: 40 })
    .map((parts) => parts.join(''));
  fc.assert(
    fc.property(text, (t) => {
      assert.deepEqual(lineStats(t), reference(t));
    }),
    { numRuns: 2000 },
  );
});
