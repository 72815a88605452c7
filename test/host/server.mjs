// Starts code-server (a real VS Code 1.139) on a free loopback port with a fresh profile, and stops
// it with every process it started.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import {
  closeSync,
  cpSync,
  mkdirSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { ensureCodeServer, ensureNode24 } from './ensure.mjs';

/** Settings every test profile starts with: no welcome page, no update or network chatter. */
export const DEFAULT_SETTINGS = {
  'workbench.startupEditor': 'none',
  'workbench.tips.enabled': false,
  'workbench.welcomePage.walkthroughs.openOnInstall': false,
  'extensions.autoCheckUpdates': false,
  'extensions.autoUpdate': false,
  'extensions.ignoreRecommendations': true,
  'telemetry.telemetryLevel': 'off',
  'update.mode': 'none',
  // An untrusted folder opens in restricted mode instead of behind a modal prompt.
  'security.workspace.trust.startupPrompt': 'never',
};

/** A free TCP port on 127.0.0.1 (asked of the kernel, then released for code-server to bind). */
export function freePort() {
  return new Promise((resolvePromise, reject) => {
    const srv = createServer();
    srv.unref();
    srv.on('error', reject);
    srv.listen(0, '127.0.0.1', () => {
      const { port } = srv.address();
      srv.close(() => resolvePromise(port));
    });
  });
}

const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** `/proc/<pid>/stat` as { pid, state, pgid }, for every process readable right now. */
function procStats() {
  const out = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name)) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // The fields after the command name, which may itself contain spaces and parentheses.
      const [state, , pgid] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      out.push({ pid: Number(name), state, pgid: Number(pgid) });
    } catch {
      /* exited meanwhile */
    }
  }
  return out;
}

const hasMarker = (pid, marker) => {
  try {
    return readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(marker);
  } catch {
    return false;
  }
};

/** Live (not zombie) processes in a process group or carrying a marker in their environment. */
export function processesOf({ pgid, marker }) {
  return procStats()
    .filter((p) => p.pid !== process.pid && p.state !== 'Z' && p.state !== 'X')
    .filter((p) => (pgid !== undefined && p.pgid === pgid) || (marker && hasMarker(p.pid, marker)));
}

/** Process groups of the processes carrying a marker (e.g. Chromium's, launched with the server's marker). */
export function groupsOf(marker) {
  const own = procStats().find((p) => p.pid === process.pid)?.pgid;
  return new Set(
    processesOf({ marker })
      .map((p) => p.pgid)
      .filter((g) => g !== own),
  );
}

/**
 * Waits (best effort) until no process of these groups is left, zombies included: an orphan is
 * reparented to PID 1, and in some containers PID 1 reaps only every few seconds, so `ps` would
 * still list it as `<defunct>` right after a run.
 */
export async function waitReaped(pgids, timeoutMs = 10_000) {
  const deadline = Date.now() + timeoutMs;
  while (Date.now() < deadline && procStats().some((p) => pgids.has(p.pgid))) await sleep(200);
}

function killAll(procs, signal) {
  for (const { pid } of procs) {
    try {
      process.kill(pid, signal);
    } catch {
      /* already gone */
    }
  }
}

/**
 * Kills a process group and everything carrying `marker` in its environment (a child that made
 * its own session escapes the group, not the environment), and waits until none is left.
 */
export async function killTree({ pgid, marker, graceMs = 1000 }) {
  try {
    process.kill(-pgid, 'SIGTERM');
  } catch {
    /* group already gone */
  }
  killAll(processesOf({ marker }), 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processesOf({ pgid, marker }).length) await sleep(100);
  // A file-watcher child outlives SIGTERM by 10–15 s: do not wait for it.
  for (let i = 0; i < 50; i++) {
    const left = processesOf({ pgid, marker });
    if (!left.length) return;
    try {
      process.kill(-pgid, 'SIGKILL');
    } catch {
      /* gone */
    }
    killAll(left, 'SIGKILL');
    await sleep(100);
  }
  throw new Error(
    `processes still running after SIGKILL: ${processesOf({ pgid, marker })
      .map((p) => p.pid)
      .join(' ')}`,
  );
}

/** The same, synchronously and without waiting, for `process.on('exit')`. */
function killTreeNow({ pgid, marker }) {
  try {
    process.kill(-pgid, 'SIGKILL');
  } catch {
    /* gone */
  }
  killAll(processesOf({ marker }), 'SIGKILL');
}

const exitCleanups = new Set();
let exitHooksInstalled = false;

/**
 * Registers a synchronous cleanup for when this process exits or is interrupted before the
 * normal (async) cleanup ran; returns the function that unregisters it. Cleanups run newest first.
 */
export function cleanupOnExit(fn) {
  if (!exitHooksInstalled) {
    exitHooksInstalled = true;
    const runAll = () => {
      for (const cleanup of [...exitCleanups].reverse()) {
        try {
          cleanup();
        } catch {
          /* keep cleaning */
        }
      }
      exitCleanups.clear();
    };
    process.on('exit', runAll);
    for (const [sig, num] of [
      ['SIGINT', 2],
      ['SIGTERM', 15],
      ['SIGHUP', 1],
    ]) {
      process.once(sig, () => {
        runAll();
        process.exit(128 + num);
      });
    }
  }
  exitCleanups.add(fn);
  return () => exitCleanups.delete(fn);
}

/**
 * Starts code-server and waits for `/healthz`.
 *
 * @param {object} [o]
 * @param {string} [o.workspace] folder opened by default (the page URL's `?folder=` overrides it)
 * @param {boolean} [o.disableWorkspaceTrust=true] pass `--disable-workspace-trust`; false for the untrusted-workspace test
 * @param {Record<string, unknown>} [o.settings] user settings, merged over DEFAULT_SETTINGS
 * @param {Record<string, string>} [o.env] extra environment for the server (and so the extension host)
 * @param {boolean} [o.smokeTestDriver] enable VS Code's smoke-test driver (needed to run a test payload; default true)
 * @param {string[]} [o.args] extra code-server arguments
 * @param {string[]} [o.extensions] extension folders (with package.json) installed into the fresh
 *   extensions dir, e.g. a test-only helper extension loaded alongside the one under development
 * @returns {Promise<{ port: number, baseUrl: string, authority: string, pid: number, runId: string, tmpDir: string,
 *   userDataDir: string, extensionsDir: string, marker: string, logFile: string, log(): string, stop(): Promise<void> }>}
 */
export async function startServer({
  workspace,
  disableWorkspaceTrust = true,
  smokeTestDriver = true,
  settings = {},
  env = {},
  args = [],
  extensions = [],
} = {}) {
  const node = await ensureNode24();
  const entry = await ensureCodeServer(node);
  const tmpDir = mkdtempSync(join(tmpdir(), 'wt-code-server-'));
  const userDataDir = join(tmpDir, 'user-data');
  const extensionsDir = join(tmpDir, 'extensions');
  const xdg = join(tmpDir, 'xdg');
  for (const d of [
    join(userDataDir, 'User'),
    extensionsDir,
    join(tmpDir, 'tmp'),
    join(tmpDir, 'home'),
    ...['config', 'data', 'cache', 'state'].map((k) => join(xdg, k)),
  ]) {
    mkdirSync(d, { recursive: true });
  }
  for (const dir of extensions) {
    const { publisher, name, version } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    cpSync(dir, join(extensionsDir, `${publisher}.${name}-${version}`), { recursive: true });
  }
  writeFileSync(join(userDataDir, 'User/settings.json'), JSON.stringify({ ...DEFAULT_SETTINGS, ...settings }, null, 2));
  const configFile = join(tmpDir, 'config.yaml');
  writeFileSync(configFile, 'auth: none\n');
  const logFile = join(tmpDir, 'server.log');
  // Every process the server starts inherits this, so stop() finds even those that leave the group.
  const runId = randomUUID();
  const marker = `WT_HOST_RUN=${runId}`;

  for (let attempt = 1; ; attempt++) {
    const port = await freePort();
    const argv = [
      entry,
      '--config',
      configFile,
      '--auth',
      'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(disableWorkspaceTrust ? ['--disable-workspace-trust'] : []),
      // Without it the workbench silently ignores the URL's test payload (it also hides toasts).
      ...(smokeTestDriver ? ['--vscode-option', 'enable-smoke-test-driver'] : []),
      '--user-data-dir',
      userDataDir,
      '--extensions-dir',
      extensionsDir,
      '--bind-addr',
      `127.0.0.1:${port}`,
      '--ignore-last-opened',
      ...args,
      ...(workspace ? [workspace] : []),
    ];
    const out = openSync(logFile, 'w');
    const child = spawn(node, argv, {
      // detached = setsid(): the server leads its own process group, and stop() kills the group.
      detached: true,
      stdio: ['ignore', out, out],
      env: {
        ...process.env,
        ...env,
        PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
        // Keep everything the server and its extensions write out of the real home folder (Copilot
        // Chat writes ~/.copilot, code-server ~/.config and ~/.local/share), and the sockets the
        // extension host and git extension leave in the temp folder inside ours.
        HOME: join(tmpDir, 'home'),
        TMPDIR: join(tmpDir, 'tmp'),
        XDG_CONFIG_HOME: join(xdg, 'config'),
        XDG_DATA_HOME: join(xdg, 'data'),
        XDG_CACHE_HOME: join(xdg, 'cache'),
        XDG_STATE_HOME: join(xdg, 'state'),
        WT_HOST_RUN: runId,
      },
    });
    closeSync(out);
    const pgid = child.pid;
    let exited;
    child.on('exit', (code, signal) => {
      exited = signal ?? `exit ${code}`;
    });
    const server = {
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      authority: `127.0.0.1:${port}`,
      pid: pgid,
      runId,
      tmpDir,
      userDataDir,
      extensionsDir,
      marker,
      logFile,
      log: () => {
        try {
          return readFileSync(logFile, 'utf8');
        } catch {
          return '';
        }
      },
      stopped: false,
      /** Kills the server's process group and every process carrying its marker, then removes its temp folder. */
      async stop({ keepTmp = false, alsoReap = [] } = {}) {
        if (server.stopped) return;
        server.stopped = true;
        const groups = new Set([pgid, ...groupsOf(marker), ...alsoReap]);
        try {
          await killTree({ pgid, marker });
          await waitReaped(groups);
        } finally {
          forgetCleanup();
          if (!keepTmp) rmSync(tmpDir, { recursive: true, force: true, maxRetries: 5 });
        }
      },
    };
    const forgetCleanup = cleanupOnExit(() => {
      killTreeNow({ pgid, marker });
      rmSync(tmpDir, { recursive: true, force: true });
    });

    const deadline = Date.now() + 60_000;
    let healthy = false;
    while (!exited && Date.now() < deadline) {
      try {
        const res = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (res.ok) {
          healthy = true;
          break;
        }
      } catch {
        /* not listening yet */
      }
      await sleep(100);
    }
    if (healthy) return server;
    const why = exited ? `exited (${exited})` : 'did not answer /healthz within 60 s';
    const text = server.log();
    await server.stop({ keepTmp: true });
    if (attempt < 3 && /EADDRINUSE/.test(text)) continue; // lost the port to someone else: pick another
    rmSync(tmpDir, { recursive: true, force: true });
    throw new Error(`code-server ${why}; its log:\n${text.slice(-4000)}`);
  }
}
