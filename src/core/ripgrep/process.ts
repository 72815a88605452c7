import { spawn } from 'node:child_process';
import { getDefaultHighWaterMark, setDefaultHighWaterMark, type Readable } from 'node:stream';

export interface RipgrepExit {
  /** null when the process was killed by a signal. */
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** ripgrep's stderr (the first STDERR_CAP bytes). */
  readonly stderr: string;
  /** Set when the process could not be started at all. */
  readonly spawnError?: Error;
}

export interface RipgrepProcess {
  /** stdout, chunk by chunk, with backpressure: ripgrep waits while the consumer does. */
  readonly stdout: AsyncIterable<Buffer>;
  /** Resolves once the process has exited and been reaped. */
  readonly exited: Promise<RipgrepExit>;
  /** The stderr received so far. */
  stderrSoFar(): string;
  /** Kills ripgrep at once (SIGKILL); harmless after it exited. */
  kill(): void;
}

export interface RipgrepRun {
  /** The folder ripgrep runs in (relative paths in `args` and in its output are relative to it). */
  readonly cwd?: string;
  /** Aborting it kills ripgrep at once. */
  readonly signal?: AbortSignal;
}

/**
 * The one way core runs ripgrep, for search and artifact_grep alike. A host creates it once from
 * the binary it resolved (`createRipgrep`) and hands it to the session.
 */
export interface Ripgrep {
  /** The binary, for errors that name it. */
  readonly path: string;
  /** Starts ripgrep with `args`; stdin is the null device. */
  run(args: readonly string[], options?: RipgrepRun): RipgrepProcess;
}

/** ripgrep's stderr kept per run, in bytes. */
export const STDERR_CAP = 64 * 1024;

/**
 * The process policy for a resolved rg binary. Security: the environment drops RIPGREP_CONFIG_PATH
 * (besides the `--no-config` flag every caller passes) so nothing outside the call adds flags; a
 * cancelled run is killed at once (SIGKILL), and stderr is kept to STDERR_CAP bytes.
 */
export function createRipgrep(path: string): Ripgrep {
  return { path, run: (args, options = {}) => startRipgrep(path, args, options) };
}

function startRipgrep(rgPath: string, args: readonly string[], options: RipgrepRun): RipgrepProcess {
  const env = { ...process.env };
  delete env['RIPGREP_CONFIG_PATH'];
  // stdin is the null device: given a readable stdin and no path, ripgrep would search stdin instead of cwd.
  const child = spawnWithSmallReads(() =>
    spawn(rgPath, args, {
      ...(options.cwd !== undefined ? { cwd: options.cwd } : {}),
      env,
      stdio: ['ignore', 'pipe', 'pipe'],
      windowsHide: true,
    }),
  );
  let stderr = '';
  let stderrBytes = 0;
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderrBytes >= STDERR_CAP) return;
    stderr += chunk.subarray(0, STDERR_CAP - stderrBytes).toString('utf8');
    stderrBytes += chunk.length;
  });
  let done = false;
  const kill = (): void => {
    if (!done && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
  };
  const { signal } = options;
  signal?.addEventListener('abort', kill, { once: true });
  const exited = new Promise<RipgrepExit>((resolve) => {
    const end = (exit: RipgrepExit): void => {
      done = true;
      signal?.removeEventListener('abort', kill);
      resolve(exit);
    };
    child.once('error', (error) => {
      // A spawn failure emits 'error' and may never emit 'close'.
      if (child.pid === undefined) end({ code: null, signal: null, stderr, spawnError: error });
    });
    child.once('close', (code, exitSignal) => {
      end({ code, signal: exitSignal, stderr });
    });
  });
  if (signal?.aborted) kill();
  let ended = false;
  let wake: (() => void) | undefined;
  child.once('exit', () => {
    ended = true;
    wake?.();
  });
  // Until ripgrep exits; then what is left in the pipe is read at once.
  const pause = (): Promise<void> =>
    ended
      ? Promise.resolve()
      : new Promise((resolve) => {
          const timer = setTimeout(resolve, COALESCE_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
        });
  return { stdout: coalesced(child.stdout, pause), exited, stderrSoFar: () => stderr, kill };
}

/**
 * ripgrep's content search writes each file's matches as it finishes the file: a few hundred bytes
 * a write, thousands of writes for a common word. Read as each lands, every write costs the reading
 * thread a wake-up and a read; on a 2-vCPU VM, 5,626 matches in 4,784 files came in ~2,400 reads
 * that cost ~95 ms of the thread's CPU (~20 µs each), taken from ripgrep's own threads. So after a
 * small chunk the reader waits COALESCE_MS (or until ripgrep exits) before it reads again, and the
 * pipe gathers what came meanwhile: ~185 reads, ~25 ms, and the search ~20% sooner. A large chunk
 * means the pipe is busy: read on at once. Not longer: the pipe holds only ~32-60 KB of small writes
 * before ripgrep waits on it, and 17.7 MB of matches (~35 KB a millisecond here) were read 13%
 * sooner with a 1 ms wait but 13% later with 2 ms.
 */
const COALESCE_MS = 1;
const COALESCE_BELOW_BYTES = 16 * 1024;

async function* coalesced(stdout: Readable, pause: () => Promise<void>): AsyncGenerator<Buffer, void, undefined> {
  for await (const chunk of stdout) {
    yield chunk as Buffer;
    if ((chunk as Buffer).length < COALESCE_BELOW_BYTES) await pause();
  }
}

/**
 * Node reads a child's stdout into the stream's buffer until it holds the high-water mark (64 KiB),
 * whether or not anyone reads: a pause between reads would gather nothing. Created with a mark of
 * one byte, the stream stops reading the pipe after each chunk until the next read. The default is
 * only changed for the synchronous `spawn` call, which creates the child's streams.
 */
function spawnWithSmallReads<T>(start: () => T): T {
  const before = getDefaultHighWaterMark(false);
  setDefaultHighWaterMark(false, 1);
  try {
    return start();
  } finally {
    setDefaultHighWaterMark(false, before);
  }
}

/**
 * Whether what ripgrep said (its stderr, "rg: " prefixes removed) is a refusal of the pattern
 * itself: a syntax error, a literal a regex cannot hold, or a regex too big to compile. The one
 * test both search and artifact_grep use to blame the pattern rather than ripgrep.
 */
export function rejectsPattern(said: string): boolean {
  return /regex parse error|not allowed in a regex|regex.*(too big|exceed)/i.test(said);
}
