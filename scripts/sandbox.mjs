// Try Workspace Tools in a real VS Code: packages the extension (`npm run package`), installs the
// .vsix into a fresh code-server profile (`--install-extension`, as a person would), opens a copy
// of a small demo workspace (test/fixtures/demo: sources, a JSON, a Markdown and a .env with a
// fake secret), prints the URL to open and keeps running until Ctrl-C, then stops everything.
//
//   npm run sandbox                          # = node scripts/sandbox.mjs
//   npm run sandbox -- --demo                # an agent conversation to watch, no account needed
//   node scripts/sandbox.mjs --screenshot media/screenshot-sandbox.png
//   node scripts/sandbox.mjs --demo --screenshot media/screenshot-demo.png
//   node scripts/sandbox.mjs --vsix workspace-tools.vsix --untrusted
//
// Options:
//   --demo             also install the test-only scripted model (test/e2e/scripted-model) into
//                      this profile only; in each window that opens it sends a prompt in agent
//                      mode and walks the real flow (search, open, read, stage, patch, save), every
//                      call waiting for the person's click (scripts/demo.mjs)
//   --screenshot FILE  open the URL in headless Chromium, save a screenshot to FILE and exit: the
//                      Workspace Tools view and its commands, or with --demo the save's
//                      confirmation waiting beside the staged diff (the earlier calls allowed once)
//   --vsix FILE        install this .vsix instead of building one
//   --untrusted        start with workspace trust on: the folder opens in restricted mode
//
// It runs itself under Node 24 (scripts/node24.mjs). code-server (a real VS Code 1.139) and
// Chromium come from the host's cache (test/host/ensure.mjs installs them on first use, printing
// each step). Nothing is written outside that cache, the repo's dist/ and .vsix, and the temp
// folder; the extension runs as installed, so every call asks the person.
import { cpSync, existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { parseArgs } from 'node:util';
import * as d from '../test/e2e/driver.mjs';
import { ensureAll, repoRoot } from '../test/host/ensure.mjs';
import { runLogged, step } from '../test/host/progress.mjs';
import { launchChromium } from '../test/host/run-suite.mjs';
import { PALETTE, PANES, WORKBENCH } from '../test/host/selectors.mjs';
import { cleanupOnExit, groupsOf, startServer } from '../test/host/server.mjs';
import { arrangeDemoPicture, demoFileOnDisk, demoSetup, walkDemoToSave } from './demo.mjs';
import { runOnNode24 } from './node24.mjs';
import { hostTarget, vsixName } from './package.mjs';

const DEMO_WORKSPACE = join(repoRoot, 'test/fixtures/demo');
const log = (msg) => process.stderr.write(`[sandbox] ${msg}\n`);
const sandboxStep = (name, fn, retry) => step({ tag: 'sandbox', name, retry }, fn);

/** npm, as the npm that runs this script when there is one (`npm run sandbox`). */
const npm = (args) =>
  process.env.npm_execpath ? [process.execPath, [process.env.npm_execpath, ...args]] : ['npm', args];

/** `npm run package -- --target <this machine>`: dist/ in production mode and this platform's .vsix (the shell's sandbox library with its native files). */
function packageVsix(logDir) {
  const target = hostTarget();
  return sandboxStep(
    'package',
    async (progress) => {
      const vsix = join(repoRoot, vsixName(target));
      const logFile = join(logDir, 'package.log');
      progress.doing(`npm run package -- --target ${target} (esbuild --production, vsce) into ${vsix}`);
      const [cmd, args] = npm(['run', 'package', '--', '--target', target]);
      await runLogged(cmd, args, { cwd: repoRoot, logFile });
      if (!existsSync(vsix)) throw new Error(`npm run package did not write ${vsix}; see ${logFile}`);
      return vsix;
    },
    `npm run package -- --target ${target}`,
  );
}

/**
 * `code-server --install-extension` into the running server's fresh extensions dir (the CLI
 * process exits when done; the server's extension host scans the folder when a window connects).
 */
function installVsix(server, vsix, { node, codeServer }) {
  return sandboxStep('install', async (progress) => {
    const xdg = join(server.tmpDir, 'xdg');
    progress.doing(`code-server --install-extension ${vsix}`);
    await runLogged(
      node,
      [
        codeServer,
        '--user-data-dir',
        server.userDataDir,
        '--extensions-dir',
        server.extensionsDir,
        '--install-extension',
        vsix,
        '--force',
      ],
      {
        logFile: join(server.tmpDir, 'install-extension.log'),
        env: {
          ...process.env,
          PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
          HOME: join(server.tmpDir, 'home'),
          TMPDIR: join(server.tmpDir, 'tmp'),
          XDG_CONFIG_HOME: join(xdg, 'config'),
          XDG_DATA_HOME: join(xdg, 'data'),
          XDG_CACHE_HOME: join(xdg, 'cache'),
          XDG_STATE_HOME: join(xdg, 'state'),
          // Let server.stop() find it, should it outlive Ctrl-C.
          WT_HOST_RUN: server.runId,
        },
      },
    );
    return server.extensionsDir;
  });
}

/** The installed extension's output channel ("Workspace Tools") as the server logged it. */
function extensionLog(server) {
  const logs = join(server.userDataDir, 'logs');
  if (!existsSync(logs)) return '';
  const files = readdirSync(logs, { recursive: true })
    .map(String)
    .filter((f) => f.endsWith(join('workspace-tools.workspace-tools', 'Workspace Tools.log')));
  return files.length ? readFileSync(join(logs, files.sort().at(-1)), 'utf8') : '';
}

/** A source file open, the Workspace Tools view beside it, and the palette listing the commands. */
async function showViewAndCommands(page) {
  // The installed extension's commands reach the palette once it is scanned: wait for them.
  const label = 'Workspace Tools: Show Audit Log';
  await d.waitFor(
    async () => {
      await d.openPalette(page, label);
      const listed = await page.locator(PALETTE.rowLabel).filter({ hasText: label }).count();
      await d.closePalette(page);
      return listed > 0;
    },
    "the installed extension's commands to reach the palette",
    60_000,
    1000,
  );

  await page.keyboard.press('Control+P');
  await page.locator(PALETTE.input).waitFor({ state: 'visible' });
  await page.keyboard.type('cart.js');
  await page.locator(PALETTE.row).filter({ hasText: 'cart.js' }).first().waitFor({ state: 'visible', timeout: 15_000 });
  await page.keyboard.press('Enter');
  await page.locator(PANES.tabByResource('cart.js')).waitFor({ state: 'visible', timeout: 15_000 });
  await d.runCommand(page, 'View: Show Workspace Tools');
  await page
    .locator(WORKBENCH.sideBar)
    .getByText('Staged Changes', { exact: false })
    .first()
    .waitFor({ state: 'visible', timeout: 15_000 });
  await d.openPalette(page, 'Workspace Tools');
  await page
    .locator(PALETTE.rowLabel)
    .filter({ hasText: label })
    .first()
    .waitFor({ state: 'visible', timeout: 15_000 });
}

/**
 * Opens the workbench in headless Chromium, brings it to the state to show (`arrange(page)`),
 * saves a screenshot and closes Chromium; returns Chromium's process groups for server.stop().
 */
async function screenshot(server, url, file, { executablePath, viewport, arrange }) {
  const profile = mkdtempSync(join(tmpdir(), 'wt-sandbox-chromium-'));
  const forget = cleanupOnExit(() => rmSync(profile, { recursive: true, force: true }));
  let context;
  let groups;
  try {
    context = await launchChromium(server, executablePath, profile, viewport);
    const page = context.pages()[0] ?? (await context.newPage());
    await page.goto(url);
    // No smoke-test driver here (see startServer below): the workbench is ready when its parts are.
    await page.locator(WORKBENCH.root).waitFor({ state: 'visible', timeout: 60_000 });
    await page.locator(WORKBENCH.statusBar).waitFor({ state: 'visible', timeout: 60_000 });
    await arrange(page);
    // No hover tooltip in the picture.
    await page.mouse.move(viewport.width / 2, viewport.height - 10);
    await page
      .locator(PANES.hover)
      .first()
      .waitFor({ state: 'hidden', timeout: 5_000 })
      .catch(() => {});
    mkdirSync(dirname(file), { recursive: true });
    await page.screenshot({ path: file });
    log(`screenshot: ${file}`);
    // What the installed extension says about itself (its output channel, as written to disk).
    for (const line of extensionLog(server).split('\n').filter(Boolean))
      log(`extension: ${line.replace(/^\S+ \S+ /, '')}`);
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
      demo: { type: 'boolean', default: false },
      screenshot: { type: 'string' },
      vsix: { type: 'string' },
      untrusted: { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
    strict: true,
  });
  if (values.help) {
    process.stdout.write('node scripts/sandbox.mjs [--demo] [--screenshot FILE] [--vsix FILE] [--untrusted]\n');
    return 0;
  }
  if (values.vsix && !existsSync(resolve(values.vsix))) throw new Error(`--vsix ${values.vsix}: no such file`);
  if (values.demo && values.untrusted)
    throw new Error(
      '--demo needs a trusted workspace (the demo stages and saves a file; an untrusted one has no write tools): drop --untrusted',
    );
  await runOnNode24();
  // Before the host's own exit hooks (registered by the first cleanupOnExit), which exit at once.
  process.once('SIGINT', () => process.stderr.write('\n[sandbox] stopping\n'));
  const host = await ensureAll({ chromium: Boolean(values.screenshot) });

  const tmp = mkdtempSync(join(tmpdir(), 'wt-sandbox-'));
  const forgetTmp = cleanupOnExit(() => rmSync(tmp, { recursive: true, force: true }));
  const workspace = join(tmp, 'demo');
  cpSync(DEMO_WORKSPACE, workspace, { recursive: true });
  let server;
  try {
    const vsix = values.vsix ? resolve(values.vsix) : await packageVsix(tmp);
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8'));
    const demo = values.demo ? demoSetup(tmp, `${manifest.publisher}.${manifest.name}`) : undefined;
    // A person's VS Code: no smoke-test driver, which would keep notifications from showing as
    // toasts (test/host/server.mjs passes `--vscode-option enable-smoke-test-driver` unless
    // `smokeTestDriver: false`).
    server = await sandboxStep('start', async (progress) => {
      progress.doing(
        `starting VS Code 1.139 (code-server) on a free port, fresh profile${demo ? ' with the demo model' : ''}`,
      );
      const started = await startServer({
        workspace,
        disableWorkspaceTrust: !values.untrusted,
        smokeTestDriver: false,
        ...(demo ? { extensions: demo.extensions, env: demo.env } : {}),
      });
      progress.result(started.baseUrl);
      return started;
    });
    await installVsix(server, vsix, host);
    const url = `${server.baseUrl}/?folder=${encodeURIComponent(workspace)}`;

    if (values.screenshot) {
      const before = demo && demoFileOnDisk(workspace);
      const arrange = demo
        ? async (page) => {
            await walkDemoToSave(page, demo.events, log);
            await arrangeDemoPicture(page);
          }
        : showViewAndCommands;
      const viewport = demo ? { width: 1920, height: 1080 } : { width: 1600, height: 1000 };
      const groups = await screenshot(server, url, resolve(values.screenshot), {
        executablePath: host.chromium,
        viewport,
        arrange,
      });
      if (demo && demoFileOnDisk(workspace) !== before)
        throw new Error('the demo changed the file on disk before the person allowed the save');
      await server.stop({ alsoReap: groups });
      return 0;
    }

    process.stdout.write(
      [
        '',
        `Workspace Tools sandbox is running (code-server, VS Code 1.139)${demo ? ' with the demo model' : ''}.`,
        `  Open:      ${url}`,
        `  Workspace: ${workspace} (a copy of test/fixtures/demo; edits stay there)`,
        ...(demo
          ? [
              '  Demo:      each window you open sends a prompt to the demo model in the chat (the first',
              '             takes a minute while Copilot Chat starts); every tool call, and the save,',
              '             waits for your click on its confirmation. No account is needed.',
            ]
          : []),
        `  Server log: ${server.logFile}`,
        'Press Ctrl-C to stop.',
        '',
      ].join('\n'),
    );
    // Runs until Ctrl-C: the host's exit hooks (cleanupOnExit) then kill the server's process
    // group and everything carrying its marker, and remove its temp folder and ours.
    await new Promise(() => {
      setInterval(() => {}, 1 << 30);
    });
    return 0;
  } finally {
    await server?.stop();
    rmSync(tmp, { recursive: true, force: true });
    forgetTmp();
  }
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (err) => {
    console.error(err?.name === 'SetupError' ? err.message : `[sandbox] ${err?.stack ?? err}`);
    process.exitCode = 1;
  },
);
