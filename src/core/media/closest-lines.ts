import { toLf } from '../text/eol.ts';

// The lines of a staged text that look most like the text a patch expected, for its not-found errors.

const MAX_SHOWN_LINES = 8;
const MAX_SHOWN_CHARS = 200;
const CANDIDATES = 20;
const RESEMBLANCE = 0.3;

function bigrams(s: string): Map<string, number> {
  const out = new Map<string, number>();
  for (let i = 0; i < s.length - 1; i++) {
    const g = s.slice(i, i + 2);
    out.set(g, (out.get(g) ?? 0) + 1);
  }
  return out;
}

/** Dice similarity of two trimmed lines, 0..1. */
function similarity(a: string, b: string): number {
  if (a === b) return 1;
  if (a.length < 2 || b.length < 2) return 0;
  const ga = bigrams(a);
  let common = 0;
  for (let i = 0; i < b.length - 1; i++) {
    const g = b.slice(i, i + 2);
    const n = ga.get(g) ?? 0;
    if (n > 0) {
      common++;
      ga.set(g, n - 1);
    }
  }
  return (2 * common) / (a.length + b.length - 2);
}

/** Upper bound of `similarity` from the lengths alone, to skip hopeless lines cheaply. */
function similarityBound(a: number, b: number): number {
  if (a < 2 || b < 2) return 1;
  return (2 * Math.min(a - 1, b - 1)) / (a + b - 2);
}

export interface ClosestLines {
  /** 1-based first line. */
  readonly line: number;
  readonly lines: readonly string[];
}

/**
 * The window of `text` that looks most like `wanted` (both compared line by line, trimmed, with
 * line endings normalized), or undefined when no line resembles it.
 */
export function closestLines(text: string, wanted: string): ClosestLines | undefined {
  const textLines = toLf(text).split('\n');
  const wantedLines = toLf(wanted).replace(/\n$/, '').split('\n');
  const trimmedWanted = wantedLines.map((l) => l.trim());
  // Anchor on the longest wanted line: it is the most distinctive.
  let anchor = 0;
  trimmedWanted.forEach((l, i) => {
    if (l.length > trimmedWanted[anchor]!.length) anchor = i;
  });
  const anchorText = trimmedWanted[anchor]!;
  if (anchorText === '') return undefined;

  const best: { index: number; score: number }[] = [];
  const floor = (): number => (best.length < CANDIDATES ? RESEMBLANCE : best[best.length - 1]!.score);
  textLines.forEach((raw, index) => {
    const line = raw.trim();
    if (similarityBound(line.length, anchorText.length) < floor()) return;
    const score = similarity(line, anchorText);
    if (score < floor()) return;
    best.push({ index, score });
    best.sort((x, y) => y.score - x.score || x.index - y.index);
    if (best.length > CANDIDATES) best.pop();
  });
  if (best.length === 0) return undefined;

  let chosen = { start: 0, score: -1 };
  for (const candidate of best) {
    const start = Math.max(0, candidate.index - anchor);
    let total = 0;
    trimmedWanted.forEach((w, j) => {
      total += similarity((textLines[start + j] ?? '').trim(), w);
    });
    const score = total / trimmedWanted.length;
    if (score > chosen.score || (score === chosen.score && start < chosen.start)) chosen = { start, score };
  }
  const count = Math.min(wantedLines.length, MAX_SHOWN_LINES, textLines.length - chosen.start);
  return { line: chosen.start + 1, lines: textLines.slice(chosen.start, chosen.start + count) };
}

/** `12| text` lines, long ones cut, for an error message. */
export function showLines(closest: ClosestLines): string {
  return closest.lines
    .map((l, i) => `${closest.line + i}| ${l.length > MAX_SHOWN_CHARS ? l.slice(0, MAX_SHOWN_CHARS) + '…' : l}`)
    .join('\n');
}

/** "text is at line 3", "text is at lines 3-5". */
export function range(closest: ClosestLines): string {
  const last = closest.line + closest.lines.length - 1;
  return last === closest.line ? `text is at line ${closest.line}` : `text is at lines ${closest.line}-${last}`;
}
