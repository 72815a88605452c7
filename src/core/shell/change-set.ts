import { lstat, realpath } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { BUILT_IN_RULES, type Policy } from '../policy/policy.ts';
import { canonicalSpelling } from '../policy/canonical.ts';
import { globReachesBelow } from '../glob/below.ts';
import { isWithin, placeOf, type RootPlace, type WorkspaceRoot } from '../paths.ts';
import type { GitNamed } from '../git/named.ts';
import { modelPathOf } from './apply.ts';
import { judge, type JudgedChange, type ShellReview } from './judge.ts';
import { gitPlaceIn, gitPlaceOf } from '../git/git-folder.ts';
import { CONFIG_MAX, firstBytes, gitdirNamed, GITDIR_FILE_MAX } from '../git/dirs.ts';
import { isAlwaysReviewed, writeVerdict } from './boundary.ts';
import { protectedInGitWrite } from '../git/commits.ts';
import type { Layer, LayerFolder } from './layer.ts';
import { readUpper, type LayerEntry } from './upper.ts';

export interface ChangeSetInputs {
  /** The host's PATH, for the git that reads what the command committed. */
  readonly path: string;
  readonly policy: Policy;
  readonly roots: readonly WorkspaceRoot[];
  readonly review: ShellReview;
  readonly startedAt: number;
  readonly allowProtectedWrites: boolean;
  readonly placeholders: ReadonlySet<string>;
  /** The git folders of the repositories in and around the workspace folders (absolute; the boundary's). */
  readonly gitDirs: readonly string[];
  /** What git configurations name for git to run, given the work trees of the repositories the command made. */
  readonly gitNamed: (newRepositoryTops: readonly string[]) => Promise<GitNamed>;
}

/**
 * Every change the command left in its layers, each judged by the write rules a save is judged by
 * (`judge`), at its place in the workspace. Pure of the sandbox: fed an upper layer, it needs no
 * bubblewrap.
 */
export async function judgeLayer(layer: Pick<Layer, 'folders'>, inputs: ChangeSetInputs): Promise<JudgedChange[]> {
  const judged: JudgedChange[] = [];
  const linkProtects = protectsBelow(inputs.policy);
  const uppers: { readonly folder: LayerFolder; readonly entries: LayerEntry[] }[] = [];
  for (const folder of layer.folders) uppers.push({ folder, entries: await readUpper(folder) });
  // Git folders under another name than .git, which a .git file names: one on disk, or one a .git file
  // the command wrote names (in any of the layer's folders: it may name one in another).
  const namedByCommand: string[] = [];
  for (const { folder, entries } of uppers)
    for (const entry of entries)
      if (entry.kind === 'file' && gitPlaceOf(entry.rel)?.inner === '') {
        const text = await firstBytes(entry.from, GITDIR_FILE_MAX).catch(() => '');
        const named = gitdirNamed(text, nodePath.dirname(nodePath.join(folder.lower, ...entry.rel.split('/'))));
        if (named !== undefined) namedByCommand.push(named);
      }
  for (const { folder, entries } of uppers) {
    if (entries.length === 0) continue;
    const existed = new Map<string, boolean>();
    for (const entry of entries) {
      const gitEntry = gitPlaceOf(entry.rel)?.entry;
      if (gitEntry !== undefined && !existed.has(gitEntry))
        existed.set(
          gitEntry,
          await lstat(nodePath.join(folder.lower, gitEntry)).then(
            () => true,
            () => false,
          ),
        );
    }
    const namedGitFolders = await namedGitFoldersIn(folder, [...inputs.gitDirs, ...namedByCommand]);
    const layerPlace = placeOf(folder.lower, inputs.roots);
    const placeIn = placesIn(folder.lower, layerPlace, inputs.roots);
    const gitReview = await refsToReview(folder, entries, existed, inputs, layerPlace);
    const newTops = [...existed]
      .filter(([, was]) => !was)
      .map(([gitEntry]) => nodePath.join(folder.lower, ...nodePath.posix.dirname(gitEntry).split('/')));
    const gitNamed = await inputs.gitNamed(newTops);
    for (const entry of entries) {
      const place = placeIn(entry.rel);
      if (place === undefined) continue;
      const verdict = await judge(entry, {
        gitReview,
        policy: inputs.policy,
        rootPath: place.root.localPath!,
        layerRel: layerPlace?.root === place.root ? layerPlace.rel : '',
        review: inputs.review,
        startedAt: inputs.startedAt,
        allowProtectedWrites: inputs.allowProtectedWrites,
        placeholders: inputs.placeholders,
        gitNamed,
        repositoryExisted: (gitEntry) => existed.get(gitEntry) ?? true,
        namedGitPlace: (rel) => gitPlaceIn(namedGitFolders, rel),
        holdsNamedGitFolder: (rel) => namedGitFolders.some((f) => f === '' || f === rel || f.startsWith(`${rel}/`)),
        protectsBelow: linkProtects,
        textOf: (file) =>
          file.size > CONFIG_MAX
            ? Promise.resolve(undefined)
            : firstBytes(file.from, CONFIG_MAX).catch(() => undefined),
      });
      judged.push({
        entry: layerPlace?.root === place.root ? entry : ({ ...entry, rel: place.rel } as LayerEntry),
        path: modelPathOf(place.root, place.rel, inputs.roots),
        verdict,
      });
    }
  }
  return judged;
}

/**
 * Whether a link at `abs` could give what lies below it a name a rule protects (`globReachesBelow`),
 * by any rule that keeps a path from being written as it is (the built-in secret and protected lists,
 * the person's and the workspace's rules that ask or deny). Rules match paths relative to any
 * workspace folder and absolute ones: every tail of the path is tried (fail closed).
 */
function protectsBelow(policy: Policy): (abs: string) => boolean {
  const globs = [
    ...new Set(
      [...BUILT_IN_RULES.map((r) => r.rule), ...policy.userRules, ...policy.workspaceRules]
        .filter((r) => r.write === 'ask' || r.write === 'deny')
        .map((r) => r.glob)
        .filter((glob) => glob.includes('/')),
    ),
  ];
  // Most globs name their folders plainly: a path none of whose segments is one of them is passed by.
  const compiled = globs.map((glob) => {
    const named = glob.split('/').filter((segment) => segment !== '**');
    const plain = named.every((segment) => !/[*?[\]{}()!+@\\]/.test(segment));
    return { glob, leading: glob.startsWith('**/'), names: plain ? named.map((n) => n.toLowerCase()) : undefined };
  });
  const reaches = (spelling: string): boolean => {
    const segments = spelling.split('/').filter((s) => s !== '');
    const lower = new Set(segments.map((s) => s.toLowerCase()));
    return compiled.some(({ glob, leading, names }) => {
      if (names !== undefined && !names.some((n) => lower.has(n))) return false;
      // A leading `**` takes any start: the whole path stands for all its tails.
      if (leading) return globReachesBelow(glob, segments.join('/'));
      return segments.some((_, i) => globReachesBelow(glob, segments.slice(i).join('/')));
    });
  };
  // As the policy tests a path: as it is spelled, and as a case-folding disk spells it (`canonicalSpelling`).
  return (abs) => reaches(abs) || [canonicalSpelling(abs)].some((folded) => folded !== undefined && reaches(folded));
}

/**
 * The git folders within a layer's folder not named .git (relative to it), by their paths as given
 * and as links resolve them — on disk, or, for a part not there yet, the longest part that is — with
 * the common folder each one's `commondir` names (as the command left it, else as on disk).
 */
async function namedGitFoldersIn(folder: LayerFolder, gitDirs: readonly string[]): Promise<string[]> {
  const bases = [folder.lower, ...(await resolvedPath(folder.lower))];
  const found = new Set<string>();
  const add = async (dir: string, depth: number): Promise<void> => {
    for (const path of [dir, ...(await resolvedPath(dir))])
      for (const base of bases)
        if (isWithin(base, path)) {
          const rel = nodePath.relative(base, path).split(nodePath.sep).join('/');
          if (gitPlaceOf(rel) !== undefined || found.has(rel)) continue;
          found.add(rel);
          const commondir = await firstLine(nodePath.join(folder.upper, rel, 'commondir'))
            .catch(() => firstLine(nodePath.join(folder.lower, rel, 'commondir')))
            .catch(() => undefined);
          if (commondir !== undefined && depth < 4) await add(nodePath.resolve(path, commondir), depth + 1);
        }
  };
  for (const dir of gitDirs) await add(dir, 0);
  return [...found];
}

/** `path` with links resolved: in full where it exists, else its longest existing part resolved and the rest appended. */
async function resolvedPath(path: string): Promise<string[]> {
  let head = path;
  const rest: string[] = [];
  while (head !== nodePath.dirname(head)) {
    const real = await realpath(head).catch(() => undefined);
    if (real !== undefined) return [nodePath.join(real, ...rest.reverse())];
    rest.push(nodePath.basename(head));
    head = nodePath.dirname(head);
  }
  return [];
}

/** A `commondir` file's path as git reads it (its first line), never through a link. */
async function firstLine(path: string): Promise<string | undefined> {
  const text = await firstBytes(path, GITDIR_FILE_MAX);
  const line = text.split('\n')[0]!.replace(/\r$/, '');
  return line === '' ? undefined : line;
}

/**
 * The place of each path of a layer's folder (relative to it): below the folder's own place, unless
 * a workspace folder lies inside it, when each path is mapped on its own (the deepest folder holds it).
 */
function placesIn(
  lower: string,
  layerPlace: RootPlace | undefined,
  roots: readonly WorkspaceRoot[],
): (rel: string) => RootPlace | undefined {
  const nested = roots.some((r) => r.localPath !== undefined && r.localPath !== lower && isWithin(lower, r.localPath));
  if (nested || layerPlace === undefined) return (rel) => placeOf(nodePath.join(lower, ...rel.split('/')), roots);
  return (rel) => ({ root: layerPlace.root, rel: layerPlace.rel === '' ? rel : `${layerPlace.rel}/${rel}` });
}

/** The refs, packed-refs, HEAD and index of existing repositories whose change would bring a protected file in (why, by the entry's path in the layer). */
async function refsToReview(
  folder: LayerFolder,
  entries: readonly LayerEntry[],
  existed: ReadonlyMap<string, boolean>,
  inputs: ChangeSetInputs,
  layerPlace: { readonly root: WorkspaceRoot; readonly rel: string } | undefined,
): Promise<Map<string, string>> {
  const review = new Map<string, string>();
  const rootPath = layerPlace?.root.localPath;
  if (rootPath === undefined) return review;
  for (const entry of entries) {
    if (entry.kind !== 'file') continue;
    const git = gitPlaceOf(entry.rel);
    if (git === undefined || existed.get(git.entry) !== true) continue;
    const topRel = nodePath.posix.dirname(git.entry);
    const repo = {
      gitDir: nodePath.join(folder.lower, ...git.entry.split('/')),
      upperGitDir: nodePath.join(folder.upper, ...git.entry.split('/')),
      path: inputs.path,
    };
    const isProtected = (rel: string): boolean => {
      const inRoot = [layerPlace!.rel, topRel === '.' ? '' : topRel, rel].filter((p) => p !== '').join('/');
      const verdict = writeVerdict(inputs.policy.decide(inRoot, 'write', rootPath));
      return (
        verdict === 'closed' || (verdict === 'protected' && (!inputs.allowProtectedWrites || isAlwaysReviewed(inRoot)))
      );
    };
    const why = await protectedInGitWrite(repo, git.inner, isProtected);
    if (why !== undefined) review.set(entry.rel, why);
  }
  return review;
}
