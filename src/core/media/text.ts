import { createHash } from 'node:crypto';
import { diffLines } from 'diff';

/** A text encoding a media keeps from its file (VS Code's encoding ids). UTF-16 is recognised by its BOM only. */
export type TextEncoding = 'utf8' | 'utf8bom' | 'utf16le' | 'utf16be';
export type MediaEncoding = TextEncoding | 'binary';
/** `mixed`: both CRLF and lone LF occur; `none`: no line break at all. */
export type Eol = 'lf' | 'crlf' | 'mixed' | 'none';

export interface DecodedText {
  readonly text: string;
  readonly encoding: TextEncoding;
}

const UTF8_BOM = [0xef, 0xbb, 0xbf] as const;

function startsWith(bytes: Uint8Array, prefix: readonly number[]): boolean {
  return prefix.every((b, i) => bytes[i] === b);
}

function strictDecode(label: string, bytes: Uint8Array): string | undefined {
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/**
 * The text of a file's bytes, or undefined when they are not text (invalid UTF-8 without a UTF-16
 * BOM, or containing NUL characters).
 */
export function decodeText(bytes: Uint8Array): DecodedText | undefined {
  let decoded: DecodedText | undefined;
  if (startsWith(bytes, UTF8_BOM)) {
    const text = strictDecode('utf-8', bytes.subarray(3));
    decoded = text === undefined ? undefined : { text, encoding: 'utf8bom' };
  } else if (startsWith(bytes, [0xff, 0xfe])) {
    const text = strictDecode('utf-16le', bytes.subarray(2));
    decoded = text === undefined ? undefined : { text, encoding: 'utf16le' };
  } else if (startsWith(bytes, [0xfe, 0xff])) {
    const text = strictDecode('utf-16be', bytes.subarray(2));
    decoded = text === undefined ? undefined : { text, encoding: 'utf16be' };
  } else {
    const text = strictDecode('utf-8', bytes);
    decoded = text === undefined ? undefined : { text, encoding: 'utf8' };
  }
  if (decoded === undefined || decoded.text.includes('\u0000')) return undefined;
  return decoded;
}

/** The bytes of `text` in `encoding`, with the BOM that encoding carries. */
export function encodeText(text: string, encoding: TextEncoding): Uint8Array {
  switch (encoding) {
    case 'utf8': return new Uint8Array(Buffer.from(text, 'utf8'));
    case 'utf8bom': return new Uint8Array(Buffer.concat([Buffer.from(UTF8_BOM), Buffer.from(text, 'utf8')]));
    case 'utf16le': return new Uint8Array(Buffer.concat([Buffer.from([0xff, 0xfe]), Buffer.from(text, 'utf16le')]));
    case 'utf16be': {
      const body = Buffer.from(text, 'utf16le');
      body.swap16();
      return new Uint8Array(Buffer.concat([Buffer.from([0xfe, 0xff]), body]));
    }
  }
}

export function detectEol(text: string): Eol {
  let crlf = 0;
  let lf = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    if (i > 0 && text.charCodeAt(i - 1) === 13) crlf++; else lf++;
  }
  if (crlf > 0 && lf > 0) return 'mixed';
  if (crlf > 0) return 'crlf';
  if (lf > 0) return 'lf';
  return 'none';
}

export function toLf(text: string): string {
  return text.replace(/\r\n/g, '\n');
}

/**
 * `text` with the file's line endings: a model writes LF, and a CRLF file must stay CRLF.
 * A file with mixed or no line endings gives no rule, so the text is kept as written.
 */
export function withEol(text: string, eol: Eol): string {
  if (eol === 'crlf') return toLf(text).replace(/\n/g, '\r\n');
  if (eol === 'lf') return toLf(text);
  return text;
}

/** Lines as an editor counts them: "" has 0, "a" and "a\n" have 1, "a\nb" has 2. */
export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 0;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n : n + 1;
}

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
  const changes = diffLines(oldMiddle, newMiddle, { maxEditLength });
  if (changes === undefined) return { added: newLines, removed: oldLines };
  let added = 0;
  let removed = 0;
  for (const change of changes) {
    if (change.added) added += change.count;
    else if (change.removed) removed += change.count;
  }
  return { added, removed };
}

/** The hex SHA-256 of some bytes: how a media remembers the disk it was staged from. */
export function hashBytes(bytes: Uint8Array): string {
  return createHash('sha256').update(bytes).digest('hex');
}

export function formatBytes(n: number): string {
  if (n < 1024) return `${n} byte${n === 1 ? '' : 's'}`;
  if (n < 1024 ** 2) return `${(n / 1024).toFixed(1)} KiB`;
  if (n < 1024 ** 3) return `${(n / 1024 ** 2).toFixed(1)} MiB`;
  return `${(n / 1024 ** 3).toFixed(1)} GiB`;
}

export function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
