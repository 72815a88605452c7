import { SandboxError, cancelled, errnoCode } from '../errors.ts';
import { rejectsPattern, type Ripgrep } from '../ripgrep/process.ts';
import { withReader } from './leased.ts';
import { GrepBytesWriter, type GrepByteSink } from './grep-bytes.ts';
import type { SpoolLine, SpoolReader } from './reader.ts';
import { grepLineRenderer } from './render.ts';
import type { ArtifactStore } from './store.ts';
import type { GrepHead, GrepLine, GrepOptions } from './types.ts';

/* The artifact_grep contract: ripgrep over one artifact's spool, its hits read back as lines. */

/** Matching lines artifact_grep returns when `maxResults` is not given. */
export const GREP_DEFAULT_MAX_RESULTS = 100;
/** The most matching lines one artifact_grep collects, whatever `maxResults` asks (each hit is held in memory). */
export const GREP_MAX_RESULTS = 10_000;

/**
 * A grep's lines (matches with their context), read a batch at a time in file order. Given a sink,
 * the lines from the moment it is ready on go to it as rendered bytes instead of being yielded.
 */
export type GrepLines = (sink?: GrepByteSink) => AsyncIterable<readonly GrepLine[]>;

/**
 * Searches one artifact with ripgrep (`rg`: the session's; undefined when it has none), then hands
 * `use` what was found and its lines, read while the artifact is held open: nothing holds them all,
 * however many context lines they make.
 */
export function grepArtifact<R>(
  store: ArtifactStore,
  rg: Ripgrep | undefined,
  callId: string,
  options: GrepOptions,
  signal: AbortSignal,
  use: (head: GrepHead, lines: GrepLines) => Promise<R>,
): Promise<R> {
  return store.lease(callId, async (artifact) => {
    if (!rg)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        'ripgrep is not available in this installation, so artifact_grep cannot run. Page the artifact with artifact_read instead.',
        '',
      );
    // ripgrep searches the whole spool: a result still being written is searched once complete.
    await artifact.live?.finished(signal);
    if (signal.aborted) throw cancelled();
    const asked = options.maxResults ?? GREP_DEFAULT_MAX_RESULTS;
    // Security: every hit is held until its lines are read; a maxResults of 1e12 on a file of 20
    // million matching lines held them all (3.5 GB).
    const maxResults = Math.min(asked, GREP_MAX_RESULTS);
    const { binary } = artifact.info;
    const context = binary ? 0 : (options.context ?? 0);
    const { hits, more } = await runRipgrep(rg, {
      file: artifact.spoolPath,
      pattern: options.pattern,
      literal: options.literal ?? false,
      ignoreCase: options.ignoreCase ?? false,
      maxLines: maxResults,
      raw: binary,
      crlf: artifact.index.crlf > 0,
      offsetShift: artifact.info.encoding === 'utf8bom' ? 3 : 0,
      signal,
    });
    const head: GrepHead = {
      callId,
      path: artifact.info.path,
      pattern: options.pattern,
      literal: options.literal ?? false,
      binary,
      matchCount: hits.length,
      maxResults,
      ...(asked > maxResults ? { maxResultsAsked: asked } : {}),
      limited: more,
      contextOmitted: binary && (options.context ?? 0) > 0,
    };
    return withReader(artifact, (reader) =>
      use(head, (sink) => (binary ? binaryHits(reader, hits, signal) : textHits(reader, hits, context, signal, sink))),
    );
  });
}

/** The first match on one matching line. */
interface RgHit {
  /** 1-based line number. */
  readonly line: number;
  /** Byte offset of the first match on that line, in the spool file. */
  readonly offset: number;
}

interface RgSearch {
  readonly file: string;
  readonly pattern: string;
  readonly literal: boolean;
  readonly ignoreCase: boolean;
  /** Matching lines wanted; one more is asked for, to know whether the result was cut. */
  readonly maxLines: number;
  /** Search raw bytes: no BOM sniffing or transcoding (binary artifacts). */
  readonly raw: boolean;
  /** The file has CRLF line ends, so "$" must match before "\r\n". */
  readonly crlf: boolean;
  /** ripgrep reports offsets after a UTF-8 BOM it strips: add this to get file offsets. */
  readonly offsetShift: number;
  readonly signal: AbortSignal;
}

/**
 * Runs ripgrep over one spool file. `--only-matching --byte-offset` makes each match a short
 * `line:offset:match` record, so the output stays small however long the lines are; the lines
 * themselves are then read from the spool through its index.
 */
async function runRipgrep(rg: Ripgrep, search: RgSearch): Promise<{ hits: RgHit[]; more: boolean }> {
  const args = [
    '--no-config',
    '--color',
    'never',
    '--no-heading',
    '--no-filename',
    '--line-number',
    '--byte-offset',
    '--only-matching',
    '--text',
    '--max-count',
    String(search.maxLines + 1),
    search.ignoreCase ? '--ignore-case' : '--case-sensitive',
    ...(search.literal ? ['--fixed-strings'] : []),
    ...(search.raw ? ['--encoding', 'none'] : []),
    ...(search.crlf ? ['--crlf'] : []),
    '--regexp',
    search.pattern,
    '--',
    search.file,
  ];
  if (search.signal.aborted) throw cancelled();
  const child = rg.run(args, { signal: search.signal });
  const hits: RgHit[] = [];
  let more = false;
  // Parser state: digits of the line number, then of the offset, then skip the match text to "\n".
  let state: 'line' | 'offset' | 'skip' = 'line';
  let lineNumber = 0;
  let offset = 0;
  let lastLine = 0;
  try {
    read: for await (const chunk of child.stdout) {
      let i = 0;
      while (i < chunk.length) {
        if (state === 'skip') {
          const nl = chunk.indexOf(10, i);
          if (nl === -1) break;
          i = nl + 1;
          state = 'line';
          lineNumber = 0;
          offset = 0;
          continue;
        }
        const b = chunk[i++]!;
        if (b === 58 /* : */) {
          if (state === 'line') {
            state = 'offset';
            continue;
          }
          state = 'skip';
          if (lineNumber === lastLine) continue;
          lastLine = lineNumber;
          if (hits.length === search.maxLines) {
            more = true;
            break read;
          }
          hits.push({ line: lineNumber, offset: offset + search.offsetShift });
        } else if (state === 'line') {
          lineNumber = lineNumber * 10 + (b - 48);
        } else {
          offset = offset * 10 + (b - 48);
        }
      }
    }
  } finally {
    // Killed before its stdout closes, so a result cut at maxLines is not reported as a failure.
    child.kill();
  }
  const exit = await child.exited;
  if (search.signal.aborted) throw cancelled();
  if (exit.spawnError) {
    throw new SandboxError(
      'E_SANDBOX_IO',
      `ripgrep could not be started (${errnoCode(exit.spawnError) || exit.spawnError.message}) from "${rg.path}". Page the artifact with artifact_read instead, and tell the user that search is unavailable.`,
      '',
      { cause: exit.spawnError },
    );
  }
  if (more || exit.code === 0 || exit.code === 1) return { hits, more };
  const reason =
    exit.stderr.replace(/^rg: /gm, '').replace(/\s+/g, ' ').trim().slice(0, 400) || `exit code ${String(exit.code)}`;
  if (rejectsPattern(reason)) {
    throw new SandboxError(
      'E_SANDBOX_INVALID_INPUT',
      `ripgrep rejected the pattern ${JSON.stringify(search.pattern)}: ${reason}.`,
      `Fix the regex (ripgrep uses Rust regex syntax: no look-around or backreferences), or pass literal: true to search for the text as written.`,
    );
  }
  throw new SandboxError(
    'E_SANDBOX_IO',
    `ripgrep failed while searching the artifact: ${reason}.`,
    `Retry once; if it fails again, page it with artifact_read.`,
  );
}

/**
 * Matching lines with their context, in file order, groups that touch merged, a batch at a time;
 * once `sink` is ready, the rest goes to it as bytes.
 * Security: never all at once; 10,000 matches with 50 lines of context each are a million lines.
 */
async function* textHits(
  reader: SpoolReader,
  hits: readonly RgHit[],
  context: number,
  signal: AbortSignal,
  sink: GrepByteSink | undefined,
): AsyncGenerator<readonly GrepLine[], void, undefined> {
  const byLine = new Map(hits.map((h) => [h.line, h.offset]));
  const render = grepLineRenderer(false);
  const renderLine = async (n: number, start: number): Promise<{ text: string; end: number }> => {
    const line = await reader.line(n, start);
    return { text: render(await grepLine(reader, line, byLine.get(n)), undefined), end: line.end };
  };
  let bytes: GrepBytesWriter | undefined;
  let previous: number | undefined;
  try {
    for (let i = 0; i < hits.length;) {
      const from = Math.max(1, hits[i]!.line - context);
      let to = hits[i]!.line + context;
      for (i++; i < hits.length && Math.max(1, hits[i]!.line - context) <= to + 1; i++)
        to = Math.max(to, hits[i]!.line + context);
      const first = byLine.get(from);
      let next = from;
      let start = first !== undefined ? await reader.lineStartNear(from, first) : undefined;
      if (!sink?.ready) {
        for await (const batch of reader.lineBatches(from, to, start)) {
          if (signal.aborted) throw cancelled();
          const lines: GrepLine[] = [];
          for (const line of batch) lines.push(await grepLine(reader, line, byLine.get(line.n)));
          yield lines;
          const last = batch[batch.length - 1]!;
          previous = last.n;
          next = last.n + 1;
          start = last.end + 1;
          if (sink?.ready) break;
        }
        if (!sink?.ready) continue;
      }
      if (next > Math.min(to, reader.index.lines)) continue;
      bytes ??= new GrepBytesWriter(
        reader,
        hits.map((h) => h.line),
        sink,
        renderLine,
        previous,
      );
      await bytes.lines(next, to, start ?? (await reader.lineStart(next)), signal);
    }
    await bytes?.end();
  } finally {
    // A write still in flight ends before the artifact is ended another way (cancelled, failed).
    await bytes?.settle();
  }
}

/** One line of a grep; a match past the cut of a long line shows the part of the line around it. */
async function grepLine(reader: SpoolReader, line: SpoolLine, offset: number | undefined): Promise<GrepLine> {
  if (offset !== undefined && line.cut && offset - line.start > Buffer.byteLength(line.text)) {
    return {
      n: line.n,
      text: '…' + (await reader.around(line.start, line.end, offset)),
      cutBytes: line.end - line.start,
      match: true,
    };
  }
  return line.cut
    ? { n: line.n, text: line.text, cutBytes: line.end - line.start, match: offset !== undefined }
    : { n: line.n, text: line.text, match: offset !== undefined };
}

const BINARY_EXCERPT_BYTES = 96;

/** Binary matches as escaped byte excerpts starting a little before each match (a batch of one each). */
async function* binaryHits(
  reader: SpoolReader,
  hits: readonly RgHit[],
  signal: AbortSignal,
): AsyncGenerator<readonly GrepLine[], void, undefined> {
  for (const { line, offset } of hits) {
    if (signal.aborted) throw cancelled();
    const from = Math.max(0, offset - 16);
    const bytes = await reader.bytes(from, BINARY_EXCERPT_BYTES);
    let text = '';
    for (const b of bytes)
      text +=
        b >= 0x20 && b < 0x7f && b !== 0x5c
          ? String.fromCharCode(b)
          : b === 0x5c
            ? '\\\\'
            : `\\x${b.toString(16).padStart(2, '0')}`;
    yield [
      {
        n: line,
        text: (from > 0 ? '…' : '') + text + (from + bytes.length < reader.index.bytes ? '…' : ''),
        match: true,
        byteOffset: offset,
      },
    ];
  }
}
