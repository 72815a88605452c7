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

/** A text's line endings and its lines as an editor counts them (see countLines), in one pass. */
export function lineStats(text: string): { readonly eol: Eol; readonly lines: number } {
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
