// Opens a real VS Code workbench (code-server) in headless Chromium, either to run an extension
// test suite in the server's extension host (runSuite) or to hand the page to an e2e test
// (openWorkbench). Whatever it starts it stops: browser, server and its process group, temp dirs.
import { cpSync, mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { format } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureChromium, repoRoot } from './ensure.mjs';
import { cleanupOnExit, groupsOf, startServer } from './server.mjs';
import { WORKBENCH } from './selectors.mjs';

export const RESULTS_DIR = join(repoRoot, 'test-results');

export const CHROMIUM_ARGS = [
  '--headless',
  '--no-sandbox',
  '--disable-gpu',
  '--disable-quic',
  '--no-first-run',
  '--disable-background-networking',
  '--disable-component-update',
  '--disable-sync',
];

/**
 * Workbench chatter that reaches `codeAutomationLog` together with the extension host's console
 * (the page does not tell them apart). Hidden unless WT_HOST_VERBOSE=1. The failed look-ups of
 * open-vsx.org and api.github.com are harmless: the machine has no internet.
 */
/**
 * Headless Chromium with a fresh profile, its home and XDG folders inside the server's temp folder.
 * The server's marker in its environment lets server.stop() find Chromium too if close() ever hangs.
 */
export function launchChromium(server, executablePath, profileDir, viewport) {
  const xdg = join(server.tmpDir, 'xdg');
  return chromium.launchPersistentContext(profileDir, {
    executablePath,
    headless: true,
    args: CHROMIUM_ARGS,
    viewport,
    handleSIGINT: false,
    handleSIGTERM: false,
    handleSIGHUP: false,
    env: {
      ...process.env,
      WT_HOST_RUN: server.runId,
      HOME: join(server.tmpDir, 'home'),
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_CACHE_HOME: join(xdg, 'cache'),
      XDG_DATA_HOME: join(xdg, 'data'),
      TMPDIR: join(server.tmpDir, 'tmp'),
    },
  });
}

export const NOISE = [
  /^\[(AgentHost(:\w+)?|ChatModelSelection|AccountPolicyGate|reconnection-grace-time|Service Worker)\]/,
  /^(Resolving|Resolved) connection token/,
  /^Creating a socket \(/,
  /^Updating additional builtin extensions cache/,
  /getaddrinfo (ENOTFOUND|EAI_AGAIN)/,
  /^Timed out waiting for authentication provider/,
  /^Canceled(: Canceled)*\n/, // requests cut off when the extension host exits
  /^No search provider registered for scheme: vscode-remote/,
];

/** The default log sink: the extension host's output to stdout, the workbench's chatter filtered out. */
export function printLog(line, type) {
  if (process.env.WT_HOST_VERBOSE !== '1' && NOISE.some((re) => re.test(line))) return;
  process.stdout.write(`${type === 'error' || type === 'warn' ? `[${type}] ` : ''}${line}\n`);
}

/** Formats what the page hands to `codeAutomationLog`: printf-style arguments, or a plain value. */
export function formatAutomationLog(args) {
  if (!Array.isArray(args)) return typeof args === 'string' ? args : format('%o', args);
  return typeof args[0] === 'string'
    ? format(...args)
    : args.map((a) => (typeof a === 'string' ? a : format('%o', a))).join(' ');
}

/**
 * Starts code-server and opens the workbench in Chromium.
 *
 * @param {object} [o]
 * @param {string} [o.workspace] fixture folder, copied to a temp folder that is opened (default: an empty temp folder)
 * @param {string} [o.extensionDevelopmentPath] the extension loaded from source (the one under test)
 * @param {string[]} [o.extraExtensions] more extension folders, installed into the fresh profile's
 *   extensions dir (the web workbench keeps only the last `extensionDevelopmentPath` of the payload)
 * @param {string} [o.extensionTestsPath] a JS file exporting `run(): Promise<void>`; without it no test runs
 * @param {Record<string, string>} [o.extensionEnv] environment variables for the extension host
 * @param {boolean} [o.disableWorkspaceTrust=true]
 * @param {Record<string, unknown>} [o.settings] user settings over the host's defaults
 * @param {(line: string, type: string) => void} [o.onLog] receives the extension host's console output
 * @param {{width: number, height: number}} [o.viewport]
 * @param {string} [o.name] names the folder VS Code's logs are saved to when a suite fails
 * @returns {Promise<{ server: Awaited<ReturnType<typeof startServer>>, context: import('playwright-core').BrowserContext,
 *   page: import('playwright-core').Page, workspaceDir: string, url: string, exit: Promise<number>,
 *   screenshot(file: string): Promise<string>, close(): Promise<void> }>}
 */
export async function openWorkbench({
  workspace,
  extensionDevelopmentPath,
  extraExtensions = [],
  extensionTestsPath,
  extensionEnv,
  disableWorkspaceTrust = true,
  settings,
  onLog = printLog,
  viewport = { width: 1600, height: 1000 },
  name = 'workbench',
} = {}) {
  const executablePath = await ensureChromium();
  const tmp = mkdtempSync(join(tmpdir(), 'wt-workbench-'));
  const workspaceDir = join(tmp, workspace ? workspace.replace(/\/+$/, '').split('/').pop() : 'workspace');
  if (workspace) cpSync(workspace, workspaceDir, { recursive: true });
  else mkdirSync(workspaceDir);

  let server;
  let context;
  const forgetCleanup = cleanupOnExit(() => rmSync(tmp, { recursive: true, force: true }));
  const wb = {
    workspaceDir,
    async close() {
      // Chromium's process groups, read before it exits, so stop() can wait for them to be reaped.
      const chromiumGroups = server ? groupsOf(server.marker) : new Set();
      try {
        await context?.close().catch(() => {});
      } finally {
        try {
          await server?.stop({ alsoReap: [...chromiumGroups] });
        } finally {
          rmSync(tmp, { recursive: true, force: true, maxRetries: 5 });
          forgetCleanup();
        }
      }
    },
  };
  try {
    server = await startServer({
      workspace: workspaceDir,
      disableWorkspaceTrust,
      settings,
      extensions: extraExtensions,
    });
    const remote = (p) => `vscode-remote://${server.authority}${resolve(p)}`;
    const payload = [
      // The payload becomes a Map in the workbench: one extensionDevelopmentPath at most.
      ...(extensionDevelopmentPath ? [['extensionDevelopmentPath', remote(extensionDevelopmentPath)]] : []),
      ...(extensionTestsPath ? [['extensionTestsPath', remote(extensionTestsPath)]] : []),
      // The change-set journal's state folder: the run's own (removed with it), never the machine's ~/.local/state.
      ['extensionEnvironment', JSON.stringify({ XDG_STATE_HOME: join(tmp, 'state'), ...extensionEnv })],
      ['enableProposedApi', ''],
      // WT_WORKBENCH_TRACE=1: the workbench logs at trace level (window.log, kept under test-results/vscode-logs).
      ...(process.env.WT_WORKBENCH_TRACE === '1' ? [['logLevel', 'trace']] : []),
      ['skipWelcome', 'true'],
      ['skipReleaseNotes', 'true'],
    ];
    const url = `${server.baseUrl}/?folder=${encodeURIComponent(workspaceDir)}&payload=${encodeURIComponent(JSON.stringify(payload))}`;

    context = await launchChromium(server, executablePath, join(tmp, 'chromium-profile'), viewport);
    const page = context.pages()[0] ?? (await context.newPage());
    let resolveExit;
    const exit = new Promise((r) => {
      resolveExit = r;
    });
    await page.exposeFunction('codeAutomationLog', (type, args) => onLog(formatAutomationLog(args), type));
    await page.exposeFunction('codeAutomationExit', (code, logs) => {
      if (code !== 0 && Array.isArray(logs)) saveLogs(name, logs);
      resolveExit(typeof code === 'number' ? code : 1);
    });
    page.on('crash', () => {
      onLog('[host] the page crashed', 'error');
      resolveExit(1);
    });
    // Bounds, not waits: on a loaded machine (other builds and workbenches beside this one) the
    // workbench takes well over playwright's default 30 s to load, and a click as long to land.
    page.setDefaultTimeout(60_000);
    await page.goto(url, { timeout: 180_000 });

    Object.assign(wb, {
      server,
      context,
      page,
      url,
      exit,
      /** Saves test-results/<file>.png and returns its path. */
      async screenshot(file) {
        mkdirSync(RESULTS_DIR, { recursive: true });
        const path = join(RESULTS_DIR, `${file}.png`);
        await page.screenshot({ path });
        return path;
      },
    });
    return wb;
  } catch (err) {
    await wb.close();
    throw err;
  }
}

/** Waits until the workbench has restored (the smoke-test driver's own signal). */
export async function whenWorkbenchRestored(page, timeout = 180_000) {
  await page.waitForSelector(WORKBENCH.root, { timeout });
  await page.waitForFunction(() => typeof globalThis.driver?.whenWorkbenchRestored === 'function', null, { timeout });
  await page.evaluate(() => globalThis.driver.whenWorkbenchRestored());
}

/** Saves the VS Code logs the page hands over with a failing exit code. */
function saveLogs(name, logs) {
  const dir = join(RESULTS_DIR, 'vscode-logs', name);
  rmSync(dir, { recursive: true, force: true });
  for (const { relativePath, contents } of logs) {
    if (typeof relativePath !== 'string' || relativePath.includes('..')) continue;
    const file = join(dir, relativePath);
    mkdirSync(dirname(file), { recursive: true });
    writeFileSync(file, contents);
  }
  process.stdout.write(`[host] VS Code logs saved under ${dir}\n`);
}

/**
 * Runs one extension test suite inside code-server's extension host and returns its exit code
 * (0 when `run()` resolved). Everything started is stopped before it returns.
 *
 * @param {object} o
 * @param {string} o.extensionDevelopmentPath the extension under test (folder with package.json)
 * @param {string} o.extensionTestsPath the built test entry exporting `run(): Promise<void>`
 * @param {string} [o.workspace] fixture folder (copied to a temp folder first)
 * @param {Record<string, string>} [o.extensionEnv] environment variables for the extension host
 * @param {string[]} [o.extraExtensions] test-only helper extensions (folders), installed into the profile
 * @param {boolean} [o.disableWorkspaceTrust=true]
 * @param {Record<string, unknown>} [o.settings]
 * @param {number} [o.timeoutMs=300000]
 * @param {string} [o.name='suite'] names the screenshot taken on a time-out and the saved logs
 * @param {(line: string, type: string) => void} [o.onLog]
 */
export async function runSuite({
  extensionDevelopmentPath,
  extensionTestsPath,
  workspace,
  extensionEnv,
  extraExtensions = [],
  disableWorkspaceTrust = true,
  settings,
  timeoutMs = 300_000,
  name = 'suite',
  onLog,
}) {
  const started = Date.now();
  let wb;
  let timer;
  try {
    wb = await openWorkbench({
      workspace,
      extensionDevelopmentPath,
      extraExtensions,
      extensionTestsPath,
      extensionEnv,
      disableWorkspaceTrust,
      settings,
      name,
      ...(onLog ? { onLog } : {}),
    });
    const timedOut = new Promise((r) => {
      timer = setTimeout(() => r('timeout'), timeoutMs);
    });
    const code = await Promise.race([wb.exit, timedOut]);
    if (code === 'timeout') {
      process.stdout.write(
        `[host] ${name}: no result after ${timeoutMs / 1000} s; screenshot: ${await wb.screenshot(`${name}-timeout`).catch(() => 'none')}\n`,
      );
      process.stdout.write(`[host] server log tail:\n${wb.server.log().slice(-3000)}\n`);
      return 124;
    }
    return code;
  } catch (err) {
    process.stdout.write(`[host] ${name}: ${err.stack ?? err}\n`);
    return 1;
  } finally {
    clearTimeout(timer);
    await wb?.close();
    process.stdout.write(`[host] ${name}: workbench run took ${((Date.now() - started) / 1000).toFixed(1)} s\n`);
  }
}
