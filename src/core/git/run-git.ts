import { execFile } from 'node:child_process';

/**
 * Runs git on the host to read a repository, never to run what it names: no hooks, no fsmonitor,
 * no system or global configuration, no pager, no optional locks (nothing is written).
 * `env` adds to a clean environment (PATH from the host). Resolves with stdout, or undefined when git failed or took longer than `timeoutMs`.
 */
export function readGit(
  args: readonly string[],
  env: Readonly<Record<string, string>> = {},
  timeoutMs = 20_000,
): Promise<Buffer | undefined> {
  return new Promise((resolve) => {
    execFile(
      'git',
      ['--no-optional-locks', '-c', 'core.fsmonitor=false', '-c', 'core.hooksPath=/dev/null', ...args],
      {
        encoding: 'buffer',
        maxBuffer: 256 * 1024 * 1024,
        timeout: timeoutMs,
        env: {
          PATH: '/usr/local/bin:/usr/bin:/bin',
          GIT_CONFIG_NOSYSTEM: '1',
          GIT_CONFIG_GLOBAL: '/dev/null',
          GIT_TERMINAL_PROMPT: '0',
          GIT_PAGER: 'cat',
          LC_ALL: 'C',
          ...env,
        },
      },
      (error, stdout) => resolve(error ? undefined : stdout),
    );
  });
}

/** NUL-separated output as a list (empty entries dropped). */
export const nulList = (out: Buffer): string[] =>
  out
    .toString('utf8')
    .split('\0')
    .filter((p) => p !== '');
