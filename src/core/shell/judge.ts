import * as nodePath from 'node:path';
import type { Policy } from '../policy/policy.ts';
import { isAlwaysReviewed, writeVerdict } from './boundary.ts';
import { gitChangeWhy, gitFolderAllowed, gitPlaceOf, namedGitFolderWhy, type GitPlace } from '../git/git-folder.ts';
import type { LayerEntry } from './upper.ts';
import type { ModelPath } from '../paths.ts';
import { gitdirNamed } from '../git/dirs.ts';

/** `protected`: what the write rules protect is staged for review, the rest applied; `all`: everything is staged. */
export type ShellReview = 'protected' | 'all';

/** What becomes of one change a command made. */
export type Verdict =
  /** Written to disk now, and undone with the command's save_id. */
  | { readonly action: 'apply' }
  /** Staged as a media for the person to review (save_media asks); `why` says what makes it so. */
  | { readonly action: 'stage'; readonly why: string }
  /** Neither applied nor staged (a link out of the folder, a pipe, a denied path): the result names it. */
  | { readonly action: 'hold'; readonly why: string }
  /** Not the command's doing (a mount point the sandbox made). */
  | { readonly action: 'skip' };

/** A judged change, at its place in the workspace. */
export interface JudgedChange {
  readonly entry: LayerEntry;
  readonly path: ModelPath;
  readonly verdict: Verdict;
}

export interface JudgeInputs {
  readonly policy: Policy;
  /** The workspace folder the layer's folder is in (its local path), and the layer's folder relative to it ("" for itself). */
  readonly rootPath: string;
  readonly layerRel: string;
  readonly review: ShellReview;
  /** When the command started (ms): a file on disk changed after it changed under the command. */
  readonly startedAt: number;
  /** `allow_protected_writes` was confirmed for this call: protected files are applied. */
  readonly allowProtectedWrites: boolean;
  /** Mount points the sandbox makes for names it guards (absolute): empty ones are not the command's. */
  readonly placeholders: ReadonlySet<string>;
  /** Files and hooks folders a git configuration names for git to read or run (absolute). */
  readonly gitNamed: { readonly files: ReadonlySet<string>; readonly hooks: readonly string[] };
  /** Whether the repository whose `.git` is at this path (relative to the layer's folder) was on disk before the command. */
  readonly repositoryExisted: (gitEntryRel: string) => boolean;
  /** Changes to a repository's refs or index that bring a protected file in (why), by the entry's path in the layer. */
  readonly gitReview: ReadonlyMap<string, string>;
  /** Whether a path below this one (absolute) could be one a write rule protects through this path's own name or place (`.cargo`, `.github`). */
  readonly protectsBelow: (abs: string) => boolean;
  /** Whether a git folder a `.git` file names lies at or below this path (a link here would move it). */
  readonly holdsNamedGitFolder: (rel: string) => boolean;
  /** Where a path lies in a git folder a `.git` file names under another name (`gd/config`), if it does. */
  readonly namedGitPlace: (rel: string) => GitPlace | undefined;
  /** The text of a file the command wrote (a new repository's config), at most 1 MiB; undefined when larger or unreadable. */
  readonly textOf: (entry: LayerEntry & { readonly kind: 'file' }) => Promise<string | undefined>;
}

const REVIEW_ALL = 'workspaceTools.shell.review is "all": every change a command makes is reviewed';

/** The verdict on one change of a command's change set, by the write rules a save is judged by. */
export async function judge(entry: LayerEntry, inputs: JudgeInputs): Promise<Verdict> {
  const rootRel = inputs.layerRel === '' ? entry.rel : `${inputs.layerRel}/${entry.rel}`;
  const abs = nodePath.join(inputs.rootPath, rootRel);
  if (isPlaceholder(entry, abs, inputs.placeholders)) return { action: 'skip' };
  if (entry.kind === 'special')
    return {
      action: 'hold',
      why:
        entry.nameNotUtf8 === true
          ? 'a name that is not UTF-8, which the rules cannot judge (give it a UTF-8 name)'
          : 'a pipe, socket or device, which is never copied into the workspace',
    };
  if (entry.kind === 'rmdir' || entry.kind === 'mkdir') {
    const git = gitPlaceOf(entry.rel);
    if (git !== undefined && !gitFolderAllowed(git, inputs.repositoryExisted(git.entry)))
      return { action: 'hold', why: "a folder in a repository's git folder that everyday git does not make" };
    return inputs.review === 'all' && entry.kind === 'mkdir' ? { action: 'skip' } : { action: 'apply' };
  }
  if (
    (entry.kind === 'file' || entry.kind === 'delete' || entry.kind === 'link') &&
    entry.below.changedAt !== undefined &&
    entry.below.changedAt >= inputs.startedAt
  ) {
    return {
      action: 'stage',
      why: 'it changed on disk while the command ran (a conflict: compare both before saving)',
    };
  }
  const write = writeVerdict(inputs.policy.decide(rootRel, 'write', inputs.rootPath));
  const read = inputs.policy.decide(rootRel, 'read', inputs.rootPath).action;
  if (write === 'closed' && read === 'deny')
    return { action: 'hold', why: 'a rule denies this path, so nothing is written there' };
  if (entry.kind === 'link') {
    if (leadsToGitNamed(abs, inputs.gitNamed))
      return {
        action: 'hold',
        why: `a symbolic link to ${entry.target} where a git configuration names a file for git to run or read (at it or below it), which would then be what the link leads to`,
      };
    return linkVerdict(entry, rootRel, inputs);
  }
  const git = gitPlaceOf(entry.rel);
  if (git !== undefined && git.inner === '' && entry.kind === 'file') {
    const named = gitdirNamed((await inputs.textOf(entry)) ?? '', nodePath.dirname(abs));
    if (named === undefined || !named.split(nodePath.sep).includes('.git'))
      return {
        action: 'hold',
        why: `a .git file that names ${named === undefined ? 'no git folder' : `a git folder outside any .git folder (${named})`}, which git would then read and run from; make it yourself if it is wanted`,
      };
  }
  if (inputs.review === 'all') return { action: 'stage', why: REVIEW_ALL };
  // A repository's git folder is judged by what everyday git writes there, not by the file rules (which keep .git from the file tools).
  if (git !== undefined) {
    const gitWhy =
      inputs.gitReview.get(entry.rel) ??
      (await gitChangeWhy(git, {
        isFile: entry.kind === 'file',
        repositoryExisted: inputs.repositoryExisted(git.entry),
        configText: () => (entry.kind === 'file' ? inputs.textOf(entry) : Promise.resolve(undefined)),
      }));
    return gitWhy === undefined ? { action: 'apply' } : { action: 'stage', why: gitWhy };
  }
  const named = inputs.namedGitPlace(entry.rel);
  const namedWhy = named === undefined ? undefined : namedGitFolderWhy(named);
  if (namedWhy !== undefined) return { action: 'stage', why: namedWhy };
  if (read === 'ask' || read === 'deny') return { action: 'stage', why: "a secret's name (a read rule protects it)" };
  if (write === 'closed') return { action: 'stage', why: 'a rule keeps this path from being written' };
  if (write === 'protected' && (!inputs.allowProtectedWrites || isAlwaysReviewed(rootRel)))
    return { action: 'stage', why: 'a protected file (it runs code or configures a tool or an agent)' };
  if (inputs.gitNamed.files.has(abs) || inputs.gitNamed.hooks.some((h) => abs.startsWith(`${h}${nodePath.sep}`)))
    return {
      action: 'stage',
      why: "a file a git configuration names for git to read or run (VS Code's git runs it outside the sandbox)",
    };
  return { action: 'apply' };
}

/** Whether a link at `abs` stands for a file git runs or reads: the file itself, a folder above one, or a hooks folder or one above or inside it. */
function leadsToGitNamed(abs: string, named: JudgeInputs['gitNamed']): boolean {
  const below = (path: string): boolean => path === abs || path.startsWith(`${abs}${nodePath.sep}`);
  return [...named.files].some(below) || named.hooks.some((h) => below(h) || abs.startsWith(`${h}${nodePath.sep}`));
}

/** A mount point the sandbox made for a name it guards: empty, and not there before. */
function isPlaceholder(entry: LayerEntry, abs: string, placeholders: ReadonlySet<string>): boolean {
  if (entry.kind === 'mkdir') return [...placeholders].some((p) => p === abs || p.startsWith(`${abs}${nodePath.sep}`));
  if (entry.kind === 'file') return entry.size === 0 && entry.below.type === 'none' && placeholders.has(abs);
  return false;
}

/**
 * A link is applied when it is relative and leads, by its text, to a place inside the same folder
 * that no rule protects and no git folder holds; any other is held (the file tools refuse links
 * out of the workspace, and a command's reads through one read nothing).
 */
function linkVerdict(entry: LayerEntry & { readonly kind: 'link' }, rootRel: string, inputs: JudgeInputs): Verdict {
  if (inputs.review === 'all')
    return {
      action: 'hold',
      why: `a symbolic link to ${entry.target} (links are not staged; make it yourself if it is wanted)`,
    };
  if (nodePath.isAbsolute(entry.target))
    return { action: 'hold', why: `a symbolic link to the absolute path ${entry.target}` };
  // Security: the kernel resolves `u/..` through whatever `u` is (a link to the folder's top climbs out of
  // it), while the text below cancels the two out: only `..` before any name is read by its text.
  const named = entry.target.split('/').filter((s) => s !== '' && s !== '.');
  if (named.some((s, i) => s === '..' && named.slice(0, i).some((before) => before !== '..')))
    return {
      action: 'hold',
      why: `a symbolic link to ${entry.target}, whose ".." after a name leads wherever that name leads (a link may lead out)`,
    };
  const led = nodePath.posix.normalize(nodePath.posix.join(nodePath.posix.dirname(entry.rel), entry.target));
  if (
    led === '..' ||
    led.startsWith('../') ||
    inputs.holdsNamedGitFolder(entry.rel) ||
    [led, entry.rel].some((rel) => gitPlaceOf(rel) !== undefined || inputs.namedGitPlace(rel) !== undefined)
  )
    return {
      action: 'hold',
      why: `a symbolic link to ${entry.target}, which leads out of the folder or into a git folder`,
    };
  if (inputs.protectsBelow(nodePath.join(inputs.rootPath, rootRel)))
    return {
      action: 'hold',
      why: `a symbolic link to ${entry.target} named like a folder a rule protects, which would give the files it leads to protected names`,
    };
  const ledRootRel = inputs.layerRel === '' ? led : `${inputs.layerRel}/${led}`;
  for (const rel of [rootRel, ledRootRel]) {
    const write = writeVerdict(inputs.policy.decide(rel, 'write', inputs.rootPath));
    const read = inputs.policy.decide(rel, 'read', inputs.rootPath).action;
    if (write !== 'open' || read === 'ask' || read === 'deny')
      return {
        action: 'hold',
        why: `a symbolic link to ${entry.target}, and a link never gives a protected file or a secret another name`,
      };
  }
  return { action: 'apply' };
}
