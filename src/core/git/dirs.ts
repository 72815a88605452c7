import { constants, type Stats } from 'node:fs';
import { open, readdir } from 'node:fs/promises';
import { entryAt } from './entry.ts';
import * as nodePath from 'node:path';

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
export async function firstBytes(
  path: string,
  max: number,
  options: { readonly followLink?: boolean } = {},
): Promise<string> {
  const file = await open(
    path,
    constants.O_RDONLY | (options.followLink === true ? 0 : constants.O_NOFOLLOW) | constants.O_NONBLOCK,
  );
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
  return gitdirNamed(await firstBytes(entry, GITDIR_FILE_MAX).catch(() => ''), nodePath.dirname(entry));
}

/**
 * The git directory a `.git` file's text names, read as git reads it (`read_gitfile_gently`): the file
 * starts with `gitdir: `, and the rest of it, less its trailing CR and LF and cut at a NUL, is the
 * path — spaces and later lines included. Resolved from the folder `at` that holds the file;
 * undefined when it names none.
 */
export function gitdirNamed(text: string, at: string): string | undefined {
  if (!text.startsWith('gitdir: ')) return undefined;
  const rest = text.slice('gitdir: '.length).replace(/[\r\n]+$/, '');
  const named = rest.includes('\0') ? rest.slice(0, rest.indexOf('\0')) : rest;
  return named === '' ? undefined : nodePath.resolve(at, named);
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
