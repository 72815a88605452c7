import { realpath } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { displayOf, isWithin, type GatedPath, type WorkspaceRoot } from '../paths.ts';
import type { Log } from '../ports.ts';
import { putBack, readDisk, removeFile } from './file-ops.ts';
import { hashBytes } from './hash.ts';
import type { SaveHistory, SaveRecord } from './history.ts';
import type { JournalRecord, JournalSide, JournalStep, SetJournal } from './journal.ts';
import type { SaveContext } from './save.ts';
import { removeStaleTemps } from './save-temps.ts';

/* The next start's half of the journal: sets whose process died midway are finished or rolled back. */

export interface RecoveryContext extends SaveContext {
  readonly journal: SetJournal;
  readonly saves: SaveHistory;
  readonly log: Log;
  readonly roots: readonly WorkspaceRoot[];
}

/**
 * What became of one interrupted set. `finished`: every file already held what the set wrote, so it
 * stands (and `saveId` undoes it); `rolled-back`: every file holds what it held before the set (an
 * interrupted undo leaves the save it was undoing, and `saveId` undoes that); `left`: nothing was
 * touched, because a file changed since or is out of reach (`why`), and the journal stays.
 */
export interface RecoveredSet {
  readonly kind: 'save' | 'undo';
  readonly outcome: 'finished' | 'rolled-back' | 'left';
  readonly files: readonly string[];
  readonly saveId?: string;
  readonly why?: string;
  /** One line for the log and the host's views. */
  readonly message: string;
}

/** Where one path of a set stands: as after the set, as before it, or neither (changed since, or unreadable). */
type Standing = 'after' | 'before' | 'other';

function holds(disk: Uint8Array | undefined, side: JournalSide): boolean {
  return side.exists ? disk !== undefined && hashBytes(disk) === side.hash : disk === undefined;
}

/**
 * Finishes or rolls back every set of this workspace whose process ended before the set did, and
 * says what became of each in the log. A set is never left half applied by this step: it is rolled
 * back only when every file holds what the set wrote or what it replaced, and otherwise left alone.
 */
export async function recoverSets(ctx: RecoveryContext): Promise<RecoveredSet[]> {
  const { records, unreadable } = await ctx.journal.interrupted();
  for (const folder of unreadable)
    ctx.log.warn(`An interrupted change set's journal could not be read, so it was left as it is: ${folder}.`);
  const results: RecoveredSet[] = [];
  for (const record of records) {
    const result = await recoverOne(ctx, record).catch((e: unknown): RecoveredSet => {
      const files = record.entry.steps.map((s) => s.display);
      return {
        kind: record.entry.kind,
        outcome: 'left',
        files,
        why: String(e),
        message: `An interrupted change set of ${files.map((f) => `"${f}"`).join(', ')} could not be recovered (${e instanceof Error ? e.message : String(e)}); it was left as it is, and what the files held before it is kept in ${record.folder}.`,
      };
    });
    ctx.log.warn(result.message);
    results.push(result);
  }
  return results;
}

async function recoverOne(ctx: RecoveryContext, record: JournalRecord): Promise<RecoveredSet> {
  const { kind, steps } = record.entry;
  const files = steps.map((s) => s.display);
  const what = `${kind === 'save' ? 'A save' : 'An undo'} of ${files.map((f) => `"${f}"`).join(', ')} (started ${new Date(record.entry.at).toISOString()})`;
  const left = (why: string): RecoveredSet => ({
    kind,
    outcome: 'left',
    files,
    why,
    message: `${what} was interrupted when its process ended, and was left as it is: ${why}. What the files held before it is kept in ${record.folder}; remove that folder once the files are as they should be.`,
  });
  const paths: GatedPath[] = [];
  const reals = await Promise.all(
    ctx.roots.map(async (r) =>
      r.localPath === undefined ? undefined : await realpath(r.localPath).catch(() => r.localPath),
    ),
  );
  for (const step of steps) {
    const path = pathOf(ctx.roots, reals, step);
    if (path === undefined) return left(`its folder ${step.root} is not open here`);
    paths.push(path);
  }
  const disks: (Uint8Array | undefined)[] = [];
  const standing: Standing[] = [];
  for (const [i, step] of steps.entries()) {
    const disk = await readDisk(ctx, paths[i]!, 'restored').catch(() => null);
    disks.push(disk ?? undefined);
    standing.push(
      disk === null ? 'other' : holds(disk, step.after) ? 'after' : holds(disk, step.before) ? 'before' : 'other',
    );
  }
  await removeTemps(ctx, record, paths);
  const changed = steps.filter((_, i) => standing[i] === 'other').map((s) => `"${s.display}"`);
  if (changed.length)
    return left(`${changed.join(', ')} changed since (it holds neither what the set wrote nor what it replaced)`);

  if (standing.every((s) => s === 'after')) {
    const saveId =
      kind === 'save'
        ? await keepAsSave(
            ctx,
            record,
            paths,
            (i) => record.bytes(i, 'before'),
            (i) => disks[i],
          )
        : undefined;
    await record.close();
    const undo = saveId
      ? ` undo_save ${saveId} takes it back.`
      : kind === 'save'
        ? ' It cannot be undone (its previous bytes could not be kept).'
        : '';
    return {
      kind,
      outcome: 'finished',
      files,
      ...(saveId ? { saveId } : {}),
      message: `${what} had been written in full when its process ended, so it stands.${undo}`,
    };
  }
  try {
    for (const [i, step] of [...steps.entries()].reverse()) {
      if (standing[i] === 'after') await putBackBefore(ctx, record, i, step, paths[i]!);
    }
  } catch (e) {
    return left(
      `rolling it back failed (${e instanceof Error ? e.message : String(e)}); some files may hold what the set wrote`,
    );
  }
  const saveId =
    kind === 'undo'
      ? await keepAsSave(
          ctx,
          record,
          paths,
          (i) => record.bytes(i, 'after'),
          (i) => record.bytes(i, 'before'),
        )
      : undefined;
  await record.close();
  const undo = saveId ? ` The save it was undoing stands, and undo_save ${saveId} takes it back.` : '';
  return {
    kind,
    outcome: 'rolled-back',
    files,
    ...(saveId ? { saveId } : {}),
    message: `${what} was interrupted when its process ended, and was rolled back: every file holds what it held before.${undo}`,
  };
}

/**
 * Where a step's file is among the folders open now: in the same folder, or by its local path in a
 * folder that holds it. Security: the paths of a set the person approved when it began, put back as
 * they were through the same link-refusing steps as a save.
 */
function pathOf(
  roots: readonly WorkspaceRoot[],
  reals: readonly (string | undefined)[],
  step: JournalStep,
): GatedPath | undefined {
  const same = roots.find((r) => r.address === step.root);
  if (same) return { root: same, rel: step.rel, display: step.display } as GatedPath;
  const local = step.local;
  if (local === undefined) return undefined;
  const at = reals.findIndex((real) => real !== undefined && real !== local && isWithin(real, local));
  const holder = roots[at];
  const real = reals[at];
  if (holder === undefined || real === undefined) return undefined;
  const rel = nodePath.relative(real, local).split(nodePath.sep).join('/');
  return { root: holder, rel, display: displayOf(holder.name, rel, roots.length > 1) } as GatedPath;
}

/**
 * Removes the temp files the dead process's writes left beside the files (written, not yet renamed):
 * those made while the set ran, never one a live save of the same file makes now.
 */
async function removeTemps(ctx: RecoveryContext, record: JournalRecord, paths: readonly GatedPath[]): Promise<void> {
  const now = ctx.clock.now();
  for (const [i, step] of record.entry.steps.entries()) {
    if (!step.after.exists) continue;
    const resolved = await ctx.resolve(paths[i]!, { forWrite: true }).catch(() => undefined);
    const name = step.rel.slice(step.rel.lastIndexOf('/') + 1);
    if (resolved)
      await removeStaleTemps(
        ctx.fs,
        ctx.fs.folderOf(resolved),
        name,
        (mtimeMs) => mtimeMs >= record.entry.at - 1000 && mtimeMs < now,
      );
  }
}

/** Puts back what step `i` held before the set: its bytes, mode and owner, or no file. */
async function putBackBefore(
  ctx: RecoveryContext,
  record: JournalRecord,
  i: number,
  step: JournalStep,
  path: GatedPath,
): Promise<void> {
  if (!step.before.exists) {
    await removeFile(ctx, path, step.after.hash);
    return;
  }
  const bytes = await record.bytes(i, 'before');
  await putBack(ctx, path, bytes, !step.after.exists, step.before.meta);
}

/**
 * Records a set that stands as one save of this session, so undo_save takes it back: `replaced(i)`
 * is what path `i` held before it (undefined: no file), `written(i)` what it holds now.
 */
async function keepAsSave(
  ctx: RecoveryContext,
  record: JournalRecord,
  paths: readonly GatedPath[],
  replaced: (i: number) => Promise<Uint8Array | undefined> | Uint8Array | undefined,
  written: (i: number) => Promise<Uint8Array | undefined> | Uint8Array | undefined,
): Promise<string | undefined> {
  const { kind, steps } = record.entry;
  let set: string | undefined;
  try {
    for (const [i, step] of steps.entries()) {
      // An undo's steps run from the save's result to what it replaced: kept as that save, they run the other way.
      const side = kind === 'undo' ? step.before : step.after;
      const before = await replaced(i);
      const now = side.exists ? ((await written(i)) ?? new Uint8Array(0)) : new Uint8Array(0);
      const meta = kind === 'undo' ? step.after.meta : step.before.meta;
      const saved: SaveRecord = await ctx.saves.record({
        path: paths[i]!,
        mediaId: 'recovered',
        kind: side.exists ? 'write' : 'delete',
        replaced: before,
        replacedMeta: meta,
        written: now,
        added: 0,
        removed: 0,
        ...(set ? { set } : {}),
      });
      set ??= saved.id;
    }
    return set;
  } catch (e) {
    ctx.log.warn(
      `The recovered set cannot be undone: its bytes could not be kept (${e instanceof Error ? e.message : String(e)}).`,
    );
    return undefined;
  }
}
