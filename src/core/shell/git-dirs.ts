import { constants, watch, type FSWatcher, type Stats } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { entryAt, entryNow } from './entry.ts';
import * as nodePath from 'node:path';

/**
 * Security: git runs what a repository's configuration names (core.fsmonitor on every status,
 * core.hooksPath, filters, pagers) and its hooks, and takes its configuration from another folder
 * where `commondir` says so. VS Code's git extension runs git outside any sandbox in every
 * repository it finds — nested repositories and submodules included — moments after their files
 * change. So a command must not change these names in any git directory under a write root:
 * - `hooks` is held read-only even where absent (the sandbox's placeholder is no folder: no hooks);
 * - the files only where present: in place of an absent one the sandbox shows a device git cannot
 *   read, and an unreadable `config` or `commondir` stops git. One a command creates is taken out
 *   when it ends (`changedGitControl`).
 */
const HELD_ALWAYS = ['hooks'] as const;
const HELD_WHERE_PRESENT = ['config', 'commondir', 'config.worktree'] as const;

/** The name git's discovery stops at in a working folder: a git directory, or a file naming one (`gitdir: …`). */
export const GIT_ENTRY = '.git';
/** What a listing shows of a `.git` folder (see `ripgrepLister`): every git directory has one. */
export const GIT_HEAD = `${GIT_ENTRY}/HEAD`;

async function subfolders(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isDirectory()).map((e) => nodePath.join(dir, e.name));
}

/** More than any `gitdir:` line git writes; a larger `.git` file is read no further. */
export const GITDIR_FILE_MAX = 4096;
/** A repository's configuration is read this far at most. */
export const CONFIG_MAX = 1024 * 1024;

/**
 * The start of a file as text. Security: never through a link unless asked (git follows them to the
 * person's own configuration), and never waiting on a pipe a command running beside this one could
 * have put in the file's place.
 */
export async function firstBytes(path: string, max: number, options: { readonly followLink?: boolean } = {}): Promise<string> {
  const file = await open(path, constants.O_RDONLY | (options.followLink === true ? 0 : constants.O_NOFOLLOW) | constants.O_NONBLOCK);
  try {
    // A pipe's size is 0: nothing is read from it.
    const buffer = Buffer.alloc(Math.min((await file.stat()).size, max));
    const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
    return buffer.toString('utf8', 0, bytesRead);
  } finally {
    await file.close();
  }
}

/** Where a `.git` entry puts its git directory: itself when a folder, the path a `gitdir:` file names, else none. */
export async function gitDirOf(entry: string, stat: Stats): Promise<string | undefined> {
  if (stat.isDirectory()) return entry;
  if (!stat.isFile()) return undefined;
  const text = await firstBytes(entry, GITDIR_FILE_MAX).catch(() => '');
  const named = /^gitdir:\s*(.+?)\s*$/m.exec(text)?.[1];
  return named === undefined ? undefined : nodePath.resolve(nodePath.dirname(entry), named);
}

/**
 * A git directory and those it keeps for others: submodules under `modules/` (their names may hold
 * "/", so folders without a HEAD are looked through) and linked worktrees under `worktrees/`.
 */
async function withKept(gitDir: string, found: Set<string>): Promise<void> {
  if (found.has(gitDir)) return;
  found.add(gitDir);
  for (const worktree of await subfolders(nodePath.join(gitDir, 'worktrees'))) found.add(worktree);
  let level = await subfolders(nodePath.join(gitDir, 'modules'));
  while (level.length > 0) {
    const next: string[] = [];
    for (const dir of level) {
      if (await entryAt(nodePath.join(dir, 'HEAD'))) await withKept(dir, found);
      else next.push(...(await subfolders(dir)));
    }
    level = next;
  }
}

/** Every git directory these `.git` entries (absolute) lead to, with the submodules and worktrees each keeps. */
export async function gitDirsOf(entries: readonly string[]): Promise<string[]> {
  const found = new Set<string>();
  for (const entry of entries) {
    const stat = await entryAt(entry);
    const gitDir = stat === undefined ? undefined : await gitDirOf(entry, stat);
    if (gitDir !== undefined) await withKept(gitDir, found);
  }
  return [...found];
}

/**
 * The paths of these git directories a command must not change (see `HELD_ALWAYS`); what their
 * configuration names elsewhere is `namedByConfig`'s. A worktree's own folder holds no hooks git reads.
 */
export async function heldGitPaths(gitDirs: readonly string[]): Promise<string[]> {
  const held: string[] = [];
  for (const gitDir of gitDirs) {
    const isWorktree = nodePath.basename(nodePath.dirname(gitDir)) === 'worktrees';
    if (!isWorktree) held.push(...HELD_ALWAYS.map((name) => nodePath.join(gitDir, name)));
    for (const name of HELD_WHERE_PRESENT) {
      const path = nodePath.join(gitDir, name);
      if (await entryAt(path)) held.push(path);
    }
  }
  return held;
}

export interface ChangedFile {
  /** Relative to the workspace folder, "/"-separated. */
  readonly rel: string;
  readonly stat: Stats;
}

/**
 * The names of `HELD_ALWAYS` and `HELD_WHERE_PRESENT` (hooks one by one; git never runs a
 * `.sample`) in the git directory at `rel` and those it keeps, whose status changed after `since`:
 * made by a command, where the sandbox could not hold them (a new repository, a new `commondir`).
 */
export async function changedGitControl(folder: string, rel: string, since: number): Promise<ChangedFile[]> {
  const changed: ChangedFile[] = [];
  const gitDirs = new Set<string>();
  await withKept(nodePath.join(folder, rel), gitDirs);
  const relOf = (abs: string): string => nodePath.relative(folder, abs).split(nodePath.sep).join('/');
  const consider = async (abs: string): Promise<Stats | undefined> => {
    const stat = await entryAt(abs);
    if (stat !== undefined && stat.ctimeMs > since && (stat.isFile() || stat.isSymbolicLink())) changed.push({ rel: relOf(abs), stat });
    return stat;
  };
  for (const gitDir of gitDirs) {
    for (const name of HELD_WHERE_PRESENT) await consider(nodePath.join(gitDir, name));
    const hooks = await consider(nodePath.join(gitDir, 'hooks'));
    if (hooks?.isDirectory() !== true) continue;
    const names = await readdir(nodePath.join(gitDir, 'hooks')).catch(() => []);
    for (const name of names) if (!name.endsWith('.sample')) await consider(nodePath.join(gitDir, 'hooks', name));
  }
  return changed;
}

/** The names in a git directory that send git to another configuration and that the sandbox cannot hold before they exist. */
export const REDIRECTS: ReadonlySet<string> = new Set(['commondir', 'config.worktree']);

/**
 * Security: calls `made` as soon as a command makes one of `REDIRECTS` in one of these git
 * directories, so that the command is ended at once instead of being taken out only when it ends:
 * VS Code's git refreshes a repository about a second after its files change, outside the sandbox.
 * A folder that cannot be watched is still looked at when the command ends. Returns the way to stop.
 */
export function watchRedirects(gitDirs: readonly string[], made: (path: string) => void): () => void {
  const watchers: FSWatcher[] = [];
  const present = new Set<string>();
  for (const gitDir of gitDirs) {
    for (const name of REDIRECTS) if (entryNow(nodePath.join(gitDir, name))) present.add(nodePath.join(gitDir, name));
    const watcher = watchWhileRunning(gitDir, (name) => {
      if (name === null || !REDIRECTS.has(name)) return;
      const path = nodePath.join(gitDir, name);
      if (!present.has(path)) made(path);
    });
    if (watcher !== undefined) watchers.push(watcher);
  }
  return () => { for (const watcher of watchers) watcher.close(); };
}

/**
 * A folder watched while a command runs, never keeping the process alive; undefined when it cannot
 * be (gone, or no folder): what happens there is then looked at when the command ends.
 */
export function watchWhileRunning(dir: string, changed: (name: string | null) => void): FSWatcher | undefined {
  try {
    const watcher = watch(dir, { persistent: false }, (_event, name) => changed(name));
    watcher.on('error', () => undefined);
    return watcher;
  } catch {
    return undefined;
  }
}
