import type { FSWatcher } from 'node:fs';
import { readdir } from 'node:fs/promises';
import { entryAt } from './entry.ts';
import * as nodePath from 'node:path';
import { entryName, parseConfig } from './git-config.ts';
import { CONFIG_MAX, firstBytes, GIT_ENTRY, gitDirOf, gitDirsOf, REDIRECTS, watchWhileRunning } from './git-dirs.ts';
import { namesRelativeToWorkTree, personalNamesIn, type PersonalConfig } from './git-named.ts';
import type { WatchGit } from './port.ts';

/**
 * What `git init`, `git clone` (a submodule's too) and everyday `git config` write in a
 * repository's configuration; none of it makes git run anything. `*` is a subsection.
 */
const SAFE_NAMES: ReadonlySet<string> = new Set([
  ...['repositoryformatversion', 'filemode', 'bare', 'logallrefupdates', 'ignorecase', 'precomposeunicode', 'symlinks', 'autocrlf', 'eol', 'safecrlf', 'longpaths', 'quotepath', 'sparsecheckout', 'sparsecheckoutcone', 'worktree'].map((k) => `core.${k}`),
  ...['url', 'pushurl', 'fetch', 'push', 'tagopt', 'prune', 'mirror', 'promisor', 'partialclonefilter'].map((k) => `remote.*.${k}`),
  ...['remote', 'merge', 'rebase', 'pushremote', 'description', 'vscode-merge-base'].map((k) => `branch.*.${k}`),
  ...['url', 'active', 'branch'].map((k) => `submodule.*.${k}`),
  'user.name', 'user.email', 'init.defaultbranch', 'extensions.objectformat', 'extensions.refstorage', 'extensions.partialclone',
  'pull.rebase', 'pull.ff', 'fetch.prune', 'push.default', 'push.autosetupremote', 'gc.auto',
]);

/** Something a command made in a repository that was not there when it started, which would have git run or read what the command chose. */
export interface UnsafeGitChange {
  /** The file or link to take out (absolute). */
  readonly path: string;
  /** Why, after "the command made PATH, ". */
  readonly why: string;
}

/** Why a name of `REDIRECTS` may not be made, after "the command made PATH, ". */
export const REDIRECT_WHY = 'which sends git — VS Code\'s git too, outside the sandbox — to another folder\'s configuration and hooks';

const OUTSIDE_THE_SANDBOX = 'git runs — VS Code\'s git too, outside the sandbox, as soon as it finds the repository';

/** Why this configuration text is unsafe in a new repository, or undefined when it only holds `SAFE_NAMES`. */
export function unsafeConfig(text: string): string | undefined {
  const parsed = parseConfig(text);
  if (parsed.unread.length > 0) return `a repository configuration with a line git may read as a setting (${JSON.stringify(parsed.unread[0]!.trim().slice(0, 80))}), so what ${OUTSIDE_THE_SANDBOX} cannot be told`;
  const unsafe = parsed.entries.find((e) => !SAFE_NAMES.has(e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.*.${e.key}`));
  return unsafe === undefined ? undefined : `a repository configuration that sets ${entryName(unsafe)}, which a command may not set in a new repository: it can name what ${OUTSIDE_THE_SANDBOX}`;
}

const inside = (path: string, folders: readonly string[]): boolean => folders.some((f) => path === f || path.startsWith(`${f}${nodePath.sep}`));

/**
 * What is unsafe in a git directory that is new: a name that sends git elsewhere, a hook (git init
 * and git clone write only `*.sample` ones, which git never runs), a configuration beyond `SAFE_NAMES`.
 */
export async function unsafeGitDir(gitDir: string): Promise<UnsafeGitChange[]> {
  const found: UnsafeGitChange[] = [];
  for (const name of REDIRECTS) {
    const path = nodePath.join(gitDir, name);
    if (await entryAt(path)) found.push({ path, why: REDIRECT_WHY });
  }
  const hooks = nodePath.join(gitDir, 'hooks');
  if ((await entryAt(hooks))?.isSymbolicLink() === true) found.push({ path: hooks, why: `a link in place of the hooks folder, through which ${OUTSIDE_THE_SANDBOX} the hooks` });
  for (const hook of await readdir(hooks, { withFileTypes: true }).catch(() => [])) {
    if (!hook.name.endsWith('.sample') && !hook.isDirectory()) found.push({ path: nodePath.join(hooks, hook.name), why: `a hook, which ${OUTSIDE_THE_SANDBOX} (post-index-change on every status)` });
  }
  const path = nodePath.join(gitDir, 'config');
  const stat = await entryAt(path);
  if (stat === undefined) return found;
  if (!stat.isFile()) found.push({ path, why: `a repository configuration that is not a plain file, which ${OUTSIDE_THE_SANDBOX} would follow or wait on` });
  else if (stat.size > CONFIG_MAX) found.push({ path, why: `a repository configuration of ${stat.size} bytes, too large to look through for what ${OUTSIDE_THE_SANDBOX}` });
  else {
    const why = unsafeConfig(await firstBytes(path, CONFIG_MAX).catch(() => ''));
    if (why !== undefined) found.push({ path, why });
  }
  return found;
}

/** What the person's own configuration names in a new repository's work tree that is there (see `personalNamesIn`): a hook in its relative hooks folder, a program. */
export async function unsafePersonalNames(gitDir: string, personal: PersonalConfig, home: string): Promise<UnsafeGitChange[]> {
  const found: UnsafeGitChange[] = [];
  for (const named of await personalNamesIn(gitDir, personal, home)) {
    if (named.hooks === true) {
      for (const hook of await readdir(named.path, { withFileTypes: true }).catch(() => [])) {
        if (!hook.name.endsWith('.sample') && !hook.isDirectory()) found.push({ path: nodePath.join(named.path, hook.name), why: `a hook in ${named.why} (your own configuration's, taken from each repository's folder)` });
      }
    } else if (await entryAt(named.path)) {
      found.push({ path: named.path, why: `${named.why} (your own configuration's, taken from each repository's folder)` });
    }
  }
  return found;
}

/** What VS Code's git takes as a sign of a repository: a change at a path with a name that starts with ".git" (`.git/…`, `.gitignore`, `.github/…`). */
const GIT_SIGN = /[\\/]\.git/;

/**
 * The `.git` entries a change at `changed` can lead VS Code's git to. On such a sign it looks for a
 * repository from the folder before that name, as git does: that folder, or the nearest above it
 * holding a `.git`. So every `.git` from there up, and from the changed path up, within its write
 * folder; none in installed dependencies, which the boundary leaves out.
 */
export function gitEntriesNear(changed: string, writeFolders: readonly string[]): string[] {
  const folder = writeFolders.find((f) => changed.startsWith(`${f}${nodePath.sep}`));
  if (folder === undefined || !GIT_SIGN.test(changed.slice(folder.length))) return [];
  const entries = new Set<string>();
  for (const start of [changed.replace(/\.git.*$/, ''), nodePath.dirname(changed)]) {
    for (let dir = nodePath.resolve(start); dir === folder || dir.startsWith(`${folder}${nodePath.sep}`); dir = nodePath.dirname(dir)) {
      if (!nodePath.relative(folder, dir).split(nodePath.sep).includes('node_modules')) entries.add(nodePath.join(dir, GIT_ENTRY));
      if (dir === folder) break;
    }
  }
  return [...entries];
}

/**
 * Security: the git directories a `.git` entry leads to that were not there when the command
 * started (`known`: the sandbox holds the configuration and hooks of those), and what is unsafe in
 * the entry itself: a new `.git` link, a new `.git` file naming a git directory outside the write
 * folders, where nothing is watched, or one naming a git directory that was there (a new work tree for it).
 */
export async function newGitDirs(entry: string, writeFolders: readonly string[], known: ReadonlySet<string>, since: number): Promise<{ unsafe?: UnsafeGitChange; gitDirs: string[] }> {
  const stat = await entryAt(entry);
  if (stat === undefined) return { gitDirs: [] };
  if (!stat.isDirectory()) {
    // One there before the command is held read-only by the sandbox, and named a git directory then.
    if (stat.ctimeMs <= since) return { gitDirs: [] };
    if (stat.isSymbolicLink()) return { unsafe: { path: entry, why: `a link named .git, which ${OUTSIDE_THE_SANDBOX} through the link` }, gitDirs: [] };
    const gitDir = await gitDirOf(entry, stat);
    if (gitDir !== undefined && !inside(gitDir, writeFolders)) return { unsafe: { path: entry, why: `a .git file that names ${gitDir}, a git directory outside the folders commands may write, where what ${OUTSIDE_THE_SANDBOX} could be changed unseen` }, gitDirs: [] };
    // Its configuration names hooks folders and programs relative to the work tree (husky's core.hooksPath .husky/_): opened here, they would be this folder's, which the command wrote.
    if (gitDir !== undefined && known.has(gitDir)) return { unsafe: { path: entry, why: `a .git file that opens an existing repository (${nodePath.relative(nodePath.dirname(entry), gitDir)}) in another folder, where the hooks and programs its configuration names relative to the work tree would be files the command wrote, which ${OUTSIDE_THE_SANDBOX}` }, gitDirs: [] };
  }
  return { gitDirs: (await gitDirsOf([entry])).filter((gitDir) => !known.has(gitDir)) };
}

/**
 * Security: while a command runs, each change the editor's watcher reports in the write folders
 * that VS Code's git takes as a sign of a repository is looked at as it would look
 * (`gitEntriesNear`): every git directory found that is new is watched itself from then on (so
 * nothing the editor's watcher misses in it goes unseen), then judged (`unsafeGitDir`), and judged
 * again on each change. `found` is called with what is unsafe. VS Code's git opens a new repository
 * half a second after such a change. Returns the way to stop, which resolves once the judgment
 * under way has ended.
 */
export function watchNewRepositories(watch: WatchGit, writeFolders: readonly string[], known: ReadonlySet<string>, since: number, found: (change: UnsafeGitChange) => Promise<void>, personal: PersonalConfig, home: string): () => Promise<void> {
  const relativeNames = namesRelativeToWorkTree(personal, home);
  let stopped = false;
  /** The new git directories watched, and each folder watched for them (a git directory, its hooks). */
  const gitDirs = new Set<string>();
  const watchers = new Map<string, FSWatcher>();
  /** Watches `dir` for `gitDir` from now on; false when it cannot be (gone, or no folder). */
  const watching = (dir: string, gitDir: string): boolean => {
    if (watchers.has(dir)) return true;
    const watcher = watchWhileRunning(dir, () => enqueue(gitDir));
    if (watcher !== undefined) watchers.set(dir, watcher);
    return watcher !== undefined;
  };
  /** `.git` entries and git directories to look at, in order, each once however often it changed meanwhile. */
  const pending = new Set<string>();
  let working: Promise<void> | undefined;
  const report = async (changes: readonly UnsafeGitChange[]): Promise<void> => {
    for (const change of changes) await found(change);
  };
  /** Watched before it is read, so that a change between the two is not missed. */
  const judge = async (gitDir: string): Promise<void> => {
    // A hooks folder made later shows as a change of the git directory, and is watched then.
    watching(nodePath.join(gitDir, 'hooks'), gitDir);
    await report([...await unsafeGitDir(gitDir), ...await unsafePersonalNames(gitDir, personal, home)]);
  };
  const look = async (item: string): Promise<void> => {
    if (gitDirs.has(item)) return judge(item);
    const entry = await newGitDirs(item, writeFolders, known, since);
    if (entry.unsafe !== undefined) await report([entry.unsafe]);
    for (const gitDir of entry.gitDirs) {
      // One gone already is left to the walk after the command.
      if (gitDirs.has(gitDir) || stopped || !watching(gitDir, gitDir)) continue;
      gitDirs.add(gitDir);
      await judge(gitDir);
    }
  };
  const drain = async (): Promise<void> => {
    for (let next = first(pending); next !== undefined && !stopped; next = first(pending)) {
      pending.delete(next);
      await look(next).catch(() => undefined);
    }
    working = undefined;
  };
  const enqueue = (item: string): void => {
    if (stopped) return;
    pending.add(item);
    working ??= drain();
  };
  const subscription = watch(writeFolders, (path) => {
    for (const entry of gitEntriesNear(path, writeFolders)) enqueue(entry);
    // What the person's configuration names in a new repository's folder (`unsafePersonalNames`) may come after the repository.
    if (relativeNames) for (const gitDir of gitDirs) if (nodePath.basename(gitDir) === GIT_ENTRY && path.startsWith(`${nodePath.dirname(gitDir)}${nodePath.sep}`) && !path.startsWith(`${gitDir}${nodePath.sep}`)) enqueue(gitDir);
  });
  return async () => {
    stopped = true;
    subscription.dispose();
    for (const watcher of watchers.values()) watcher.close();
    await working;
  };
}

const first = (items: ReadonlySet<string>): string | undefined => items.values().next().value;
