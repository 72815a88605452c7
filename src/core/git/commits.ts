import { lstat, readFile } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { nulList, readGit } from './run-git.ts';

/** A repository as a command left it: its git directory on disk, and the one the command's writes went to. */
export interface LayeredRepository {
  /** The git directory on disk (the lower layer). */
  readonly gitDir: string;
  /** The same directory in the upper layer (what the command wrote there). */
  readonly upperGitDir: string;
  /** The host's PATH. */
  readonly path: string;
}

/** git reading both layers at once: the command's new objects first, the repository's own behind them. */
function layeredEnv(repo: LayeredRepository, objects: boolean): Record<string, string> {
  const env: Record<string, string> = { PATH: repo.path, GIT_DIR: repo.gitDir };
  if (objects) {
    env['GIT_OBJECT_DIRECTORY'] = nodePath.join(repo.upperGitDir, 'objects');
    env['GIT_ALTERNATE_OBJECT_DIRECTORIES'] = nodePath.join(repo.gitDir, 'objects');
  }
  return env;
}

const SHA = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** The commit a ref file or HEAD names (following `ref:` one step into the same layer), or undefined. */
async function commitIn(gitDir: string, rel: string): Promise<string | undefined> {
  const text = (await readFile(nodePath.join(gitDir, rel), 'utf8').catch(() => '')).trim();
  if (SHA.test(text)) return text;
  return undefined;
}

/** Every ref a packed-refs file names, with its commit. */
async function packedRefs(file: string): Promise<Map<string, string>> {
  const refs = new Map<string, string>();
  const text = await readFile(file, 'utf8').catch(() => '');
  for (const line of text.split('\n')) {
    const m = /^([0-9a-f]{40,64}) (\S+)$/.exec(line);
    if (m) refs.set(m[2]!, m[1]!);
  }
  return refs;
}

/** The paths that differ between two commits (or every path of `to` when there is no `from`). */
async function pathsChanged(
  repo: LayeredRepository,
  objects: boolean,
  from: string | undefined,
  to: string,
): Promise<string[] | undefined> {
  const env = layeredEnv(repo, objects);
  const out =
    from === undefined
      ? await readGit(['ls-tree', '-r', '--name-only', '-z', to], env)
      : await readGit(['diff-tree', '-r', '--name-only', '-z', '--no-renames', from, to], env);
  return out === undefined ? undefined : nulList(out);
}

/**
 * Security: a command can commit a protected file's new content without touching the work tree
 * (`git hash-object -w` + `update-index --cacheinfo` + `commit`), and VS Code's Discard or Checkout
 * would then write it outside any review. For a ref the command moved (a file under `refs/`,
 * `packed-refs`, a detached `HEAD`), the protected paths the new commit changes against the old one
 * (read without running anything the repository's configuration names); `undefined` when none, and
 * a reason when git cannot tell (fail closed).
 */
async function protectedInRefChange(
  repo: LayeredRepository,
  inner: string,
  objects: boolean,
  isProtected: (rel: string) => boolean,
): Promise<string | undefined> {
  const moves: { from: string | undefined; to: string }[] = [];
  if (inner === 'packed-refs') {
    const before = await packedRefs(nodePath.join(repo.gitDir, inner));
    for (const [ref, to] of await packedRefs(nodePath.join(repo.upperGitDir, inner)))
      if (before.get(ref) !== to) moves.push({ from: before.get(ref), to });
  } else {
    const to = await commitIn(repo.upperGitDir, inner);
    if (to === undefined) return undefined;
    const from =
      (await commitIn(repo.gitDir, inner)) ??
      (await packedRefs(nodePath.join(repo.gitDir, 'packed-refs'))).get(inner) ??
      (await commitIn(repo.gitDir, 'HEAD')) ??
      (await headCommit(repo));
    moves.push({ from, to });
  }
  for (const { from, to } of moves) {
    const changed = await pathsChanged(repo, objects, from, to);
    if (changed === undefined) return `a commit (${to.slice(0, 8)}) git could not compare with the one before it`;
    const hit = changed.find(isProtected);
    if (hit !== undefined)
      return `a commit (${to.slice(0, 8)}) that changes ${hit}, a protected file: VS Code's Discard, Checkout or a push would take it outside any review`;
  }
  return undefined;
}

async function headCommit(repo: LayeredRepository): Promise<string | undefined> {
  const out = await readGit(['rev-parse', '-q', '--verify', 'HEAD^{commit}'], layeredEnv(repo, false));
  return out?.toString('utf8').trim() || undefined;
}

/** Each path of an index with its blob (`git ls-files -s`). */
async function indexEntries(
  repo: LayeredRepository,
  indexFile: string,
  objects: boolean,
): Promise<Map<string, string> | undefined> {
  const out = await readGit(['ls-files', '-s', '-z'], {
    ...layeredEnv(repo, objects),
    GIT_INDEX_FILE: indexFile,
    GIT_WORK_TREE: nodePath.dirname(repo.gitDir),
  });
  if (out === undefined) return undefined;
  const entries = new Map<string, string>();
  for (const line of nulList(out)) {
    const m = /^\d+ ([0-9a-f]+) \d+\t(.*)$/s.exec(line);
    if (m) entries.set(m[2]!, m[1]!);
  }
  return entries;
}

/** The protected paths a new index stages other bytes for (what Discard restores from), as `protectedInRefChange` says. */
async function protectedInIndexChange(
  repo: LayeredRepository,
  objects: boolean,
  isProtected: (rel: string) => boolean,
): Promise<string | undefined> {
  const before = (await indexEntries(repo, nodePath.join(repo.gitDir, 'index'), false)) ?? new Map<string, string>();
  const after = await indexEntries(repo, nodePath.join(repo.upperGitDir, 'index'), objects);
  if (after === undefined) return 'an index git could not read';
  for (const [rel, blob] of after) {
    if (before.get(rel) !== blob && isProtected(rel))
      return `an index that stages new content for ${rel}, a protected file: VS Code's Discard would write it outside any review`;
  }
  return undefined;
}

/**
 * For a file a command wrote in an existing repository's git folder (`inner`, its path there): when it
 * is a ref, `packed-refs`, `HEAD` or the index, and its change brings a protected file in, why.
 */
export async function protectedInGitWrite(
  repo: LayeredRepository,
  inner: string,
  isProtected: (rel: string) => boolean,
): Promise<string | undefined> {
  if (!/^(refs\/|packed-refs$|HEAD$|index$)/.test(inner)) return undefined;
  const objects = await lstat(nodePath.join(repo.upperGitDir, 'objects')).then(
    (st) => st.isDirectory(),
    () => false,
  );
  return inner === 'index'
    ? protectedInIndexChange(repo, objects, isProtected)
    : protectedInRefChange(repo, inner, objects, isProtected);
}
