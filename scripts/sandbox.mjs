// Try Workspace Tools in a real VS Code: packages the extension (`npm run package`), installs the
// .vsix into a fresh code-server profile (`--install-extension`, as a person would), opens a copy
// of a small demo workspace (test/fixtures/demo: sources, a JSON, a Markdown and a .env with a
// fake secret), prints the URL to open and keeps running until Ctrl-C, then stops everything.
//
//   npm run sandbox                          # = node scripts/sandbox.mjs
//   node scripts/sandbox.mjs --screenshot media/screenshot-sandbox.png
//   node scripts/sandbox.mjs --vsix workspace-tools.vsix --untrusted
//
// Options:
//   --screenshot FILE  open the URL in headless Chromium, show the Workspace Tools view and its
//                      commands, save a screenshot to FILE and exit
//   --vsix FILE        install this .vsix instead of building one
//   --untrusted        start with workspace trust on: the folder opens in restricted mode
//
// code-server (a real VS Code 1.139) comes from the test host's cache (test/host/ensure.mjs
// installs it on first use, ≈2 min). Nothing is written outside that cache, the repo's dist/ and
// .vsix, and the temp folder; the extension runs as installed, so every call asks the person.
import { spawn } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import { ensureChromium, ensureCodeServer, ensureNode24, repoRoot } from '../test/host/ensure.mjs';
import { launchChromium } from '../test/host/run-suite.mjs';
import { PALETTE, PANES, WORKBENCH } from '../test/host/selectors.mjs';
import { cleanupOnExit, groupsOf, startServer } from '../test/host/server.mjs';

const DEMO = join(repoRoot, 'test/fixtures/demo');
const log = (msg) => process.stderr.write(`[sandbox] ${msg}\n`);
const sleep = (ms) => new Promise((r) => setTimeout(r, ms));

/** Runs a command with its output on the console; rejects on a non-zero exit. */
function run(cmd, args, options = {}) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'inherit', 'inherit'], ...options });
    child.on('error', reject);
    child.on('close', (code, signal) => (code === 0 ? resolvePromise() : reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`})`))));
  });
}

/** `npm run package`: dist/ in production mode and workspace-tools.vsix. */
async function packageVsix() {
  log('npm run package');
  await run(process.platform === 'win32' ? 'npm.cmd' : 'npm', ['run', 'package'], { cwd: repoRoot });
  const vsix = join(repoRoot, 'workspace-tools.vsix');
  if (!existsSync(vsix)) throw new Error(`npm run package did not write ${vsix}`);
  return vsix;
}

/**
 * `code-server --install-extension` into the running server's fresh extensions dir (the CLI
 * process exits when done; the server's extension host scans the folder when a window connects).
 */
async function installVsix(server, vsix) {
  const node = await ensureNode24();
  const entry = await ensureCodeServer(node);
  const home = join(server.tmpDir, 'home');
  const xdg = join(server.tmpDir, 'xdg');
  log(`installing ${vsix}`);
  await run(node, [
    entry,
    '--user-data-dir', server.userDataDir,
    '--extensions-dir', server.extensionsDir,
    '--install-extension', vsix,
    '--force',
  ], {
    env: {
      ...process.env,
      PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
      HOME: home,
      TMPDIR: join(server.tmpDir, 'tmp'),
      XDG_CONFIG_HOME: join(xdg, 'config'),
      XDG_DATA_HOME: join(xdg, 'data'),
      XDG_CACHE_HOME: join(xdg, 'cache'),
      XDG_STATE_HOME: join(xdg, 'state'),
      // Let server.stop() find it, should it outlive Ctrl-C.
      WT_HOST_RUN: server.runId,
    },
  });
}

/** The installed extension's output channel ("Workspace Tools") as the server logged it. */
function extensionLog(server) {
  const logs = join(server.userDataDir, 'logs');
  if (!existsSync(logs)) return '';
  const files = readdirSync(logs, { recursive: true }).map(String).filter((f) => f.endsWith(join('workspace-tools.workspace-tools', 'Workspace Tools.log')));
  return files.length ? readFileSync(join(logs, files.sort().at(-1)), 'utf8') : '';
}

/** Opens the workbench in headless Chromium, shows the view and the commands, saves a screenshot. */
async function screenshot(server, url, file, executablePath) {
  const profile = mkdtempSync(join(tmpdir(), 'wt-sandbox-chromium-'));
  const forget = cleanupOnExit(() => rmSync(profile, { recursive: true, force: true }));
  let context;
  let groups;
  try {
    context = await launchChromium(server, executablePath, profile, { width: 1600, height: 1000 });
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(url);
    // No smoke-test driver here (see startServer below): the workbench is ready when its parts are.
    await page.locator(WORKBENCH.root).waitFor({ state: 'visible', timeout: 60_000 });
    await page.locator(WORKBENCH.statusBar).waitFor({ state: 'visible', timeout: 60_000 });

    // The installed extension's commands reach the palette once it is scanned: wait for them.
    const palette = async (text) => {
      await page.keyboard.press('F1');
      await page.locator(PALETTE.input).waitFor({ state: 'visible' });
      await page.keyboard.type(text);
      await page.locator(PALETTE.row).first().waitFor({ state: 'visible', timeout: 5_000 }).catch(() => {});
      await sleep(400);
    };
    const runCommand = async (label) => {
      await palette(label);
      const row = page.locator(PALETTE.row).filter({ has: page.locator('.label-name', { hasText: label }) }).first();
      await row.waitFor({ state: 'visible', timeout: 10_000 });
      await row.click();
      await page.locator(PALETTE.widget).waitFor({ state: 'hidden' });
    };
    const deadline = Date.now() + 60_000;
    for (;;) {
      await palette('Workspace Tools: Show Audit Log');
      if (await page.locator(PALETTE.rowLabel).filter({ hasText: 'Workspace Tools: Show Audit Log' }).count()) break;
      await page.keyboard.press('Escape');
      if (Date.now() > deadline) throw new Error('the installed extension\'s commands never reached the palette');
      await sleep(1000);
    }
    await page.keyboard.press('Escape');

    // A source file open, the Workspace Tools view beside it, and the palette listing the commands.
    await page.keyboard.press('Control+P');
    await page.locator(PALETTE.input).waitFor({ state: 'visible' });
    await page.keyboard.type('cart.js');
    await page.locator(PALETTE.row).filter({ hasText: 'cart.js' }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await page.keyboard.press('Enter');
    await page.locator(PANES.tabByResource('cart.js')).waitFor({ state: 'visible', timeout: 15_000 });
    await runCommand('View: Show Workspace Tools');
    await page.locator(WORKBENCH.sideBar).getByText('Staged Changes', { exact: false }).first().waitFor({ state: 'visible', timeout: 15_000 });
    await palette('Workspace Tools');
    await page.mouse.move(800, 900);
    await sleep(800);
    mkdirSync(dirname(file), { recursive: true });
    await page.screenshot({ path: file });
    log(`screenshot: ${file}`);
    // What the installed extension says about itself (its output channel, as written to disk).
    for (const line of extensionLog(server).split('\n').filter(Boolean)) log(`extension: ${line.replace(/^\S+ \S+ /, '')}`);
  } finally {
    // Chromium's process groups, so server.stop() can wait until they are reaped.
    groups = [...groupsOf(server.marker)];
    await context?.close().catch(() => {});
    rmSync(profile, { recursive: true, force: true });
    forget();
  }
  return groups;
}

async function main() {
  const { values } = parseArgs({
    options: {
      screenshot: { type: 'string' },
      vsix: { type: 'string' },
      untrusted: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('node scripts/sandbox.mjs [--screenshot FILE] [--vsix FILE] [--untrusted]\n');
    return 0;
  }
  // Before the host's own exit hooks (registered by the first cleanupOnExit), which exit at once.
  process.once('SIGINT', () => process.stderr.write('\n[sandbox] stopping\n'));
  await ensureCodeServer(await ensureNode24());
  const executablePath = values.screenshot ? await ensureChromium() : undefined;
  const vsix = values.vsix ? resolve(values.vsix) : await packageVsix();
  if (!existsSync(vsix)) throw new Error(`${vsix} does not exist`);

  const tmp = mkdtempSync(join(tmpdir(), 'wt-sandbox-'));
  const forgetTmp = cleanupOnExit(() => rmSync(tmp, { recursive: true, force: true }));
  const workspace = join(tmp, 'demo');
  cpSync(DEMO, workspace, { recursive: true });
  let server;
  try {
    // A person's VS Code: no smoke-test driver, which would keep notifications from showing as
    // toasts (test/host/server.mjs passes `--vscode-option enable-smoke-test-driver` unless
    // `smokeTestDriver: false`).
    server = await startServer({ workspace, disableWorkspaceTrust: !values.untrusted, smokeTestDriver: false });
    await installVsix(server, vsix);
    const url = `${server.baseUrl}/?folder=${encodeURIComponent(workspace)}`;

    if (values.screenshot) {
      const groups = await screenshot(server, url, resolve(values.screenshot), executablePath);
      await server.stop({ alsoReap: groups });
      return 0;
    }

    process.stdout.write([
      '',
      'Workspace Tools sandbox is running (code-server, VS Code 1.139).',
      `  Open:      ${url}`,
      `  Workspace: ${workspace} (a copy of test/fixtures/demo; edits stay there)`,
      `  Server log: ${server.logFile}`,
      'Press Ctrl-C to stop.',
      '',
    ].join('\n'));
    // Runs until Ctrl-C: the host's exit hooks (cleanupOnExit) then kill the server's process
    // group and everything carrying its marker, and remove its temp folder and ours.
    await new Promise(() => { setInterval(() => {}, 1 << 30); });
    return 0;
  } finally {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
    forgetTmp();
  }
}

main().then(
  (code) => { process.exitCode = code; },
  (err) => {
    console.error(`[sandbox] ${err.stack ?? err}`);
    process.exitCode = 1;
  },
);
