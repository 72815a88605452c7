import { spawn } from 'node:child_process';

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
  const child = spawn(rgPath, args, { ...(options.cwd !== undefined ? { cwd: options.cwd } : {}), env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  let stderr = '';
  let stderrBytes = 0;
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderrBytes >= STDERR_CAP) return;
    stderr += chunk.subarray(0, STDERR_CAP - stderrBytes).toString('utf8');
    stderrBytes += chunk.length;
  });
  let done = false;
  const kill = (): void => { if (!done && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); };
  const { signal } = options;
  signal?.addEventListener('abort', kill, { once: true });
  const exited = new Promise<RipgrepExit>((resolve) => {
    const end = (exit: RipgrepExit): void => { done = true; signal?.removeEventListener('abort', kill); resolve(exit); };
    child.once('error', (error) => {
      // A spawn failure emits 'error' and may never emit 'close'.
      if (child.pid === undefined) end({ code: null, signal: null, stderr, spawnError: error });
    });
    child.once('close', (code, exitSignal) => { end({ code, signal: exitSignal, stderr }); });
  });
  if (signal?.aborted) kill();
  return { stdout: child.stdout, exited, stderrSoFar: () => stderr, kill };
}

/**
 * Whether what ripgrep said (its stderr, "rg: " prefixes removed) is a refusal of the pattern
 * itself: a syntax error, a literal a regex cannot hold, or a regex too big to compile. The one
 * test both search and artifact_grep use to blame the pattern rather than ripgrep.
 */
export function rejectsPattern(said: string): boolean {
  return /regex parse error|not allowed in a regex|regex.*(too big|exceed)/i.test(said);
}
