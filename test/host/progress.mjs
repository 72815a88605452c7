// Progress of the long first-run steps (installing Node 24, apt packages, code-server, Chromium;
// packaging and starting the sandbox): each step prints what it does, how long it took and where
// its result went; a failure says which step failed, why, and the command that retries it.
import { spawn } from 'node:child_process';
import { writeFileSync } from 'node:fs';

/** "0.4 s", "12.3 s", "2 min 05 s". */
export function duration(ms) {
  if (ms < 60_000) return `${(ms / 1000).toFixed(1)} s`;
  const s = Math.round(ms / 1000);
  return `${Math.floor(s / 60)} min ${String(s % 60).padStart(2, '0')} s`;
}

/**
 * A step that failed: `message` holds the whole story (step, reason, retry command), so whoever
 * catches it prints the message alone; a stack would only say where this module threw.
 */
export class SetupError extends Error {
  constructor(tag, name, reason, elapsedMs, retry) {
    super(
      `[${tag}] ${name} failed after ${duration(elapsedMs)}: ${reason}${retry ? `\n[${tag}] retry this step: ${retry}` : ''}`,
    );
    this.name = 'SetupError';
    this.step = name;
    this.retry = retry;
    this.stack = this.message;
  }
}

/**
 * Runs one step and prints its outcome on stderr; returns what `fn` returns. `fn(progress)` calls
 * `progress.doing(text)` before real work (an install, a build), which prints "<name>: <text> …",
 * `progress.note(text)` for a line while it works, and `progress.result(text)` to say where the
 * result is (default: the value it returns). A step that never called `doing` only checked: it
 * prints "<name>: found <where> (checked in …)"; one that did prints "<name>: done in … → <where>".
 *
 * @template T
 * @param {{tag: string, name: string, retry?: string, out?: (text: string) => void}} what
 * @param {(progress: {doing(text: string): void, note(text: string): void, result(text: string): void}) => Promise<T>} fn
 * @returns {Promise<T>}
 */
export async function step({ tag, name, retry, out = (text) => process.stderr.write(text) }, fn) {
  const started = Date.now();
  const say = (text) => out(`[${tag}] ${name}: ${text}\n`);
  let worked = false;
  let shown;
  const progress = {
    doing(text) {
      worked = true;
      say(`${text} …`);
    },
    note: say,
    result(text) {
      shown = text;
    },
  };
  let value;
  try {
    value = await fn(progress);
  } catch (err) {
    if (err instanceof SetupError) throw err;
    throw new SetupError(tag, name, err?.message ?? String(err), Date.now() - started, retry);
  }
  const took = duration(Date.now() - started);
  const where = shown ?? String(value);
  say(worked ? `done in ${took} → ${where}` : `found ${where} (checked in ${took})`);
  return value;
}

/**
 * Runs a command with its output going to `logFile` (stdout and stderr), printing a line every
 * `heartbeatMs` with the time so far and the log's last line, so a quiet install does not look
 * hung. Rejects with the command, its exit status and the end of its log.
 */
export function runLogged(cmd, args, { env = process.env, cwd, logFile, heartbeat, heartbeatMs = 30_000 }) {
  return new Promise((resolvePromise, reject) => {
    const started = Date.now();
    writeFileSync(logFile, '');
    const child = spawn(cmd, args, { env, cwd, stdio: ['ignore', 'pipe', 'pipe'] });
    let tail = '';
    const onData = (chunk) => {
      writeFileSync(logFile, chunk, { flag: 'a' });
      tail = (tail + chunk).slice(-8000);
    };
    child.stdout.on('data', onData);
    child.stderr.on('data', onData);
    const lastLine = () => tail.trimEnd().split('\n').at(-1)?.trim().slice(0, 120) ?? '';
    const timer =
      heartbeat &&
      setInterval(
        () => heartbeat(`still working, ${duration(Date.now() - started)} so far (${lastLine() || 'no output yet'})`),
        heartbeatMs,
      );
    child.on('error', (err) => {
      clearInterval(timer);
      reject(new Error(`${cmd} could not start: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      clearInterval(timer);
      if (code === 0) return resolvePromise();
      const end = tail
        .trimEnd()
        .split('\n')
        .slice(-25)
        .map((l) => `    ${l}`)
        .join('\n');
      reject(
        new Error(
          `\`${[cmd, ...args].join(' ')}\` ${signal ? `was killed (${signal})` : `exited with code ${code}`}; the end of its log (${logFile}):\n${end}`,
        ),
      );
    });
  });
}
