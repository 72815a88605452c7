import type * as Diff from 'diff';
import { lazyModule } from '../lazy-module.ts';
import { countLines } from './eol.ts';

export interface LineCounts {
  readonly added: number;
  readonly removed: number;
}

/** Beyond this many changed lines the exact diff is not searched for; the changed region is counted whole. */
const MAX_EDIT_LENGTH = 5000;
/** Bounds the diff's work (about lines × edit distance): past it the counts are the whole changed region. */
const MAX_DIFF_WORK = 20_000_000;

/**
 * `+added −removed` lines from `before` to `after`, as a line diff counts them. For a rewrite too large
 * to diff quickly (this runs in the editor's extension host), every line of the changed region counts.
 */
export function lineCounts(before: string, after: string): LineCounts {
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
  while (s + CHUNK <= room && before.slice(before.length - s - CHUNK, before.length - s) === after.slice(after.length - s - CHUNK, after.length - s)) s += CHUNK;
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
  const maxEditLength = Math.min(MAX_EDIT_LENGTH, Math.max(50, Math.floor(MAX_DIFF_WORK / Math.max(middleLines, 1))));
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
