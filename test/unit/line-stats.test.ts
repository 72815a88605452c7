import { test } from 'node:test';
import assert from 'node:assert/strict';
import fc from 'fast-check';
import { countLines, detectEol, lineStats } from '../../src/core/text/eol.ts';

test('lineStats gives what detectEol and countLines give, for any text of line feeds, carriage returns and letters', () => {
  const text = fc.array(fc.constantFrom('\n', '\r', '\r\n', 'a', 'é', ' '), { maxLength: 40 }).map((parts) => parts.join(''));
  fc.assert(fc.property(text, (t) => {
    assert.deepEqual(lineStats(t), { eol: detectEol(t), lines: countLines(t) });
  }), { numRuns: 2000 });
});
