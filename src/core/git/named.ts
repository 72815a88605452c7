import { realpath } from 'node:fs/promises';
import { entryAt } from './entry.ts';
import * as nodePath from 'node:path';
import { CONFIG_MAX, firstBytes, GIT_ENTRY, GITDIR_FILE_MAX, gitDirsOf } from './dirs.ts';
import { parseConfig, type ConfigEntry } from './config.ts';

/**
 * Security: what a repository's configuration names outside its git directory's own `config` and
 * `hooks`, for git to read as configuration or to run: the files it includes (`include.path`,
 * `includeIf.*.path`, each condition taken as met) and the programs it gives as paths (a filter's
 * `./tools/clean.sh`, a `core.fsmonitor` script). VS Code's git runs git outside any sandbox, and
 * `git status` alone reads every include and runs the fsmonitor and the clean filters; so a command
 * that rewrites one of these files runs its code there. The person's own configuration files
 * (global and system) count too: their relative program paths name a file in every work tree.
 */
export interface NamedByConfig {
  readonly path: string;
  /** The configuration key that names it (`include.path`, `filter.x.clean`, …), or `--global` / `--system` for the person's own files. */
  readonly key: string;
  readonly why: string;
  /** A hooks folder (`core.hooksPath`): held whether or not it exists, as a git directory's own `hooks` is. */
  readonly hooks?: true;
}

const OUTSIDE = "git — VS Code's git too, outside the sandbox —";

/** How deep git follows includes before it gives up. */
const MAX_INCLUDE_DEPTH = 10;

/** Keys whose value git runs as a command, by section (any subsection): in what git runs on its own or on a click in the editor. */
const PROGRAM_KEYS: ReadonlyMap<string, ReadonlySet<string>> = new Map([
  ['core', new Set(['fsmonitor', 'sshcommand', 'askpass', 'editor', 'pager', 'gitproxy', 'alternaterefscommand'])],
  ['filter', new Set(['clean', 'smudge', 'process'])],
  ['diff', new Set(['textconv', 'command', 'external'])],
  ['merge', new Set(['driver'])],
  ['difftool', new Set(['cmd', 'path'])],
  ['mergetool', new Set(['cmd', 'path'])],
  ['credential', new Set(['helper'])],
  ['gpg', new Set(['program', 'defaultkeycommand'])],
  ['trailer', new Set(['command', 'cmd'])],
  ['sequence', new Set(['editor'])],
  ['remote', new Set(['uploadpack', 'receivepack'])],
  ['submodule', new Set(['update'])],
]);

const isProgram = (e: ConfigEntry): boolean =>
  e.section === 'pager' || PROGRAM_KEYS.get(e.section)?.has(e.key) === true;
const isInclude = (e: ConfigEntry): boolean =>
  (e.section === 'include' || e.section === 'includeif') && e.key === 'path';

/** A configuration file read. */
export interface ConfigFile {
  readonly path: string;
  readonly entries: readonly ConfigEntry[];
}

/** The person's own configuration (system, XDG and home files, includes followed), which every repository reads before its own. */
export interface PersonalConfig {
  readonly files: readonly ConfigFile[];
  /** Its files and what they include, present or not (a workspace may hold them: a dotfiles repository, a workspace opened at home). */
  readonly includes: readonly NamedByConfig[];
}

/** Where git finds the person's configuration, given the environment VS Code's git runs in (`GIT_CONFIG_GLOBAL` and `GIT_CONFIG_SYSTEM` name other files). */
export function personalConfigFiles(home: string, env: Readonly<Record<string, string | undefined>>): string[] {
  const set = (name: string): string | undefined =>
    env[name] !== undefined && env[name] !== '' ? env[name] : undefined;
  const xdg = set('XDG_CONFIG_HOME') ?? nodePath.join(home, '.config');
  const system = set('GIT_CONFIG_SYSTEM') ?? '/etc/gitconfig';
  const global = set('GIT_CONFIG_GLOBAL');
  return [
    system,
    ...(global !== undefined ? [global] : [nodePath.join(xdg, 'git', 'config'), nodePath.join(home, '.gitconfig')]),
  ];
}

export async function readPersonalConfig(own: readonly string[], home: string): Promise<PersonalConfig> {
  const includes: NamedByConfig[] = own.map((path, i) => ({
    path,
    key: i === 0 ? '--system' : '--global',
    why: `the person's own git configuration, which ${OUTSIDE} reads`,
  }));
  const files = await readConfigs(own, home, (include) => includes.push(include));
  return { files, includes };
}

const expandHome = (path: string, home: string): string =>
  path === '~' || path.startsWith('~/') ? nodePath.join(home, path.slice(1)) : path;

/**
 * `start` (configuration files, absolute) and every file they include, as git follows them: through
 * links, a relative include from the including file's folder, `~/` from home. `named` gets each
 * include, read or absent (git skips a missing one, so a command could make it).
 */
async function readConfigs(
  start: readonly string[],
  home: string,
  named: (include: NamedByConfig) => void,
): Promise<ConfigFile[]> {
  const files: ConfigFile[] = [];
  const seen = new Set<string>();
  const read = async (path: string, depth: number): Promise<void> => {
    if (seen.has(path) || depth > MAX_INCLUDE_DEPTH) return;
    seen.add(path);
    const text = await firstBytes(path, CONFIG_MAX, { followLink: true }).catch(() => undefined);
    if (text === undefined) return;
    const entries = parseConfig(text).entries;
    files.push({ path, entries });
    for (const e of entries) {
      if (!isInclude(e) || e.value === '') continue;
      const included = nodePath.resolve(nodePath.dirname(path), expandHome(e.value, home));
      const key = e.subsection === undefined ? 'include.path' : `includeIf.${e.subsection}.path`;
      named({
        path: included,
        key,
        why: `a file that a git configuration includes (${key}), which ${OUTSIDE} reads as configuration`,
      });
      await read(included, depth + 1);
    }
  };
  for (const path of start) await read(path, 0);
  return files;
}

/**
 * The paths in a command line: each word, quotes taken off, an option's value after its "=", "~/"
 * from home, a relative one from `top` (git runs these in the work tree's top). Security: a bare
 * word counts too (`sh clean.sh`, `python3 x.py` run a file of the work tree), so every word is
 * taken for a path that may name a file; a word naming none matches nothing.
 */
export function pathsInCommand(value: string, top: string, home: string): string[] {
  const line = value.startsWith('!') ? value.slice(1) : value;
  const paths: string[] = [];
  for (const match of line.matchAll(/"((?:[^"\\]|\\.)*)"|'([^']*)'|(\S+)/g)) {
    let word = (match[1]?.replace(/\\(.)/g, '$1') ?? match[2] ?? match[3])!;
    const option = /^--?[A-Za-z][\w-]*=(.*)$/.exec(word);
    if (option) word = option[1]!;
    if (word === '' || word.startsWith('-') || word.startsWith('%') || /^[a-z][a-z0-9+.-]*:\/\//i.test(word)) continue;
    paths.push(nodePath.resolve(top, expandHome(word, home)));
  }
  return paths;
}

/** Where git runs a repository's commands: `core.worktree` from the git directory, else the folder that holds it. */
function workTreeTop(gitDir: string, entries: readonly ConfigEntry[]): string {
  let worktree: string | undefined;
  for (const e of entries)
    if (e.section === 'core' && e.subsection === undefined && e.key === 'worktree') worktree = e.value;
  return worktree !== undefined && worktree !== '' ? nodePath.resolve(gitDir, worktree) : nodePath.dirname(gitDir);
}

/** A linked worktree's git directory keeps no configuration of its own: it reads its common one, and runs in the folder its `gitdir` names. */
async function worktreePlace(gitDir: string): Promise<{ configDir: string; top: string | undefined }> {
  if (nodePath.basename(nodePath.dirname(gitDir)) !== 'worktrees') return { configDir: gitDir, top: undefined };
  const named = (await firstBytes(nodePath.join(gitDir, 'gitdir'), GITDIR_FILE_MAX).catch(() => '')).trim();
  return {
    configDir: nodePath.dirname(nodePath.dirname(gitDir)),
    top: named === '' ? undefined : nodePath.dirname(nodePath.resolve(gitDir, named)),
  };
}

/**
 * What the configuration of the repository at `gitDir` (the person's own included, whose includes
 * are not repeated here) names for git to read or run: included files, hooks folders and programs
 * given as paths, each with why it matters, present or not.
 */
export async function namedByConfig(gitDir: string, personal: PersonalConfig, home: string): Promise<NamedByConfig[]> {
  const named: NamedByConfig[] = [];
  const { configDir, top: linkedTop } = await worktreePlace(gitDir);
  const own = await readConfigs(
    [nodePath.join(configDir, 'config'), nodePath.join(gitDir, 'config.worktree')],
    home,
    (include) => named.push(include),
  );
  const top =
    linkedTop ??
    workTreeTop(
      configDir,
      own.flatMap((f) => f.entries),
    );
  return [...named, ...namesIn([...personal.files, ...own], top, home)];
}

/** The hooks folders and programs these configuration files name, relative ones taken from the work tree's top. */
function namesIn(files: readonly ConfigFile[], top: string, home: string): NamedByConfig[] {
  const named: NamedByConfig[] = [];
  for (const file of files) {
    for (const e of file.entries) {
      const name = e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;
      if (e.section === 'core' && e.subsection === undefined && e.key === 'hookspath' && e.value !== '') {
        named.push({
          path: nodePath.resolve(top, expandHome(e.value, home)),
          key: 'core.hooksPath',
          why: `the hooks folder that core.hooksPath names, whose hooks ${OUTSIDE} runs`,
          hooks: true,
        });
      } else if (isProgram(e)) {
        for (const path of pathsInCommand(e.value, top, home))
          named.push({ path, key: name, why: `a program that ${name} names, which ${OUTSIDE} runs` });
      }
    }
  }
  return named;
}

/** The `.git` entries of the folders above `path`, nearest first: the repositories it is part of, as git finds them. */
async function gitEntriesAbove(path: string): Promise<string[]> {
  const entries: string[] = [];
  for (let dir = nodePath.dirname(path); ; dir = nodePath.dirname(dir)) {
    const entry = nodePath.join(dir, GIT_ENTRY);
    if (await entryAt(entry)) entries.push(entry);
    if (nodePath.dirname(dir) === dir) return entries;
  }
}

/** What a git configuration names, with the real path it leads to (where that differs). */
export interface GitName extends NamedByConfig {
  readonly real?: string;
}

/**
 * What git configurations name for the files of the folder `dir` (its real path): the person's
 * own, and those of the repositories it is in, each with where a link there leads. One reading
 * serves every file of the folder (`gitNameIn`).
 */
export async function gitNamesFor(
  dir: string,
  home: string,
  env: Readonly<Record<string, string | undefined>>,
): Promise<GitName[]> {
  const personal = await readPersonalConfig(personalConfigFiles(home, env), home);
  const named = [...personal.includes];
  for (const gitDir of await gitDirsOf(await gitEntriesAbove(nodePath.join(dir, GIT_ENTRY))))
    named.push(...(await namedByConfig(gitDir, personal, home)));
  return Promise.all(
    named.map(async (candidate) => {
      const real = await realpath(candidate.path).catch(() => undefined);
      return real === undefined || real === candidate.path ? candidate : { ...candidate, real };
    }),
  );
}

/**
 * What git would take the file at `abs` (its real path) to be, outside any sandbox, when one of
 * `names` (`gitNamesFor` its folder) names it: undefined when none does.
 */
export function gitNameIn(abs: string, names: readonly GitName[]): NamedByConfig | undefined {
  for (const { real, ...candidate } of names) {
    if (candidate.path === abs || real === abs) return candidate;
    if (candidate.hooks === true && abs.startsWith(`${candidate.path}${nodePath.sep}`))
      return { ...candidate, path: abs, why: `a hook in ${candidate.why}` };
  }
  return undefined;
}

/** What the configurations of these git directories and the person's own name for git to read or run: files, and hooks folders whose every file counts. */
export interface GitNamed {
  readonly files: ReadonlySet<string>;
  readonly hooks: readonly string[];
}

/**
 * `GitNamed` for these git directories (each with the person's own configuration), every path also
 * by where a link there leads. `newTops`: work trees of repositories not on disk yet (a command made
 * them), where the person's own configuration names files too (a relative `core.hooksPath`).
 */
export async function gitNamedBy(
  gitDirs: readonly string[],
  home: string,
  env: Readonly<Record<string, string | undefined>>,
  newTops: readonly string[] = [],
): Promise<GitNamed> {
  const personal = await readPersonalConfig(personalConfigFiles(home, env), home);
  const named = [...personal.includes];
  for (const gitDir of gitDirs) named.push(...(await namedByConfig(gitDir, personal, home)));
  for (const top of newTops) named.push(...namesIn(personal.files, top, home));
  const files = new Set<string>();
  const hooks: string[] = [];
  for (const n of named) {
    const real = await realpath(n.path).catch(() => undefined);
    for (const path of real === undefined ? [n.path] : [n.path, real]) {
      if (n.hooks === true) hooks.push(path);
      else files.add(path);
    }
  }
  return { files, hooks };
}

/** Every git directory of the repositories these folders are part of or hold at their top (with their submodules and worktrees). */
export async function gitDirsAround(folders: readonly string[]): Promise<string[]> {
  const entries = new Set<string>();
  for (const folder of folders) {
    for (const entry of await gitEntriesAbove(nodePath.join(folder, GIT_ENTRY))) entries.add(entry);
    entries.add(nodePath.join(folder, GIT_ENTRY));
  }
  return gitDirsOf([...entries]);
}
