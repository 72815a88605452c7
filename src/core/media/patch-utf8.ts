import { isUtf8 } from 'node:buffer';
import { lineFeedsOfUtf8, lineStatsOf, withEol, type LineStats } from '../text/eol.ts';
import { changedLinesOfUtf8, lineCountsOfUtf8, type ChangedLines, type LineCounts } from '../text/line-counts.ts';
import type { FindReplace } from './patch.ts';

export interface SplicedUtf8 {
  readonly bytes: Uint8Array;
  /** `+added −removed` lines from the text of the bytes given to the text of these. */
  readonly counts: LineCounts;
  /** The lines and line endings of these bytes; undefined when the ones given had mixed line endings. */
  readonly stats: LineStats | undefined;
}

/**
 * `applyEdits` on the bytes of a UTF-8 text (`start`: where the text begins, after a BOM), without
 * decoding them: in valid UTF-8 a well-formed find matches the bytes exactly where it matches the
 * text, so the result is the bytes `applyEdits` then `encodeText` would give, and the text of a
 * 10 MB file is never made. Undefined wherever only `applyEdits` can answer, which then decides: an
 * edit that matches nowhere (its line endings normalized, or a narrated not-found), more than once
 * without replace_all, one that changes nothing, a result over `maxBytes` (the budget, in characters
 * there: a UTF-8 text has no more characters than bytes), or bytes that are not valid UTF-8.
 */
export function spliceUtf8(
  bytes: Uint8Array,
  start: number,
  edits: readonly FindReplace[],
  stats: LineStats,
  maxBytes: number | undefined,
): SplicedUtf8 | undefined {
  const original = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  if (!isUtf8(original.subarray(start))) return undefined;
  let current = original;
  for (const edit of edits) {
    if (edit.find === '' || edit.find === edit.replace || !edit.find.isWellFormed() || !edit.replace.isWellFormed())
      return undefined;
    const next = spliceOne(
      current,
      start,
      Buffer.from(edit.find),
      Buffer.from(withEol(edit.replace, stats.eol)),
      edit.replace_all === true,
      maxBytes,
    );
    if (next === undefined) return undefined;
    current = next;
  }
  const changed = changedLinesOfUtf8(original, current, start);
  if (changed === undefined) return undefined;
  return {
    bytes: current,
    counts: lineCountsOfUtf8(original, current, start, changed),
    stats: statsAfter(original, stats, current, start, changed),
  };
}

/** The stats of `after` from those of `before`, counting only the lines that changed; undefined for mixed line endings (which do not say how many are CRLF). */
function statsAfter(
  before: Buffer,
  stats: LineStats,
  after: Buffer,
  start: number,
  changed: ChangedLines,
): LineStats | undefined {
  if (stats.eol === 'mixed') return undefined;
  const newlines = stats.lines === 0 ? 0 : before[before.length - 1] === 10 ? stats.lines : stats.lines - 1;
  const crlf = stats.eol === 'crlf' ? newlines : 0;
  const gone = lineFeedsOfUtf8(before, changed.from, changed.endBefore);
  const come = lineFeedsOfUtf8(after, changed.from, changed.endAfter);
  return lineStatsOf(
    { newlines: newlines - gone.newlines + come.newlines, crlf: crlf - gone.crlf + come.crlf },
    after.length <= start,
    after[after.length - 1] === 10,
  );
}

function spliceOne(
  current: Buffer,
  start: number,
  find: Buffer,
  replacement: Buffer,
  all: boolean,
  maxBytes: number | undefined,
): Buffer | undefined {
  const growth = replacement.length - find.length;
  const at: number[] = [];
  for (let i = current.indexOf(find, start); i !== -1; i = current.indexOf(find, i + find.length)) {
    at.push(i);
    if (at.length > 1 && !all) return undefined;
    if (maxBytes !== undefined && current.length + at.length * growth > maxBytes) return undefined;
  }
  if (at.length === 0) return undefined;
  // Not from the shared pool a small Buffer.allocUnsafe comes from: media bytes are kept, alone.
  const out = Buffer.allocUnsafeSlow(current.length + at.length * growth);
  let from = 0;
  let to = 0;
  for (const i of at) {
    to += current.copy(out, to, from, i);
    to += replacement.copy(out, to);
    from = i + find.length;
  }
  current.copy(out, to, from);
  return out;
}
