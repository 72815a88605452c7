import { spawn } from 'node:child_process';
import { SandboxError, cancelled } from '../errors.ts';

/** The first match on one matching line. */
export interface RgHit {
  /** 1-based line number. */
  readonly line: number;
  /** Byte offset of the first match on that line, in the spool file. */
  readonly offset: number;
}

export interface RgSearch {
  readonly rgPath: string;
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

export interface RgResult {
  readonly hits: readonly RgHit[];
  /** More matching lines exist beyond `maxLines`. */
  readonly more: boolean;
}

const STDERR_KEEP = 4096;

/**
 * Runs ripgrep over one spool file. `--only-matching --byte-offset` makes each match a short
 * `line:offset:match` record, so the output stays small however long the lines are; the lines
 * themselves are then read from the spool through its index.
 */
export function runRipgrep(search: RgSearch): Promise<RgResult> {
  const args = [
    '--no-config', '--color', 'never', '--no-heading', '--no-filename',
    '--line-number', '--byte-offset', '--only-matching', '--text',
    '--max-count', String(search.maxLines + 1),
    search.ignoreCase ? '--ignore-case' : '--case-sensitive',
    ...(search.literal ? ['--fixed-strings'] : []),
    ...(search.raw ? ['--encoding', 'none'] : []),
    ...(search.crlf ? ['--crlf'] : []),
    '--regexp', search.pattern, '--', search.file,
  ];
  return new Promise<RgResult>((resolve, reject) => {
    if (search.signal.aborted) { reject(cancelled()); return; }
    const child = spawn(search.rgPath, args, { stdio: ['ignore', 'pipe', 'pipe'], signal: search.signal });
    const hits: RgHit[] = [];
    let more = false;
    let stopped = false;
    let stderr = '';
    // Parser state: digits of the line number, then of the offset, then skip the match text to "\n".
    let state: 'line' | 'offset' | 'skip' = 'line';
    let lineNumber = 0;
    let offset = 0;
    let lastLine = 0;

    const record = (): void => {
      if (lineNumber === lastLine) return;
      lastLine = lineNumber;
      if (hits.length === search.maxLines) {
        more = true;
        stopped = true;
        child.kill();
        return;
      }
      hits.push({ line: lineNumber, offset: offset + search.offsetShift });
    };

    child.stdout.on('data', (chunk: Buffer) => {
      let i = 0;
      while (i < chunk.length && !stopped) {
        if (state === 'skip') {
          const nl = chunk.indexOf(10, i);
          if (nl === -1) return;
          i = nl + 1;
          state = 'line';
          lineNumber = 0;
          offset = 0;
          continue;
        }
        const b = chunk[i++]!;
        if (b === 58 /* : */) {
          if (state === 'line') { state = 'offset'; } else { state = 'skip'; record(); }
        } else if (state === 'line') {
          lineNumber = lineNumber * 10 + (b - 48);
        } else {
          offset = offset * 10 + (b - 48);
        }
      }
    });
    child.stderr.on('data', (chunk: Buffer) => { if (stderr.length < STDERR_KEEP) stderr += chunk.toString('utf8'); });
    child.on('error', (e: NodeJS.ErrnoException) => {
      if (search.signal.aborted) { reject(cancelled()); return; }
      reject(new SandboxError('E_SANDBOX_IO', `ripgrep could not be started (${e.code ?? e.message}) from "${search.rgPath}". Page the artifact with artifact_read instead, and tell the user that search is unavailable.`, { cause: e }));
    });
    child.on('close', (code) => {
      if (search.signal.aborted) { reject(cancelled()); return; }
      if (stopped || code === 0 || code === 1) { resolve({ hits, more }); return; }
      reject(ripgrepFailure(search.pattern, stderr, code));
    });
  });
}

function ripgrepFailure(pattern: string, stderr: string, code: number | null): SandboxError {
  const reason = stderr.replace(/^rg: /gm, '').replace(/\s+/g, ' ').trim().slice(0, 400) || `exit code ${String(code)}`;
  if (/regex|literal|pattern|syntax|look-?around|backreference|unclosed|repetition|escape/i.test(reason)) {
    return new SandboxError('E_SANDBOX_INVALID_INPUT', `ripgrep rejected the pattern ${JSON.stringify(pattern)}: ${reason}. Fix the regex (ripgrep uses Rust regex syntax: no look-around or backreferences), or pass literal: true to search for the text as written.`);
  }
  return new SandboxError('E_SANDBOX_IO', `ripgrep failed while searching the artifact: ${reason}. Retry once; if it fails again, page it with artifact_read.`);
}
