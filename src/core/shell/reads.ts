import { readdirSync, realpathSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';

/**
 * What a command may read outside the workspace: the system's programs, libraries and settings.
 * Security: everything else at the top of the file system (home folders, /tmp and every other
 * session's temp folder, /mnt, /media, /srv, /run, /var, a folder a person made there) is unreadable
 * whatever its name, and so is what a link in the workspace leads to there.
 */
const SYSTEM_TOP = new Set([
  'usr',
  'bin',
  'sbin',
  'lib',
  'lib32',
  'lib64',
  'libx32',
  'etc',
  'opt',
  'dev',
  'proc',
  'sys',
  'nix',
  'snap',
]);

/** In /etc, what holds credentials (readable to root, who runs CI). */
const SYSTEM_SECRETS = [
  '/etc/shadow',
  '/etc/shadow-',
  '/etc/gshadow',
  '/etc/gshadow-',
  '/etc/ssh',
  '/etc/ssl/private',
  '/etc/sudoers',
  '/etc/sudoers.d',
  '/etc/security/opasswd',
];

/**
 * Where toolchains and package caches that hold no credentials live below a home folder (read-only
 * for a build: node version managers, pyenv, rustup, cargo's binaries and registry, go's modules and
 * SDKs, sdkman, maven's and gradle's caches, ~/.local's programs and libraries, ghcup, elan,
 * juliaup, .NET, Flutter, conda's installations).
 */
export const HOME_TOOLCHAINS: readonly string[] = [
  '.nvm',
  '.fnm',
  '.local/share/fnm',
  '.volta',
  '.asdf',
  '.local/share/mise',
  '.pyenv',
  '.rbenv',
  '.rustup',
  '.cargo/bin',
  '.cargo/registry',
  'go/bin',
  'go/pkg/mod',
  '.sdkman',
  '.local/bin',
  '.local/lib',
  '.m2/repository',
  '.gradle/caches',
  '.gradle/wrapper',
  '.deno/bin',
  '.bun/bin',
  '.ghcup',
  '.elan',
  '.juliaup',
  '.dotnet',
  'sdk',
  'flutter',
  'miniconda3',
  'miniforge3',
  'anaconda3',
];

/** On macOS, its system's own folders besides (`/etc` and `/var` lead into `/private`, whose temp folders stay unreadable). */
const MACOS_TOP = new Set(['System', 'Library', 'Applications', 'private', 'cores']);
const MACOS_DENIES = ['/private/tmp', '/private/var/folders', '/private/var/root', '/Library/Keychains'];

/** The unreadable top-level folders of `/` (those that exist), and the system's own secrets. */
export function systemDenies(platform: NodeJS.Platform = 'linux'): string[] {
  let names: string[];
  try {
    names = readdirSync('/');
  } catch {
    names = ['home', 'root', 'tmp', 'mnt', 'media', 'srv', 'run', 'var'];
  }
  const mac = platform === 'darwin';
  return [
    ...names.filter((n) => !SYSTEM_TOP.has(n) && !(mac && MACOS_TOP.has(n))).map((n) => `/${n}`),
    ...SYSTEM_SECRETS,
    ...(mac ? MACOS_DENIES : []),
  ];
}

/** Where links lead `path` (when that differs from it). */
const realOf = (path: string): string[] => {
  try {
    const real = realpathSync(path);
    return real === path ? [] : [real];
  } catch {
    return [];
  }
};

const isFolder = (path: string): boolean => {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
};

/**
 * The toolchain folders a command may read (that exist): those below home, and each folder on the
 * host's PATH outside the system folders (a `bin` with the installation above it, where npm's and
 * pip's scripts lead), unless it is home itself, a folder above it, or a temp folder. Security: below
 * home, a `bin` opens only itself and the `lib` beside it (where `~/.npm-global/bin`'s scripts lead),
 * never the folder above: there the person keeps other things (`~/.local` holds shell history and
 * the Trash, `~/.cargo` a registry token, `~/.npm-global/etc` an npmrc).
 */
export function toolchainFolders(home: string, pathVariable: string | undefined, extra: readonly string[]): string[] {
  const found = new Set<string>();
  // Home by its name and by where its links lead (/home/u -> /data/u): a PATH folder may name either.
  const homes = [home, ...realOf(home)];
  const inHome = (dir: string): boolean =>
    [dir, ...realOf(dir)].some((d) => homes.some((h) => d.startsWith(`${h}${nodePath.sep}`)));
  for (const rel of HOME_TOOLCHAINS) {
    const abs = nodePath.join(home, rel);
    if (isFolder(abs)) for (const path of [abs, ...realOf(abs)]) found.add(path);
  }
  for (const entry of (pathVariable ?? '').split(':')) {
    if (!nodePath.isAbsolute(entry)) continue;
    const dir = nodePath.resolve(entry);
    const top = dir.split(nodePath.sep)[1] ?? '';
    if (SYSTEM_TOP.has(top) || /^\/(tmp|var\/tmp)(\/|$)/.test(dir) || !isFolder(dir)) continue;
    const isBin = nodePath.basename(dir) === 'bin';
    if (inHome(dir)) {
      // `~/bin` is the person's own folder of scripts, not an installation's.
      if (isBin && [dir, ...realOf(dir)].some((d) => homes.includes(nodePath.dirname(d)))) continue;
      const lib = nodePath.join(nodePath.dirname(dir), 'lib');
      for (const folder of isBin ? [dir, lib] : [dir]) if (isFolder(folder)) found.add(folder);
      continue;
    }
    const installation = isBin ? nodePath.dirname(dir) : dir;
    if (
      installation === home ||
      home.startsWith(`${installation}${nodePath.sep}`) ||
      installation === nodePath.parse(installation).root
    )
      continue;
    found.add(installation);
  }
  for (const folder of extra) if (nodePath.isAbsolute(folder) && isFolder(folder)) found.add(folder);
  return [...found].sort();
}
