// Packages the extension into .vsix files with vsce: the universal package (`npm run package`,
// workspace-tools.vsix, as always) and one package per platform (`npm run package -- --target
// linux-x64`, workspace-tools-linux-x64.vsix; `--target all` builds all six). A platform's package
// carries only that platform's native files, from the table NATIVE_MODULES below; the universal
// package carries no native file and nothing from node_modules.
//
//   node scripts/package.mjs [--target universal|linux-x64|…|all] [--out DIR] [--no-build]
//   node scripts/package.mjs --list [--target …] [--json]     what each package would hold (vsce ls)
//
// The bundle (dist/, esbuild --production) holds every JavaScript dependency. ripgrep is not
// packaged for any platform: the extension runs the rg VS Code ships (src/core/ripgrep/binary.ts).
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..');

/** The platform packages: vsce's target names, which are Node's `${process.platform}-${process.arch}`. */
export const TARGETS = ['linux-x64', 'linux-arm64', 'darwin-x64', 'darwin-arm64', 'win32-x64'];
/** What `--target` takes besides a platform: the package without native files, and every package. */
export const UNIVERSAL = 'universal';

/** This machine's package target (vsce's names are Node's platform-arch): the one that carries its native files. */
export function hostTarget() {
  const target = `${process.platform}-${process.arch}`;
  if (!TARGETS.includes(target))
    throw new Error(`no platform package is built for ${target} (scripts/package.mjs builds ${TARGETS.join(', ')})`);
  return target;
}

/**
 * Runtime dependencies that are loaded from node_modules rather than bundled, because they find
 * native helpers next to their own files. A platform package carries each one's `files`, its
 * `native` files for that platform, and its production dependencies (found the way Node finds
 * them); a module that is not installed is left out, and the script says so.
 *
 * @anthropic-ai/sandbox-runtime is the shell's OS sandbox (run_shell_command). Its seccomp helper is built per
 * architecture for Linux; macOS uses sandbox-exec, which ships with the system. Windows gets its
 * code but not srt-win.exe: the shell refuses there (it needs bubblewrap or sandbox-exec), and the
 * library's own refusal message needs its code loaded. The Java proxy agent is one jar for all.
 */
export const NATIVE_MODULES = [
  {
    name: '@anthropic-ai/sandbox-runtime',
    files: ['package.json', 'LICENSE', 'dist/**/*.js', 'vendor/java-proxy-agent/srt-proxy-agent.jar'],
    native: {
      'linux-x64': ['vendor/seccomp/x64/apply-seccomp'],
      'linux-arm64': ['vendor/seccomp/arm64/apply-seccomp'],
      'darwin-x64': [],
      'darwin-arm64': [],
      'win32-x64': [],
    },
  },
];

/** What a production dependency of a native module contributes: its code, manifests and licence. */
const DEPENDENCY_FILES = ['**/*.js', '**/*.cjs', '**/*.mjs', '**/*.json', '**/LICEN[CS]E*'];

/** The vsix file a package is written to. */
export const vsixName = (target) => (target === UNIVERSAL ? 'workspace-tools.vsix' : `workspace-tools-${target}.vsix`);

/** The folder Node would load `name` from when required from `fromDir`, or undefined. */
function findPackageDir(name, fromDir, root) {
  for (let dir = fromDir; ; dir = dirname(dir)) {
    const candidate = join(dir, 'node_modules', name);
    if (existsSync(join(candidate, 'package.json'))) return candidate;
    if (dir === root || dirname(dir) === dir) return undefined;
  }
}

/** A module's production dependencies, transitively, as folders (the module's own excluded). */
function dependencyDirs(moduleDir, root) {
  const found = new Set();
  const visit = (dir) => {
    const { dependencies = {} } = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
    for (const name of Object.keys(dependencies)) {
      const depDir = findPackageDir(name, dir, root);
      if (!depDir) throw new Error(`${relative(root, dir)} depends on ${name}, which is not installed: run npm ci`);
      if (found.has(depDir)) continue;
      found.add(depDir);
      visit(depDir);
    }
  };
  visit(moduleDir);
  return [...found].sort();
}

/**
 * The plan of one package: the .vscodeignore lines that let its node_modules files in, and the
 * modules it leaves out because they are not installed.
 */
export function planPackage(target, root = repoRoot) {
  if (target !== UNIVERSAL && !TARGETS.includes(target))
    throw new Error(`unknown target ${JSON.stringify(target)}: one of ${[UNIVERSAL, ...TARGETS].join(', ')}, or all`);
  const include = [];
  const skipped = [];
  if (target !== UNIVERSAL) {
    for (const module of NATIVE_MODULES) {
      const dir = join(root, 'node_modules', module.name);
      if (!existsSync(join(dir, 'package.json'))) {
        skipped.push(module.name);
        continue;
      }
      const native = module.native[target];
      for (const file of native) {
        if (!existsSync(join(dir, file)))
          throw new Error(
            `${relative(root, join(dir, file))} does not exist: NATIVE_MODULES in scripts/package.mjs names a ${target} file this version of ${module.name} does not have`,
          );
      }
      const at = (base, pattern) => `${relative(root, join(base, pattern)).replaceAll('\\', '/')}`;
      include.push(...[...module.files, ...native].map((p) => at(dir, p)));
      for (const depDir of dependencyDirs(dir, root)) include.push(...DEPENDENCY_FILES.map((p) => at(depDir, p)));
    }
  }
  return { target, include, skipped };
}

/** The ignore file vsce reads for a plan: the repository's .vscodeignore, then the plan's node_modules files. */
function ignoreFileFor(plan, root, dir) {
  const file = join(dir, `${plan.target}.vscodeignore`);
  const base = readFileSync(join(root, '.vscodeignore'), 'utf8').trimEnd();
  writeFileSync(file, `${base}\n${plan.include.map((p) => `!${p}`).join('\n')}\n`);
  return file;
}

function run(cmd, args, options) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let stdout = '';
    let stderr = '';
    child.stdout.on('data', (d) => {
      stdout += d;
    });
    child.stderr.on('data', (d) => {
      stderr += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0
        ? resolvePromise(stdout)
        : reject(new Error(`${[cmd, ...args].join(' ')} exited ${code}:\n${stdout}${stderr}`)),
    );
  });
}

/** vsce's arguments for a plan: npm's dependency detection only when node_modules files are wanted (it runs `npm list`). */
function vsceArgs(plan, ignoreFile) {
  return ['--ignoreFile', ignoreFile, ...(plan.include.length ? ['--dependencies'] : ['--no-dependencies'])];
}

/** This repository's vsce (also for packaging another folder, as the tests do). */
function vscePath() {
  return createRequire(join(repoRoot, 'package.json')).resolve('@vscode/vsce/vsce');
}

/** The files a package would hold, as vsce lists them (sorted). */
export async function listPackage(target, { root = repoRoot } = {}) {
  const plan = planPackage(target, root);
  const dir = mkdtempSync(join(tmpdir(), 'wt-package-'));
  try {
    const out = await run(process.execPath, [vscePath(), 'ls', ...vsceArgs(plan, ignoreFileFor(plan, root, dir))], {
      cwd: root,
    });
    return { ...plan, files: out.split('\n').filter(Boolean).sort() };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** Writes one package into `outDir` (dist/ must be built); returns its path, size and plan. */
export async function buildPackage(target, { root = repoRoot, outDir = root } = {}) {
  const plan = planPackage(target, root);
  const dir = mkdtempSync(join(tmpdir(), 'wt-package-'));
  const vsix = join(outDir, vsixName(target));
  try {
    await run(
      process.execPath,
      [
        vscePath(),
        'package',
        ...(target === UNIVERSAL ? [] : ['--target', target]),
        ...vsceArgs(plan, ignoreFileFor(plan, root, dir)),
        '--no-rewrite-relative-links',
        '--out',
        vsix,
      ],
      { cwd: root },
    );
    return { ...plan, vsix, bytes: statSync(vsix).size };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The production bundle: dist/ minified (esbuild.mjs --production). */
export function buildProduction(root = repoRoot) {
  return run(process.execPath, [join(root, 'esbuild.mjs'), '--production'], { cwd: root });
}

function targetsOf(value) {
  if (value === undefined) return [UNIVERSAL];
  if (value === 'all') return [UNIVERSAL, ...TARGETS];
  planPackage(value); // an unknown target fails here, before anything is built
  return [value];
}

const skippedNote = (plan) =>
  plan.skipped.map(
    (name) =>
      `${plan.target}: ${name} is not installed, so its files are not in this package (npm ci installs it once package.json depends on it).`,
  );

async function main() {
  const { values } = parseArgs({
    options: {
      target: { type: 'string' },
      out: { type: 'string' },
      list: { type: 'boolean', default: false },
      json: { type: 'boolean', default: false },
      'no-build': { type: 'boolean', default: false },
      help: { type: 'boolean', short: 'h', default: false },
    },
  });
  if (values.help) {
    process.stdout.write(
      `node scripts/package.mjs [--target ${[UNIVERSAL, ...TARGETS].join('|')}|all] [--out DIR] [--no-build]\nnode scripts/package.mjs --list [--target …] [--json]\n`,
    );
    return;
  }
  const targets = targetsOf(values.target);
  if (values.list) {
    const listed = [];
    for (const target of targets) listed.push(await listPackage(target));
    for (const plan of listed) for (const note of skippedNote(plan)) process.stderr.write(`${note}\n`);
    if (values.json)
      process.stdout.write(
        `${JSON.stringify(Object.fromEntries(listed.map((p) => [p.target, { files: p.files, skipped: p.skipped }])), null, 2)}\n`,
      );
    else
      for (const plan of listed)
        process.stdout.write(`${vsixName(plan.target)}:\n${plan.files.map((f) => `  ${f}`).join('\n')}\n`);
    return;
  }
  if (!values['no-build']) {
    process.stderr.write('[package] esbuild --production\n');
    await buildProduction();
  }
  const outDir = resolve(values.out ?? repoRoot);
  for (const target of targets) {
    const built = await buildPackage(target, { outDir });
    for (const note of skippedNote(built)) process.stderr.write(`${note}\n`);
    process.stderr.write(`[package] ${built.vsix} (${target}, ${(built.bytes / 1024).toFixed(0)} KiB)\n`);
  }
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main().catch((e) => {
    process.stderr.write(`[package] ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = 1;
  });
}
