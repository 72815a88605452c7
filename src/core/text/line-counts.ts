import type * as Diff from 'diff';
import { lazyModule } from '../lazy-module.ts';
import { countLines, lineFeedsOfUtf8, lineStatsOf } from './eol.ts';

export interface LineCounts {
  readonly added: number;
  readonly removed: number;
}

/** Beyond this many changed lines the exact diff is not searched for; the changed region is counted whole. */
const MAX_EDIT_LENGTH = 5000;
/** Bounds the diff's work (about lines × edit distance): past it the counts are the whole changed region. */
export const MAX_DIFF_WORK = 20_000_000;

/**
 * `+added −removed` lines from `before` to `after`, as a line diff counts them. For a rewrite too large
 * to diff quickly (this runs in the editor's extension host), every line of the changed region counts.
 */
export function lineCounts(before: string, after: string, maxWork = MAX_DIFF_WORK): LineCounts {
  if (before === after) return { added: 0, removed: 0 };
  // Common leading and trailing lines are cut first, so a small edit in a big file diffs quickly.
  // Compared as characters (4 KiB slices, then one by one), without splitting the texts into lines.
  const shorter = Math.min(before.length, after.length);
  const CHUNK = 4096;
  let p = 0;
  while (p + CHUNK <= shorter && before.slice(p, p + CHUNK) === after.slice(p, p + CHUNK)) p += CHUNK;
  while (p < shorter && before.charCodeAt(p) === after.charCodeAt(p)) p++;
  const start = p === 0 ? 0 : before.lastIndexOf('\n', p - 1) + 1;
  const room = shorter - start;
  let s = 0;
  while (
    s + CHUNK <= room &&
    before.slice(before.length - s - CHUNK, before.length - s) ===
      after.slice(after.length - s - CHUNK, after.length - s)
  )
    s += CHUNK;
  while (s < room && before.charCodeAt(before.length - 1 - s) === after.charCodeAt(after.length - 1 - s)) s++;
  let endA = before.length - s;
  let endB = after.length - s;
  // The common tail counts from a line start in both texts.
  const lineStart = (text: string, i: number): boolean => i === 0 || text.charCodeAt(i - 1) === 10;
  if (!(lineStart(before, endA) && lineStart(after, endB))) {
    const nl = before.indexOf('\n', endA);
    endA = nl === -1 ? before.length : nl + 1;
    endB = after.length - (before.length - endA);
  }
  const oldMiddle = before.slice(start, endA);
  const newMiddle = after.slice(start, endB);
  const oldLines = countLines(oldMiddle);
  const newLines = countLines(newMiddle);
  const middleLines = oldLines + newLines;
  const maxEditLength = Math.min(MAX_EDIT_LENGTH, Math.max(50, Math.floor(maxWork / Math.max(middleLines, 1))));
  const changes = lazyModule<typeof Diff>('diff').diffLines(oldMiddle, newMiddle, { maxEditLength });
  if (changes === undefined) return { added: newLines, removed: oldLines };
  let added = 0;
  let removed = 0;
  for (const change of changes) {
    if (change.added) added += change.count;
    else if (change.removed) removed += change.count;
  }
  return { added, removed };
}

/**
 * A changed region larger than this (both sides together) is counted whole from its bytes, never
 * decoded: a rewritten 32 MiB bundle or data file would otherwise be decoded to strings of twice
 * that and diffed in the editor's extension host.
 */
export const MAX_DECODED_BYTES = 8 * 1024 * 1024;

/** The lines of the UTF-8 bytes [from, to) as `countLines` counts them, nothing decoded. */
const linesIn = (bytes: Uint8Array, from: number, to: number): number =>
  lineStatsOf(lineFeedsOfUtf8(bytes, from, to), to <= from, bytes[to - 1] === 10).lines;

/** Bytes compared at once while looking for the common start and end of two texts. */
const BYTE_CHUNK = 64 * 1024;

/** Where two UTF-8 texts differ, in whole lines: bytes [from, endBefore) of one became [from, endAfter) of the other. */
export interface ChangedLines {
  readonly from: number;
  readonly endBefore: number;
  readonly endAfter: number;
}

/**
 * The lines two UTF-8 byte arrays differ in (`start`: where the text begins, after a BOM), from the
 * start of the line where they part to the end of the line where they meet again; undefined when
 * they are the same. Found by comparing bytes, nothing decoded.
 */
export function changedLinesOfUtf8(before: Uint8Array, after: Uint8Array, start = 0): ChangedLines | undefined {
  const a = Buffer.from(before.buffer, before.byteOffset, before.byteLength);
  const b = Buffer.from(after.buffer, after.byteOffset, after.byteLength);
  const shorter = Math.min(a.length, b.length);
  let p = start;
  while (p + BYTE_CHUNK <= shorter && a.subarray(p, p + BYTE_CHUNK).equals(b.subarray(p, p + BYTE_CHUNK)))
    p += BYTE_CHUNK;
  while (p < shorter && a[p] === b[p]) p++;
  if (p === a.length && p === b.length) return undefined;
  const room = shorter - p;
  let s = 0;
  while (
    s + BYTE_CHUNK <= room &&
    a.subarray(a.length - s - BYTE_CHUNK, a.length - s).equals(b.subarray(b.length - s - BYTE_CHUNK, b.length - s))
  )
    s += BYTE_CHUNK;
  while (s < room && a[a.length - 1 - s] === b[b.length - 1 - s]) s++;
  const from = p > start ? Math.max(start, a.lastIndexOf(10, p - 1) + 1) : start;
  const newline = a.indexOf(10, a.length - s);
  const endBefore = newline === -1 ? a.length : newline + 1;
  return { from, endBefore, endAfter: b.length - (a.length - endBefore) };
}

/**
 * `lineCounts` of the texts of two UTF-8 byte arrays, decoding only the lines they differ in: a
 * small edit in a 10 MB file decodes a few lines, not 20 MB. The same counts as `lineCounts` of the
 * whole texts, which cuts whole common lines at both ends itself, up to `MAX_DECODED_BYTES` of
 * changed lines: past it the changed region counts whole, as past the bound of work.
 */
export function lineCountsOfUtf8(
  before: Uint8Array,
  after: Uint8Array,
  start = 0,
  changed = changedLinesOfUtf8(before, after, start),
  maxWork = MAX_DIFF_WORK,
): LineCounts {
  if (changed === undefined) return { added: 0, removed: 0 };
  if (changed.endBefore - changed.from + (changed.endAfter - changed.from) > MAX_DECODED_BYTES)
    return {
      added: linesIn(after, changed.from, changed.endAfter),
      removed: linesIn(before, changed.from, changed.endBefore),
    };
  const text = (bytes: Uint8Array, end: number): string =>
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).toString('utf8', changed.from, end);
  return lineCounts(text(before, changed.endBefore), text(after, changed.endAfter), maxWork);
}
