import { stat } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { nulList, readGit } from './run-git.ts';

/**
 * Security: git's object store keeps every version of every file ever committed, so `git show
 * HEAD:.env` or `git log -p -- .env` print a secret that `cat .env` may not. The first path of
 * this repository's history (every ref, and the index) that `isSecret` calls a secret, or
 * undefined when none is. Where the history cannot be read in time, it answers as if one were
 * (fail closed).
 */
export async function secretInHistory(
  gitDir: string,
  isSecret: (rel: string) => boolean,
  path: string,
  timeoutMs = 20_000,
): Promise<string | undefined> {
  const env = { PATH: path, GIT_DIR: gitDir };
  const indexed = await readGit(
    ['ls-files', '-z', '--cached'],
    { ...env, GIT_WORK_TREE: nodePath.dirname(gitDir) },
    timeoutMs,
  );
  const history = await readGit(['log', '--all', '--format=', '--name-only', '-z', '--no-renames'], env, timeoutMs);
  // An empty repository has no log (git exits 128): only its index counts.
  const empty =
    history === undefined && (await readGit(['rev-parse', '--verify', '-q', 'HEAD'], env, timeoutMs)) === undefined;
  if (indexed === undefined || (history === undefined && !empty)) return '(its history could not be read)';
  for (const rel of [...nulList(indexed), ...(history ? nulList(history) : [])]) if (isSecret(rel)) return rel;
  return undefined;
}

/** A digest of where every ref points (and the index's size and time), to know when `secretInHistory` must look again. */
export async function historyKey(gitDir: string, path: string): Promise<string | undefined> {
  const [refs, head, index] = await Promise.all([
    readGit(['for-each-ref', '--format=%(objectname) %(refname)'], { PATH: path, GIT_DIR: gitDir }, 5_000),
    readGit(['rev-parse', '-q', '--verify', 'HEAD'], { PATH: path, GIT_DIR: gitDir }, 5_000),
    stat(nodePath.join(gitDir, 'index')).then(
      (s) => `${s.size}:${s.mtimeMs}`,
      () => '',
    ),
  ]);
  return refs === undefined ? undefined : `${refs.toString('utf8')}\0${head?.toString('utf8') ?? ''}\0${index}`;
}
