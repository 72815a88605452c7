// Starts code-server (a real VS Code 1.139) on a free loopback port with a fresh profile, and stops
// it with every process it started.
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { closeSync, mkdirSync, mkdtempSync, openSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
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

/** Pids of live (not zombie) processes in a process group or carrying a marker in their environment. */
export function processesOf({ pgid, marker }) {
  const found = [];
  for (const name of readdirSync('/proc')) {
    if (!/^\d+$/.test(name) || Number(name) === process.pid) continue;
    try {
      const stat = readFileSync(`/proc/${name}/stat`, 'utf8');
      // Fields after the command name, which may itself contain spaces and parentheses.
      const [state, , pg] = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      if (state === 'Z' || state === 'X') continue;
      if (pgid !== undefined && Number(pg) === pgid) { found.push(Number(name)); continue; }
      if (marker && readFileSync(`/proc/${name}/environ`, 'latin1').split('\0').includes(marker)) found.push(Number(name));
    } catch { /* exited meanwhile, or not ours to read */ }
  }
  return found;
}

function killAll(pids, signal) {
  for (const pid of pids) {
    try { process.kill(pid, signal); } catch { /* already gone */ }
  }
}

/**
 * Kills a process group and everything carrying `marker` in its environment (a child that made
 * its own session escapes the group, not the environment), and waits until none is left.
 */
export async function killTree({ pgid, marker, graceMs = 2000 }) {
  try { process.kill(-pgid, 'SIGTERM'); } catch { /* group already gone */ }
  killAll(processesOf({ marker }), 'SIGTERM');
  const deadline = Date.now() + graceMs;
  while (Date.now() < deadline && processesOf({ pgid, marker }).length) await sleep(100);
  // A file-watcher child outlives SIGTERM by 10–15 s: do not wait for it.
  for (let i = 0; i < 50; i++) {
    const left = processesOf({ pgid, marker });
    if (!left.length) return;
    try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
    killAll(left, 'SIGKILL');
    await sleep(100);
  }
  throw new Error(`processes still running after SIGKILL: ${processesOf({ pgid, marker }).join(' ')}`);
}

/** The same, synchronously and without waiting, for `process.on('exit')`. */
function killTreeNow({ pgid, marker }) {
  try { process.kill(-pgid, 'SIGKILL'); } catch { /* gone */ }
  killAll(processesOf({ marker }), 'SIGKILL');
}

const live = new Set();
let exitHooksInstalled = false;
function installExitHooks() {
  if (exitHooksInstalled) return;
  exitHooksInstalled = true;
  process.on('exit', () => { for (const s of live) s.killNow(); });
  for (const sig of ['SIGINT', 'SIGTERM', 'SIGHUP']) {
    process.once(sig, () => {
      for (const s of live) s.killNow();
      process.exit(128 + ({ SIGINT: 2, SIGTERM: 15, SIGHUP: 1 })[sig]);
    });
  }
}

/**
 * Starts code-server and waits for `/healthz`.
 *
 * @param {object} [o]
 * @param {string} [o.workspace] folder opened by default (the page URL's `?folder=` overrides it)
 * @param {boolean} [o.disableWorkspaceTrust=true] pass `--disable-workspace-trust`; false for the untrusted-workspace test
 * @param {Record<string, unknown>} [o.settings] user settings, merged over DEFAULT_SETTINGS
 * @param {Record<string, string>} [o.env] extra environment for the server (and so the extension host)
 * @param {string[]} [o.args] extra code-server arguments
 * @returns {Promise<{ port: number, baseUrl: string, authority: string, pid: number, tmpDir: string,
 *   userDataDir: string, extensionsDir: string, marker: string, logFile: string, log(): string, stop(): Promise<void> }>}
 */
export async function startServer({ workspace, disableWorkspaceTrust = true, settings = {}, env = {}, args = [] } = {}) {
  const node = await ensureNode24();
  const entry = await ensureCodeServer(node);
  const tmpDir = mkdtempSync(join(tmpdir(), 'wt-code-server-'));
  const userDataDir = join(tmpDir, 'user-data');
  const extensionsDir = join(tmpDir, 'extensions');
  const xdg = join(tmpDir, 'xdg');
  for (const d of [join(userDataDir, 'User'), extensionsDir, ...['config', 'data', 'cache', 'state'].map((k) => join(xdg, k))]) {
    mkdirSync(d, { recursive: true });
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
      '--config', configFile,
      '--auth', 'none',
      '--disable-telemetry',
      '--disable-update-check',
      ...(disableWorkspaceTrust ? ['--disable-workspace-trust'] : []),
      // Without it the workbench silently ignores the URL's test payload.
      '--vscode-option', 'enable-smoke-test-driver',
      '--user-data-dir', userDataDir,
      '--extensions-dir', extensionsDir,
      '--bind-addr', `127.0.0.1:${port}`,
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
        // Keep code-server's config, logs and caches out of the home folder.
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
    child.on('exit', (code, signal) => { exited = signal ?? `exit ${code}`; });
    const server = {
      port,
      baseUrl: `http://127.0.0.1:${port}`,
      authority: `127.0.0.1:${port}`,
      pid: pgid,
      tmpDir,
      userDataDir,
      extensionsDir,
      marker,
      logFile,
      log: () => { try { return readFileSync(logFile, 'utf8'); } catch { return ''; } },
      killNow: () => killTreeNow({ pgid, marker }),
      stopped: false,
      async stop({ keepTmp = false } = {}) {
        if (server.stopped) return;
        server.stopped = true;
        try {
          await killTree({ pgid, marker });
        } finally {
          live.delete(server);
          if (!keepTmp) rmSync(tmpDir, { recursive: true, force: true, maxRetries: 5 });
        }
      },
    };
    installExitHooks();
    live.add(server);

    const deadline = Date.now() + 60_000;
    let healthy = false;
    while (!exited && Date.now() < deadline) {
      try {
        const res = await fetch(`${server.baseUrl}/healthz`, { signal: AbortSignal.timeout(2000) });
        if (res.ok) { healthy = true; break; }
      } catch { /* not listening yet */ }
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
