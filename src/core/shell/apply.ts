import { readFile } from 'node:fs/promises';
import { SandboxError } from '../errors.ts';
import { displayOf, type GatedPath, type ModelPath, type WorkspaceRoot } from '../paths.ts';
import type { SaveContext } from '../media/save.ts';
import type { SaveHistory } from '../media/history.ts';
import type { JournalRecord, PlannedStep, SetJournal } from '../media/journal.ts';
import type { Log } from '../ports.ts';
import type { FileBytes } from '../media/file-ops.ts';
import { recordAll, rollBack, type DoneStep } from '../media/change-set.ts';
import { pathKey } from '../media/types.ts';
import { lineCountsOfUtf8, MAX_DIFF_WORK, type LineCounts } from '../text/line-counts.ts';
import { hasEarlyNul } from '../text/encoding.ts';
import type { Policy } from '../policy/policy.ts';
import type { JudgedChange } from './judge.ts';
import { moveTreeIn, wholeTrees } from './whole-trees.ts';
import { kindOf, stage, type ChangeOutcome } from './outcome.ts';
import { asSeen, makeFolder, makeLink, removeFolderIfEmpty, removeInPlace, writeInPlace } from './in-place.ts';
import { linkManifest, type EntryStamp } from '../media/tree.ts';

/** What a change set's landing did: each change's outcome, and how it is undone. */
export interface LandedSet {
  readonly outcomes: ChangeOutcome[];
  /** Undoes what was applied (undefined where nothing was, or it cannot be undone: `noUndo` says why). */
  readonly saveId: string | undefined;
  readonly noUndo?: string;
  /** Files applied whose undo record could not be kept: `saveId` takes back all but these. */
  readonly unrecorded?: readonly string[];
}

export interface ApplyContext extends SaveContext {
  /** Where the change set is journaled before it is applied (see `journalFirst`). */
  readonly journal: SetJournal;
  /**
   * Security: the person approved the command, which ran with writes bounded to the write roots by
   * the kernel; its change set is the writes that call was allowed to make, so the pipeline makes
   * its paths the call's targets. Applying them still goes through the save's checks (write roots,
   * no link followed, pinned folders).
   */
  approveChangeSet?(paths: readonly ModelPath[]): readonly GatedPath[];
  readonly saves: SaveHistory;
  readonly log: Log;
  readonly policy: Policy;
}

/** The model path of `rel` (relative to the workspace folder `root`). */
export function modelPathOf(root: WorkspaceRoot, rel: string, roots: readonly WorkspaceRoot[]): ModelPath {
  return { root, rel, display: displayOf(root.name, rel, roots.length > 1) };
}

/**
 * Applies what a command's change set may apply (in order: removals first), stages the rest as
 * media, and records what was applied as one save set, so `undo_save` of the returned id takes the
 * whole command back. All or nothing for its files: where one fails to apply, those already
 * applied are put back and every file of the set is staged instead, saying why. New folders of
 * many files (an install's `node_modules`, a build's output) are moved in whole (`wholeTrees`);
 * one that cannot be (something took its place) lands file by file after the rest, all or nothing
 * on its own.
 */
export async function applyChanges(ctx: ApplyContext, changes: readonly JudgedChange[]): Promise<LandedSet> {
  const outcomes: ChangeOutcome[] = [];
  const trees = ctx.approveChangeSet ? await wholeTrees(changes) : [];
  const inTree = new Set(trees.flatMap((t) => t.members));
  const tops = new Set(trees.map((t) => t.top));
  const gatedPaths = gatedOf(ctx, changes, (i) => !inTree.has(i) || tops.has(i));
  const overBudget = ctx.approveChangeSet ? unkeptFiles(ctx, changes, inTree) : undefined;
  const journaled = await journalFirst(
    ctx,
    changes,
    gatedPaths,
    overBudget ? new Set([...inTree, ...overBudget.files]) : inTree,
  );
  /** The files applied so far, with what they replaced (for the undo record, or to be put back). */
  const done: Applied[] = [];
  /** Why the set's files are staged rather than applied (the journal could not be written, or a file failed to apply). */
  let stopped = journaled.refused;
  /** A file failed to apply: the folders moved in whole (never journaled) are held too, so nothing of the set lands. */
  let failed = false;
  let keepJournal = false;
  /** The links made, recorded with the set so that its undo removes them. */
  const links: { readonly path: ModelPath; readonly stamp: EntryStamp }[] = [];
  /** The folders made (by `pathKey`): an undo removes those it leaves empty. */
  const madeFolders = new Set<string>();
  const applyOne = async (i: number): Promise<void> => {
    const { entry, path, verdict: judged } = changes[i]!;
    const isFile = entry.kind === 'file' || entry.kind === 'delete';
    const verdict =
      stopped !== undefined && judged.action === 'apply'
        ? isFile
          ? { action: 'stage' as const, why: stopped }
          : { action: 'hold' as const, why: stopped }
        : overBudget?.files.has(i)
          ? { action: 'stage' as const, why: overBudget.why }
          : judged;
    if (verdict.action === 'skip') return;
    const base = { path: path.display, kind: kindOf(entry) };
    if (verdict.action === 'hold') {
      outcomes.push({ ...base, action: 'held', why: verdict.why });
      return;
    }
    const gated = gatedPaths[i] ?? ctx.approveChangeSet?.([path])[0];
    if (gated === undefined) {
      outcomes.push({ ...base, action: 'held', why: 'this host applies no change set' });
      return;
    }
    if (verdict.action === 'stage') {
      outcomes.push(await stage(ctx, entry, gated, verdict.why));
      return;
    }
    try {
      switch (entry.kind) {
        case 'file': {
          const { before: replaced, after: bytes } = journaled.bytes.get(i) ?? {
            before: await asSeen(ctx, gated, entry),
            after: await readFile(entry.from),
          };
          await writeInPlace(ctx, gated, replaced?.bytes, bytes, entry.mode);
          const step = { kind: 'wrote' as const, path: gated, before: replaced?.bytes, meta: replaced?.meta };
          done.push({ change: i, step, written: bytes, outcome: outcomes.length });
          break;
        }
        case 'delete': {
          if (entry.below.type !== 'file') {
            outcomes.push({
              ...base,
              action: 'held',
              why: `the command removed a ${entry.below.type === 'link' ? 'symbolic link' : 'special file'}, which a change set does not remove`,
            });
            return;
          }
          const removed = journaled.bytes.has(i) ? journaled.bytes.get(i)!.before : await asSeen(ctx, gated, entry);
          // Gone already (the person removed it too): nothing to do.
          if (removed === undefined) break;
          await removeInPlace(ctx, gated, removed.bytes);
          const step = { kind: 'removed' as const, path: gated, before: removed.bytes, meta: removed.meta };
          done.push({ change: i, step, written: new Uint8Array(0), outcome: outcomes.length });
          break;
        }
        case 'mkdir':
          if (await makeFolder(ctx, gated)) madeFolders.add(pathKey(changes[i]!.path));
          break;
        case 'rmdir':
          await removeFolderIfEmpty(ctx, gated);
          break;
        case 'link':
          links.push({ path: changes[i]!.path, stamp: await makeLink(ctx, gated, entry.target) });
          break;
        case 'special':
          break;
      }
      outcomes.push({ ...base, action: 'applied' });
    } catch (e) {
      if (e instanceof SandboxError && e.code === 'E_SANDBOX_CONFLICT' && isFile) {
        // Yours stands; the command's version waits for review, and the rest of the set lands.
        outcomes.push(await stage(ctx, entry, gated, e.what));
        return;
      }
      const failure = `applying it failed (${e instanceof Error ? e.message : String(e)})`;
      if (!isFile) {
        outcomes.push({ ...base, action: 'held', why: failure });
        return;
      }
      failed = true;
      stopped = `"${path.display}" failed to apply (${e instanceof Error ? e.message : String(e)}), so the command's files were put back and staged instead`;
      outcomes.push(await stage(ctx, entry, gated, failure));
      const notBack = new Set(
        await rollBack(
          ctx,
          done.map((applied) => applied.step),
        ),
      );
      if (notBack.size > 0) {
        // The journal keeps what they held: the next start puts them back.
        keepJournal = true;
        ctx.log.warn(
          `A command's change set could not be put back wholly; its journal keeps what it replaced, and the next start of Workspace Tools on this workspace puts back what it can.`,
        );
      }
      for (const applied of done) {
        const why = notBack.has(applied.step.path.display)
          ? `${stopped}; putting this file back failed: it holds the command's bytes until Workspace Tools next starts on this workspace, which puts it back`
          : stopped;
        outcomes[applied.outcome] = await stage(ctx, changes[applied.change]!.entry, applied.step.path, why);
      }
      done.length = 0;
    }
  };
  for (const i of changes.keys()) if (!inTree.has(i)) await applyOne(i);
  // Recorded, these stay applied whatever becomes of the folders below (a failure there puts back only its own files).
  const first = await recordApplied(ctx, changes, done.splice(0), madeFolders);
  let set = first.set;
  let noUndo = first.unkept;
  const unrecorded = [...first.failed];
  for (const tree of trees) {
    const top = changes[tree.top]!;
    const gated = gatedPaths[tree.top];
    if (failed) {
      outcomes.push({
        path: top.path.display,
        kind: 'folder',
        action: 'held',
        why: `${stopped}; this new folder of ${tree.manifest.files} files was not moved in`,
      });
      continue;
    }
    const moved =
      gated !== undefined &&
      top.entry.kind === 'mkdir' &&
      (await moveTreeIn(ctx, gated, top.entry.from, tree.manifest));
    if (!moved) {
      // Something took its place, or it lies on another filesystem: file by file, as any change.
      for (const i of tree.members) await applyOne(i);
      const more = await recordApplied(ctx, changes, done.splice(0), madeFolders, set);
      set ??= more.set;
      noUndo ??= more.unkept;
      unrecorded.push(...more.failed);
      continue;
    }
    const saved = ctx.saves.recordTree({
      path: top.path,
      mediaId: 'run_shell_command',
      tree: moved,
      ...(set ? { set } : {}),
    });
    set ??= saved.id;
    for (const i of tree.members) {
      const { entry, path } = changes[i]!;
      if (entry.kind !== 'mkdir') outcomes.push({ path: path.display, kind: kindOf(entry), action: 'applied' });
    }
  }
  for (const link of links) {
    const saved = ctx.saves.recordTree({
      path: link.path,
      mediaId: 'run_shell_command',
      tree: linkManifest(link.stamp),
      ...(set ? { set } : {}),
      madeFolders: madeAbove(link.path, madeFolders),
    });
    set ??= saved.id;
  }
  if (!keepJournal) await journaled.record?.close();
  if (noUndo !== undefined) return { saveId: undefined, outcomes, noUndo };
  return unrecorded.length > 0 ? { saveId: set, outcomes, unrecorded } : { saveId: set, outcomes };
}

/**
 * The files a change set replaces or removes, when undoing the set would need more bytes kept than
 * the undo budget holds: they are staged rather than applied, so that what they replace is never lost
 * unseen (the files it creates still land: they replace nothing). Folders moved in whole keep no bytes.
 */
function unkeptFiles(
  ctx: ApplyContext,
  changes: readonly JudgedChange[],
  inTree: ReadonlySet<number>,
): { readonly files: ReadonlySet<number>; readonly why: string } | undefined {
  const files = new Set<number>();
  let needed = 0;
  for (const [i, { entry, verdict }] of changes.entries()) {
    if (verdict.action !== 'apply' || inTree.has(i) || (entry.kind !== 'file' && entry.kind !== 'delete')) continue;
    if (entry.kind === 'file') needed += entry.size;
    if (entry.below.type !== 'file') continue;
    files.add(i);
    needed += entry.below.size ?? 0;
  }
  const why = ctx.saves.roomFor(needed);
  return why === undefined || files.size === 0
    ? undefined
    : { files, why: `the command ${why}, so the files it replaces or removes are staged rather than lost unseen` };
}

/** A file the change set wrote or removed: its change, its step (how to take it back), what it wrote, and its place among the outcomes. */
interface Applied {
  readonly change: number;
  readonly step: DoneStep;
  readonly written: Uint8Array;
  readonly outcome: number;
}

/**
 * Lines added and removed, counted as git counts them: none for a binary file (its text is not
 * decoded). The diffs of one set share one bound of work (a checkout or a formatter rewrites
 * thousands of files): past its share, a file's changed region counts whole.
 */
const countsOf = (before: Uint8Array, after: Uint8Array, files: number): LineCounts =>
  hasEarlyNul(before) || hasEarlyNul(after)
    ? { added: 0, removed: 0 }
    : lineCountsOfUtf8(before, after, 0, undefined, MAX_DIFF_WORK / Math.max(files, 1));

/** How many of the folders right above `path` the set made (innermost first, up to the first it did not). */
function madeAbove(path: ModelPath, made: ReadonlySet<string>): number {
  let count = 0;
  for (let rel = path.rel; rel.includes('/'); count++) {
    rel = rel.slice(0, rel.lastIndexOf('/'));
    if (!made.has(pathKey({ ...path, rel }))) break;
  }
  return count;
}

/** Records the files applied as one save set (joining `set` when given): its id, the files whose record failed, and why it cannot be undone where it cannot. */
async function recordApplied(
  ctx: ApplyContext,
  changes: readonly JudgedChange[],
  done: readonly Applied[],
  madeFolders: ReadonlySet<string>,
  set?: string,
): Promise<{ readonly set: string | undefined; readonly failed: readonly string[]; readonly unkept?: string }> {
  const records = done.map(({ change, step, written }) => ({
    path: changes[change]!.path,
    madeFolders: madeAbove(changes[change]!.path, madeFolders),
    mediaId: 'run_shell_command',
    replaced: step.before,
    replacedMeta: step.meta,
    written,
    kind: step.kind === 'removed' ? ('delete' as const) : ('write' as const),
    ...countsOf(step.before ?? new Uint8Array(0), written, changes.length),
  }));
  return recordAll(ctx, records, set);
}

/**
 * Journals the files a change set applies before the first is written (what each holds and will
 * hold), as a save's set is journaled: a host killed midway leaves a journal the next start finishes
 * or rolls back. Where it cannot be written, nothing is applied: `refused` says why, and the files
 * are staged instead.
 */
async function journalFirst(
  ctx: ApplyContext,
  changes: readonly JudgedChange[],
  gated: readonly (GatedPath | undefined)[],
  skip: ReadonlySet<number>,
): Promise<{
  readonly record?: JournalRecord;
  readonly refused?: string;
  readonly bytes: Map<number, { before: FileBytes | undefined; after: Uint8Array }>;
}> {
  const bytes = new Map<number, { before: FileBytes | undefined; after: Uint8Array }>();
  const steps: PlannedStep[] = [];
  for (const [i, { entry, path, verdict }] of changes.entries()) {
    const at = gated[i];
    if (
      verdict.action !== 'apply' ||
      at === undefined ||
      skip.has(i) ||
      (entry.kind !== 'file' && !(entry.kind === 'delete' && entry.below.type === 'file'))
    )
      continue;
    // One at a time: reading the file where it lands may ask the person (a file with several names, one a git configuration names), and a refusal stops the set.
    try {
      const before = await asSeen(ctx, at, entry);
      if (entry.kind === 'delete' && before === undefined) continue;
      const after = entry.kind === 'file' ? await readFile(entry.from) : new Uint8Array(0);
      bytes.set(i, { before, after });
      steps.push({
        path,
        kind: entry.kind === 'file' ? 'write' : 'delete',
        before,
        after: entry.kind === 'file' ? after : undefined,
      });
    } catch (e) {
      // Changed since the command saw it: that file is staged as a conflict, the rest journaled.
      if (e instanceof SandboxError && e.code === 'E_SANDBOX_CONFLICT') continue;
      return {
        refused: `"${path.display}" cannot be applied (${e instanceof Error ? e.message : String(e)}), so the command's files were staged instead`,
        bytes: new Map(),
      };
    }
  }
  try {
    return steps.length === 0 ? { bytes } : { record: await ctx.journal.begin('save', steps), bytes };
  } catch (e) {
    return {
      refused: `the change set could not be journaled before it was applied (${e instanceof Error ? e.message : String(e)}), so it was staged instead`,
      bytes: new Map(),
    };
  }
}

/** The gated path of each change `include` names (the pipeline approves them in one call); undefined where the host applies no change set. */
function gatedOf(
  ctx: ApplyContext,
  changes: readonly JudgedChange[],
  include: (i: number) => boolean,
): (GatedPath | undefined)[] {
  const wanted = [...changes.keys()].filter(include);
  const approved = ctx.approveChangeSet?.(wanted.map((i) => changes[i]!.path)) ?? [];
  const gated: (GatedPath | undefined)[] = [];
  wanted.forEach((i, at) => {
    gated[i] = approved[at];
  });
  return gated;
}
