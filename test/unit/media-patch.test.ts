import { test } from 'node:test';
import assert from 'node:assert/strict';
import { applyEdits, applyUnified } from '../../src/core/media/patch.ts';
import { closestLines } from '../../src/core/media/closest-lines.ts';
import { throwsWith } from './media-fixtures.ts';

const subject = { mediaId: 'm1', display: 'f.txt' };

test('normalized matching maps back onto CRLF text: a match ending at a line break ends before its "\\r"', () => {
  assert.deepEqual(applyEdits('k\r\na\r\nb', [{ find: 'k\na', replace: 'K\nA' }], 'crlf', subject), {
    text: 'K\r\nA\r\nb',
    replacements: 1,
    normalizedEdits: [1],
  });
  assert.deepEqual(applyEdits('a\r\nb\r\n', [{ find: 'a\n', replace: 'x\ny\n' }], 'crlf', subject), {
    text: 'x\r\ny\r\nb\r\n',
    replacements: 1,
    normalizedEdits: [1],
  });
  assert.deepEqual(applyEdits('a\r\nb\r\na\r\n', [{ find: 'a\n', replace: '', replace_all: true }], 'crlf', subject), {
    text: 'b\r\n',
    replacements: 2,
    normalizedEdits: [1],
  });
  // A CRLF find in an LF file matches too, and the replacement takes LF.
  assert.deepEqual(applyEdits('a\nb\n', [{ find: 'a\r\nb', replace: 'c\r\nd' }], 'lf', subject), {
    text: 'c\nd\n',
    replacements: 1,
    normalizedEdits: [1],
  });
});

test('an exact match is preferred over a normalized one', () => {
  assert.deepEqual(applyEdits('x\r\ny\nx\n', [{ find: 'x\n', replace: 'z\n' }], 'mixed', subject), {
    text: 'x\r\ny\nz\n',
    replacements: 1,
    normalizedEdits: [],
  });
});

test('several matches on one line are counted per line', () => {
  throwsWith(
    () => applyEdits('aaa\n', [{ find: 'a', replace: 'b' }], 'lf', subject),
    'E_SANDBOX_INVALID_INPUT',
    'find matches 3 times in m1 ("f.txt"), on line 1 (3 times); nothing was changed. Add surrounding lines to find so that it matches once, or set replace_all: true to replace every occurrence.',
  );
});

test('closest lines: the window most like the wanted text, anchored on its longest line', () => {
  const text = 'alpha\nbeta\n  const total = items.length;\n  return total;\nomega\n';
  assert.deepEqual(closestLines(text, 'const total = item.length;\nreturn totals;'), {
    line: 3,
    lines: ['  const total = items.length;', '  return total;'],
  });
  assert.equal(closestLines(text, 'zzzzzz'), undefined);
  assert.equal(closestLines(text, '\n\n'), undefined);
});

test('a unified diff for several files is refused; it patches one media', () => {
  const two = '--- a/x\n+++ b/x\n@@ -1 +1 @@\n-a\n+b\n--- a/y\n+++ b/y\n@@ -1 +1 @@\n-c\n+d\n';
  throwsWith(
    () => applyUnified('a\n', two, subject),
    'E_SANDBOX_INVALID_INPUT',
    "The unified diff changes 2 files, but media_apply_patch patches one media; nothing was changed. Split it and apply each file's part to that file's media.",
  );
  assert.deepEqual(applyUnified('a\n', '@@ -1 +1 @@\n-a\n+b\n', subject), {
    text: 'b\n',
    replacements: 1,
    normalizedEdits: [],
  });
});
