import type * as Diff from 'diff';
import type { StructuredPatch, StructuredPatchHunk } from 'diff';
import { lazyModule } from '../lazy-module.ts';
import { SandboxError, invalidInput } from '../errors.ts';
import { toLf, withEol, type Eol } from '../text/eol.ts';
import { closestLines, range, showLines } from './closest-lines.ts';

/** One find/replace edit, as media_apply_patch receives it. */
export interface FindReplace {
  readonly find: string;
  readonly replace: string;
  readonly replace_all?: boolean | undefined;
}

/** Which media an edit is applied to, for the messages. */
export interface PatchSubject {
  readonly mediaId: string;
  readonly display: string;
  /** Security: set for a media staged from a protected path (its taint): errors never quote its lines. */
  readonly protectedFrom?: string;
  /** The largest text, in characters, the patch may produce (the staged-media budget): checked before it is built. */
  readonly maxChars?: number;
  /** Where the person raises the staged-media budget, as the host names it (default: VS Code's setting). */
  readonly budgetSetting?: string;
}

export interface PatchOutcome {
  readonly text: string;
  /** How many occurrences were replaced in all. */
  readonly replacements: number;
  /** 1-based numbers of the edits that matched only after normalizing line endings. */
  readonly normalizedEdits: readonly number[];
}

/** Where `find` occurs in `text`, as [start, end) offsets of `text`. */
interface Match {
  readonly start: number;
  readonly end: number;
}

/** Where `find` occurs, at most `cap` times (the rest are not collected). */
function exactMatches(text: string, find: string, cap = Infinity): Match[] {
  const out: Match[] = [];
  for (let i = text.indexOf(find); i !== -1 && out.length < cap; i = text.indexOf(find, i + find.length))
    out.push({ start: i, end: i + find.length });
  return out;
}

/**
 * Matches of `find` with CRLF and LF treated alike. Offsets are mapped back onto the original text:
 * a match that ends before a line break ends before its "\r", one that includes it includes both.
 */
function normalizedMatches(text: string, find: string): Match[] {
  const normalFind = toLf(find);
  if (normalFind === '') return [];
  // Normalized indices of the "\n"s that were "\r\n" in the original, ascending.
  const crlfAt: number[] = [];
  let normal = '';
  let last = 0;
  for (let i = text.indexOf('\r\n'); i !== -1; i = text.indexOf('\r\n', i + 2)) {
    normal += text.slice(last, i);
    crlfAt.push(normal.length);
    normal += '\n';
    last = i + 2;
  }
  normal += text.slice(last);
  const original = (index: number): number => {
    let lo = 0;
    let hi = crlfAt.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (crlfAt[mid]! < index) lo = mid + 1;
      else hi = mid;
    }
    return index + lo;
  };
  return exactMatches(normal, normalFind).map((m) => ({ start: original(m.start), end: original(m.end) }));
}

const MAX_LISTED_MATCHES = 20;

/** 1-based line numbers of ascending offsets, in one pass over the text. */
function linesAt(text: string, offsets: readonly number[]): number[] {
  const out: number[] = [];
  let line = 1;
  let newline = text.indexOf('\n');
  for (const offset of offsets) {
    while (newline !== -1 && newline < offset) {
      line++;
      newline = text.indexOf('\n', newline + 1);
    }
    out.push(line);
  }
  return out;
}

/** "at lines 2, 4 and 6", "on line 1 (30 times)": distinct lines, the first few of them. */
function whereMatches(text: string, matches: readonly Match[]): string {
  const perLine = new Map<number, number>();
  for (const line of linesAt(
    text,
    matches.map((m) => m.start),
  ))
    perLine.set(line, (perLine.get(line) ?? 0) + 1);
  const items: string[] = [...perLine]
    .slice(0, MAX_LISTED_MATCHES)
    .map(([line, n]) => (n > 1 ? `${line} (${n} times)` : String(line)));
  if (perLine.size > MAX_LISTED_MATCHES) items.push(`${perLine.size - MAX_LISTED_MATCHES} more lines`);
  return perLine.size === 1 ? `on line ${items[0]}` : `at lines ${listOf(items)}`;
}

function listOf(items: readonly (string | number)[]): string {
  if (items.length <= 1) return items.join('');
  return `${items.slice(0, -1).join(', ')} and ${items[items.length - 1]}`;
}

/** Why a tainted media's lines are not quoted, for the not-found errors. */
function unquoted(subject: PatchSubject): string {
  return `Its lines are not shown: it was staged from "${subject.protectedFrom}", which a workspace rule protects.`;
}

function notFound(text: string, find: string, what: string, subject: PatchSubject, next: string): SandboxError {
  const where = `in ${subject.mediaId} ("${subject.display}")`;
  if (subject.protectedFrom !== undefined) {
    return new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `${what} was not found ${where}; nothing was changed. ${unquoted(subject)}`,
      `Check that the text is in this version of the file (earlier edits may have changed it), then call media_apply_patch again.`,
    );
  }
  const closest = closestLines(text, find);
  if (closest === undefined) {
    return new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `${what} was not found ${where}, and no line resembles it; nothing was changed.`,
      `Check that the text is in this version of the file (earlier edits may have changed it), then call media_apply_patch again.`,
    );
  }
  return new SandboxError(
    'E_SANDBOX_NOT_FOUND',
    `${what} was not found ${where}; nothing was changed. The closest ${range(closest)}:\n${showLines(closest)}\n${next}`,
    '',
  );
}

/**
 * Applies find/replace edits in order, each to the result of the one before; all or nothing.
 * Matching is exact first, then with line endings normalized; replacement text takes the file's
 * line endings (`eol`), so a model that writes LF keeps a CRLF file CRLF.
 */
export function applyEdits(text: string, edits: readonly FindReplace[], eol: Eol, subject: PatchSubject): PatchOutcome {
  let current = text;
  let replacements = 0;
  const normalizedEdits: number[] = [];
  edits.forEach((edit, i) => {
    const label = edits.length > 1 ? `Edit ${i + 1} of ${edits.length}: ` : '';
    const what = edits.length > 1 ? `${label}find` : 'find';
    if (edit.find === '')
      throw invalidInput(
        `${label}find is empty, and an empty find would match everywhere; nothing was changed.`,
        `Give the exact text to replace (to replace the whole file, call stage_file with content).`,
      );
    if (edit.find === edit.replace)
      throw invalidInput(
        `${label}find and replace are the same text, so the edit would change nothing; nothing was changed.`,
        `Give the new text in replace.`,
      );
    const replacement = withEol(edit.replace, eol);
    // Security: a replace_all of a short find by a long replacement multiplies the text; it is
    // refused before it is built, not after (a 1.7 MB file could otherwise grow to gigabytes).
    const growth = replacement.length - edit.find.length;
    const room =
      subject.maxChars === undefined || growth <= 0 || edit.replace_all !== true
        ? Infinity
        : Math.max(0, Math.floor((subject.maxChars - current.length) / growth));
    let matches = exactMatches(current, edit.find, room + 1);
    if (matches.length > room) throw tooLarge(edit, label, subject, room);
    if (matches.length === 0) {
      matches = normalizedMatches(current, edit.find);
      if (matches.length > 0) normalizedEdits.push(i + 1);
    }
    if (matches.length === 0) {
      throw notFound(
        current,
        edit.find,
        what,
        subject,
        'Copy the text exactly as it is there (indentation and whitespace included) and call media_apply_patch again.',
      );
    }
    if (matches.length > 1 && edit.replace_all !== true) {
      throw invalidInput(
        `${what} matches ${matches.length} times in ${subject.mediaId} ("${subject.display}"), ${whereMatches(current, matches)}; nothing was changed. Add surrounding lines to find so that it matches once, or set replace_all: true to replace every occurrence.`,
        '',
      );
    }
    const projected = matches.reduce((n, m) => n + replacement.length - (m.end - m.start), current.length);
    if (subject.maxChars !== undefined && projected > subject.maxChars)
      throw tooLarge(edit, label, subject, matches.length - 1);
    let next = '';
    let last = 0;
    for (const m of matches) {
      next += current.slice(last, m.start) + replacement;
      last = m.end;
    }
    current = next + current.slice(last);
    replacements += matches.length;
  });
  return { text: current, replacements, normalizedEdits };
}

function tooLarge(edit: FindReplace, label: string, subject: PatchSubject, room: number): SandboxError {
  return new SandboxError(
    'E_SANDBOX_TOO_LARGE',
    `${label}replacing ${edit.replace_all ? 'every occurrence of find' : 'find'} would make ${subject.mediaId} ("${subject.display}") larger than the staged-media budget of ${subject.maxChars} characters (room for ${Math.max(0, room)} replacements of this size); nothing was changed. Replace fewer occurrences, or a shorter text, or ask the user to raise the staged-media budget (${subject.budgetSetting ?? 'workspaceTools.media.memoryBudgetMB'}).`,
    '',
  );
}

function hunkHeader(h: StructuredPatchHunk): string {
  return `@@ -${h.oldStart},${h.oldLines} +${h.newStart},${h.newLines} @@`;
}

/** The lines a hunk expects to find: its context and "-" lines. */
function hunkOldText(h: StructuredPatchHunk): string {
  return h.lines
    .filter((l) => l.startsWith(' ') || l.startsWith('-'))
    .map((l) => l.slice(1))
    .join('\n');
}

/**
 * Applies a unified diff (one file's hunks) with the `diff` package; a diff written with LF applies
 * to a CRLF text and keeps it CRLF. Failure names the first hunk that does not fit.
 */
export function applyUnified(text: string, unified: string, subject: PatchSubject): PatchOutcome {
  // diff (~11 KB) loads on the first unified diff, not at activation.
  const { applyPatch: applyUnifiedDiff, parsePatch } = lazyModule<typeof Diff>('diff');
  let patches: StructuredPatch[];
  try {
    patches = parsePatch(unified);
  } catch (e) {
    const reason = e instanceof Error ? e.message : String(e);
    throw invalidInput(
      `The unified diff could not be parsed: ${reason}; nothing was changed.`,
      `Give hunks in the form "@@ -start,count +start,count @@" followed by " ", "-" and "+" lines, or use {find, replace} edits.`,
    );
  }
  const withHunks = patches.filter((p) => p.hunks.length > 0);
  if (withHunks.length === 0) {
    throw invalidInput(
      'The unified diff has no hunks (no "@@ -start,count +start,count @@" lines); nothing was changed.',
      'Give at least one hunk, or use {find, replace} edits.',
    );
  }
  if (withHunks.length > 1) {
    throw invalidInput(
      `The unified diff changes ${withHunks.length} files, but media_apply_patch patches one media; nothing was changed. Split it and apply each file's part to that file's media.`,
      '',
    );
  }
  const patch = withHunks[0]!;
  const result = applyUnifiedDiff(text, patch, { autoConvertLineEndings: true });
  if (result !== false) return { text: result, replacements: patch.hunks.length, normalizedEdits: [] };
  // Find the first hunk that does not fit, to name it.
  let failing = patch.hunks.length - 1;
  for (let k = 1; k <= patch.hunks.length; k++) {
    if (
      applyUnifiedDiff(text, { ...patch, hunks: patch.hunks.slice(0, k) }, { autoConvertLineEndings: true }) === false
    ) {
      failing = k - 1;
      break;
    }
  }
  const hunk = patch.hunks[failing]!;
  const what = `The unified diff does not apply: hunk ${failing + 1} of ${patch.hunks.length} (${hunkHeader(hunk)}) expects lines that`;
  const where = `${subject.mediaId} ("${subject.display}")`;
  if (subject.protectedFrom !== undefined) {
    return notFoundThrow(
      `${what} are not in ${where}; nothing was changed. ${unquoted(subject)}`,
      `Check that the diff was made against this version of the file, or use {find, replace} edits.`,
    );
  }
  const closest = closestLines(text, hunkOldText(hunk));
  if (closest === undefined) {
    return notFoundThrow(
      `${what} are not in ${where}, and no line resembles them; nothing was changed.`,
      `Check that the diff was made against this version of the file, or use {find, replace} edits.`,
    );
  }
  return notFoundThrow(
    `${what} are not in ${where}; nothing was changed. The closest ${range(closest)}:\n${showLines(closest)}\nMake the hunk's context and "-" lines match the media exactly, or use {find, replace} edits, and call media_apply_patch again.`,
    '',
  );
}

function notFoundThrow(what: string, next: string): never {
  throw new SandboxError('E_SANDBOX_NOT_FOUND', what, next);
}
