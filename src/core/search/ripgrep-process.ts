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

/** ripgrep's stderr kept per run, in bytes. */
export const STDERR_CAP = 64 * 1024;

/**
 * Starts ripgrep in `cwd`. Security: the environment drops RIPGREP_CONFIG_PATH (besides the
 * `--no-config` flag) so nothing outside the call adds flags.
 */
export function startRipgrep(rgPath: string, args: readonly string[], cwd: string): RipgrepProcess {
  const env = { ...process.env };
  delete env['RIPGREP_CONFIG_PATH'];
  // stdin is the null device: given a readable stdin and no path, ripgrep would search stdin instead of cwd.
  const child = spawn(rgPath, args, { cwd, env, stdio: ['ignore', 'pipe', 'pipe'], windowsHide: true });
  let stderr = '';
  let stderrBytes = 0;
  child.stderr.on('data', (chunk: Buffer) => {
    if (stderrBytes >= STDERR_CAP) return;
    stderr += chunk.subarray(0, STDERR_CAP - stderrBytes).toString('utf8');
    stderrBytes += chunk.length;
  });
  let done = false;
  const exited = new Promise<RipgrepExit>((resolve) => {
    child.once('error', (error) => {
      // A spawn failure emits 'error' and may never emit 'close'.
      if (child.pid === undefined) { done = true; resolve({ code: null, signal: null, stderr, spawnError: error }); }
    });
    child.once('close', (code, signal) => { done = true; resolve({ code, signal, stderr }); });
  });
  return {
    stdout: child.stdout,
    exited,
    stderrSoFar: () => stderr,
    kill: () => { if (!done && child.exitCode === null && child.signalCode === null) child.kill('SIGKILL'); },
  };
}
