import { unsafeConfig } from './new-repo.ts';

/** Where a path sits in a repository's git folder: the `.git` entry (relative) and the path inside it. */
export interface GitPlace {
  readonly entry: string;
  readonly inner: string;
}

/** The place of `rel` (a `/`-separated relative path) in a repository's git folder; undefined outside any. */
export function gitPlaceOf(rel: string): GitPlace | undefined {
  if (!rel.includes('.git')) return undefined;
  const parts = rel.split('/');
  const at = parts.indexOf('.git');
  if (at === -1) return undefined;
  return { entry: parts.slice(0, at + 1).join('/'), inner: parts.slice(at + 1).join('/') };
}

/**
 * What everyday git writes in a repository's git folder: objects, references and their logs, the
 * index, and the files that name the current commit. None of it is a program or names one.
 */
const EVERYDAY_GIT = /^(objects|refs|logs)(\/|$)|^(packed-refs|index|HEAD|ORIG_HEAD|FETCH_HEAD|COMMIT_EDITMSG)$/;
/** What `git init` and `git clone` write besides, allowed in a repository the command made (its config is judged by its keys). */
const NEW_REPOSITORY = /^(description|info\/exclude|hooks\/[^/]+\.sample|info|hooks|branches)$/;

/** Whether a command may make or remove this folder inside a git folder: only where everyday git (or a new repository's `git init`) does. */
export function gitFolderAllowed(place: GitPlace, repositoryExisted: boolean): boolean {
  return (
    place.inner === '' || EVERYDAY_GIT.test(place.inner) || (!repositoryExisted && NEW_REPOSITORY.test(place.inner))
  );
}

/**
 * Why a file, link or removal a command made in a git folder is reviewed rather than applied, or
 * undefined when everyday git makes it. A new repository's `config` is judged by its keys
 * (`configText`: undefined when too large to read).
 */
export async function gitChangeWhy(
  place: GitPlace,
  change: {
    readonly isFile: boolean;
    readonly repositoryExisted: boolean;
    readonly configText: () => Promise<string | undefined>;
  },
): Promise<string | undefined> {
  if (place.inner === '')
    return "a .git file or folder in place of a repository's (it can send git to another folder's configuration and hooks)";
  if (EVERYDAY_GIT.test(place.inner)) return undefined;
  if (!change.repositoryExisted) {
    if (NEW_REPOSITORY.test(place.inner)) return undefined;
    if (place.inner === 'config' && change.isFile) {
      const text = await change.configText();
      return text === undefined ? 'a repository configuration too large to read' : unsafeConfig(text);
    }
  }
  return `${place.inner} in a repository's git folder, which everyday git does not write (git reads or runs it: configuration, hooks, a rebase's todo, attributes)`;
}

/**
 * Why a change in a git folder not named `.git` (a `gitdir:` file names it: `git init
 * --separate-git-dir` inside the work tree) is reviewed: all but its objects and logs, which git
 * reads only as data. Such a folder is judged by the file rules besides, never instead of them.
 */
export function namedGitFolderWhy(place: GitPlace): string | undefined {
  if (/^(objects|logs)(\/|$)/.test(place.inner)) return undefined;
  return `${place.inner === '' ? 'a git folder' : place.inner} in a git folder a .git file names (git reads or runs what is there: configuration, hooks, refs that bring files in)`;
}

/** The place of `rel` in one of these git folders (relative paths, "" for the folder itself), the deepest first; undefined outside them. */
export function gitPlaceIn(gitFolders: readonly string[], rel: string): GitPlace | undefined {
  let found: GitPlace | undefined;
  for (const folder of gitFolders) {
    const inner =
      folder === ''
        ? rel
        : rel === folder
          ? ''
          : rel.startsWith(`${folder}/`)
            ? rel.slice(folder.length + 1)
            : undefined;
    if (inner !== undefined && (found === undefined || folder.length > found.entry.length))
      found = { entry: folder, inner };
  }
  return found;
}
