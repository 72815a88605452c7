import { MAX_COLUMNS, MAX_LINE_CHARS } from './ripgrep-args.ts';

export interface ContentRecord {
  /** As ripgrep printed it: relative to its working directory. */
  readonly path: string;
  readonly line: number;
  readonly text: string;
  readonly cut: boolean;
}

const NUL = 0x00;
const LF = 0x0a;
const COLON = 0x3a;
const EMPTY = Buffer.alloc(0);
// What ripgrep appends to a line it shortened under --max-columns-preview.
const PREVIEW_MARKER = / \[\.\.\. (?:omitted end of long line|\d+ more match(?:es)?)\]$/;

/** Folder-relative "/"-separated form of a path ripgrep printed. */
export function normalizeRgPath(raw: string): string {
  const slashed = process.platform === 'win32' ? raw.replace(/\\/g, '/') : raw;
  return slashed.startsWith('./') ? slashed.slice(2) : slashed;
}

/** A line's text for the model: no line terminator, at most MAX_LINE_CHARS characters. */
export function lineText(bytes: Buffer): { text: string; cut: boolean } {
  let text = bytes.toString('utf8');
  if (text.endsWith('\r')) text = text.slice(0, -1);
  let cut = false;
  if (bytes.length > MAX_COLUMNS) {
    const marker = PREVIEW_MARKER.exec(text);
    if (marker) {
      // The preview may stop inside a multi-byte character.
      text = text.slice(0, marker.index).replace(/\uFFFD$/, '');
      cut = true;
    }
  }
  if (text.length > MAX_LINE_CHARS) {
    let end = MAX_LINE_CHARS;
    const last = text.charCodeAt(end - 1);
    if (last >= 0xd800 && last <= 0xdbff) end -= 1;
    text = text.slice(0, end);
    cut = true;
  }
  return { text, cut };
}

/**
 * Parses ripgrep's standard printer run with `--null --with-filename --line-number --no-heading`:
 * `path NUL line ':' text LF` per matching line, fed in arbitrary chunks. A path may contain LF, a
 * line cannot. ripgrep also prints, for binary files, `path ': ' message LF` with no NUL; those are
 * recognised by the path (the file just reported, or the explicitly searched path) and dropped.
 */
export class ContentParser {
  private pending: Buffer = EMPTY;
  private lastPath: Buffer = EMPTY;
  private lastPathText = '';
  private readonly explicitPath: Buffer;

  /** `explicitPath`: the path given to ripgrep on its command line ("" when none). */
  constructor(explicitPath: string) {
    this.explicitPath = Buffer.from(explicitPath);
  }

  push(chunk: Buffer): ContentRecord[] {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const out: ContentRecord[] = [];
    let pos = 0;
    while (pos < buf.length) {
      const nul = buf.indexOf(NUL, pos);
      const lf = buf.indexOf(LF, pos);
      if (lf !== -1 && (nul === -1 || lf < nul) && this.isMessage(buf.subarray(pos, lf))) {
        pos = lf + 1;
        continue;
      }
      if (nul === -1) break;
      const end = buf.indexOf(LF, nul + 1);
      if (end === -1) break;
      const pathBytes = buf.subarray(pos, nul);
      const colon = buf.indexOf(COLON, nul + 1);
      const line = colon === -1 || colon > end ? NaN : Number(buf.toString('latin1', nul + 1, colon));
      if (Number.isInteger(line) && line > 0) {
        // A file's lines come together: its path is decoded once.
        if (!pathBytes.equals(this.lastPath)) {
          this.lastPath = Buffer.from(pathBytes);
          this.lastPathText = normalizeRgPath(pathBytes.toString('utf8'));
        }
        const { text, cut } = lineText(buf.subarray(colon + 1, end));
        out.push({ path: this.lastPathText, line, text, cut });
      }
      pos = end + 1;
    }
    this.pending = pos >= buf.length ? EMPTY : Buffer.from(buf.subarray(pos));
    return out;
  }

  private isMessage(segment: Buffer): boolean {
    return startsWithPathColon(segment, this.lastPath) || startsWithPathColon(segment, this.explicitPath);
  }
}

function startsWithPathColon(segment: Buffer, path: Buffer): boolean {
  if (path.length === 0 || segment.length < path.length + 2) return false;
  return (
    segment.subarray(0, path.length).equals(path) && segment[path.length] === COLON && segment[path.length + 1] === 0x20
  );
}

/** Splits `rg --files --null` output, fed in arbitrary chunks, into paths. */
export class NulSplitter {
  private pending: Buffer = EMPTY;

  push(chunk: Buffer): string[] {
    const buf = this.pending.length === 0 ? chunk : Buffer.concat([this.pending, chunk]);
    const end = buf.lastIndexOf(NUL);
    this.pending = end + 1 >= buf.length ? EMPTY : Buffer.from(buf.subarray(end + 1));
    if (end === -1) return [];
    // Decoded at once, not path by path (a call into the runtime each): a NUL ends every path and
    // is never part of a UTF-8 sequence, so the text splits where the bytes do, with the same
    // replacement characters for bytes that are not UTF-8.
    const out: string[] = [];
    for (const path of buf.toString('utf8', 0, end).split('\0')) if (path !== '') out.push(normalizeRgPath(path));
    return out;
  }
}

export interface RgDiagnostics {
  /** Paths ripgrep could not read, with its reason. */
  readonly unreadable: readonly { readonly path: string; readonly reason: string }[];
  /** Every other line, as ripgrep wrote it. */
  readonly other: readonly string[];
}

// rg: <path>: <reason> (os error N)
const PATH_ERROR = /^rg: (.+): ([^:]+ \(os error \d+\))$/;

/** Sorts ripgrep's stderr into per-path read errors and everything else. */
export function parseStderr(stderr: string): RgDiagnostics {
  const unreadable: { path: string; reason: string }[] = [];
  const other: string[] = [];
  for (const line of stderr.split('\n')) {
    if (line.trim() === '') continue;
    const m = PATH_ERROR.exec(line);
    if (m) unreadable.push({ path: normalizeRgPath(m[1]!), reason: m[2]! });
    else other.push(line);
  }
  return { unreadable, other };
}
