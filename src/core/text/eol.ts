/** A file's line endings. `mixed`: both CRLF and lone LF occur; `none`: no line break at all. */
export type Eol = 'lf' | 'crlf' | 'mixed' | 'none';

/** The line endings of a text with `newlines` line feeds, `crlf` of them preceded by a carriage return. */
export function eolOf(newlines: number, crlf: number): Eol {
  if (newlines === 0) return 'none';
  if (crlf === newlines) return 'crlf';
  return crlf === 0 ? 'lf' : 'mixed';
}

export function detectEol(text: string): Eol {
  return lineStats(text).eol;
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

/** A text's line endings and its lines as an editor counts them (see countLines). */
export interface LineStats {
  readonly eol: Eol;
  readonly lines: number;
}

/** A text's line endings and its lines as an editor counts them (see countLines), in one pass. */
export function lineStats(text: string): LineStats {
  if (text === '') return { eol: 'none', lines: 0 };
  let newlines = 0;
  let crlf = 0;
  // Most texts hold no carriage return at all: one search settles it, and the loop skips the check.
  const anyCr = text.indexOf('\r') !== -1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) {
    newlines++;
    if (anyCr && i > 0 && text.charCodeAt(i - 1) === 13) crlf++;
  }
  return { eol: eolOf(newlines, crlf), lines: text.endsWith('\n') ? newlines : newlines + 1 };
}

/** The line feeds in a stretch of text, and how many of them end a CRLF. */
export interface LineFeeds {
  readonly newlines: number;
  readonly crlf: number;
}

/**
 * The line feeds of UTF-8 bytes in [from, to), without decoding them: a line feed and a carriage
 * return are single bytes there and no other character holds those bytes. A line feed at `from`
 * counts as a lone one (a window that starts at a line start cuts no CRLF).
 */
export function lineFeedsOfUtf8(bytes: Uint8Array, from: number, to: number): LineFeeds {
  const buf = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(0, to);
  let newlines = 0;
  let crlf = 0;
  const anyCr = buf.indexOf(13, from) !== -1;
  for (let i = buf.indexOf(10, from); i !== -1; i = buf.indexOf(10, i + 1)) {
    newlines++;
    if (anyCr && i > from && buf[i - 1] === 13) crlf++;
  }
  return { newlines, crlf };
}

/** `lineStats` of a text with these line feeds; `endsWithNewline`: its last character is one (false for an empty text). */
export function lineStatsOf(feeds: LineFeeds, empty: boolean, endsWithNewline: boolean): LineStats {
  if (empty) return { eol: 'none', lines: 0 };
  return { eol: eolOf(feeds.newlines, feeds.crlf), lines: endsWithNewline ? feeds.newlines : feeds.newlines + 1 };
}

/** `lineStats` of the text of UTF-8 bytes from `start` (after a BOM), without decoding them. */
export function lineStatsOfUtf8(bytes: Uint8Array, start = 0): LineStats {
  return lineStatsOf(
    lineFeedsOfUtf8(bytes, start, bytes.length),
    bytes.length <= start,
    bytes[bytes.length - 1] === 10,
  );
}

/** Lines as an editor counts them: "" has 0, "a" and "a\n" have 1, "a\nb" has 2. */
export function countLines(text: string): number {
  return lineStats(text).lines;
}

/** The 1-based line of the character at `index`. */
export function lineAt(text: string, index: number): number {
  let line = 1;
  for (let i = text.indexOf('\n'); i !== -1 && i < index; i = text.indexOf('\n', i + 1)) line++;
  return line;
}
