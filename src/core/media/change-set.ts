import { SandboxError } from '../errors.ts';
import type { GatedPath, ModelPath } from '../paths.ts';
import type { Log } from '../ports.ts';
import { refuseUnsavedEditor, type OpenEditors } from './editors.ts';
import { metaAt, putBack, readFileAt, removeEmptiedFolders, removeFile, type FileBytes } from './file-ops.ts';
import type { FileMeta } from './file-meta.ts';
import type { JournalRecord, PlannedStep, SetJournal } from './journal.ts';
import { holdsBase } from './hash.ts';
import type { SaveHistory } from './history.ts';
import { commitMedia, type SaveContext, type SaveOutcome } from './save.ts';
import { pathKey, type StagedMedia } from './types.ts';

/** One change of a set, with its gated paths: `target` where bytes go (or the deleted file), `source` a move's source. */
export interface SetChange {
  readonly media: StagedMedia;
  readonly target: GatedPath;
  readonly source?: GatedPath;
}

export interface SetContext extends SaveContext {
  readonly saves: SaveHistory;
  readonly log: Log;
  readonly editors: OpenEditors | undefined;
  /** Where the set is journaled before its first write, so that a process that dies midway leaves it to be finished or rolled back. */
  readonly journal: SetJournal;
}

/** What one change of a saved set did. */
export interface SetFileOutcome {
  readonly kind: 'write' | 'delete' | 'move';
  readonly mediaId: string;
  readonly path: ModelPath;
  readonly from?: ModelPath;
  readonly added: number;
  readonly removed: number;
  /** The write's outcome (undefined for a delete). */
  readonly write: SaveOutcome | undefined;
}

export interface SetOutcome {
  /** The set's save_id for undo (undefined when the bytes could not be kept). */
  readonly saveId: string | undefined;
  readonly files: readonly SetFileOutcome[];
  /** The folders the set's deletes and moves left empty, removed with them ("src/legacy/"); an undo puts them back. */
  readonly removedFolders: readonly string[];
}

/** A file a set wrote or removed, with what it held before (`before` undefined: the write created it): how to take it back. */
export interface DoneStep {
  readonly kind: 'wrote' | 'removed';
  readonly path: GatedPath;
  readonly before: Uint8Array | undefined;
  readonly meta: FileMeta | undefined;
}

/** What `SaveHistory.record` keeps of one file of a set. */
export type SetRecord = Omit<Parameters<SaveHistory['record']>[0], 'set'>;

function conflict(what: string): SandboxError {
  return new SandboxError(
    'E_SANDBOX_CONFLICT',
    `${what} Nothing in the set was written.`,
    `Stage that file again, re-apply your change, and save the set again.`,
  );
}

/** What each path of a set holds now, by `pathKey` (undefined: no file). */
type Disks = Map<string, FileBytes | undefined>;

/**
 * Checks every change of a set against disk before anything is written: write roots, unsaved
 * editors, links and folders, and that each file is as it was staged (a move's destination absent
 * unless the person agreed to replace it). Returns what each path holds, for the journal.
 */
async function checkAll(ctx: SetContext, changes: readonly SetChange[]): Promise<Disks> {
  const disks: Disks = new Map();
  const read = async (path: GatedPath, verb: string): Promise<Uint8Array | undefined> => {
    const file = await readFileAt(ctx, path, verb);
    disks.set(pathKey(path), file);
    return file?.bytes;
  };
  const seen = new Set<string>();
  for (const c of changes) {
    for (const p of c.source ? [c.source, c.target] : [c.target]) {
      if (seen.has(pathKey(p)))
        throw new SandboxError(
          'E_SANDBOX_INVALID_INPUT',
          `"${p.display}" appears twice in the set; each file can change once per save.`,
          `Save the latest media of that file alone.`,
        );
      seen.add(pathKey(p));
      ctx.saveGuard.checkWriteRoot(p);
      refuseUnsavedEditor(ctx.editors, p, 'save_media');
    }
  }
  for (const { media, target, source } of changes) {
    const verb = media.change.kind === 'write' ? 'written' : media.change.kind === 'delete' ? 'deleted' : 'moved';
    const disk = await read(source ?? target, verb);
    const display = (source ?? target).display;
    const samePath = pathKey(target) === pathKey(media.path);
    if (media.change.kind === 'write' && !samePath) {
      if (disk !== undefined)
        throw conflict(`"${target.display}" already exists, and ${media.id} is saved elsewhere only as a new file.`);
      continue;
    }
    if (disk === undefined && media.base.existed)
      throw conflict(`"${display}" was deleted after ${media.id} was staged.`);
    if (disk !== undefined && !holdsBase(disk, media.base))
      throw conflict(
        `"${display}" ${media.base.existed ? 'changed on disk' : 'was created'} after ${media.id} was staged.`,
      );
    if (media.change.kind === 'move') {
      const there = await read(target, 'replaced');
      if (there !== undefined && !media.change.replace)
        throw conflict(`"${target.display}", where ${media.id} moves "${display}", exists now.`);
    }
  }
  return disks;
}

/** The set as its journal keeps it: each path with what it holds now and will hold (a move is a write of its destination and a delete of its source). */
function plannedSteps(changes: readonly SetChange[], disks: Disks): PlannedStep[] {
  const before = (path: GatedPath): PlannedStep['before'] => disks.get(pathKey(path));
  return changes.flatMap(({ media, target, source }): PlannedStep[] => {
    if (media.change.kind === 'delete')
      return [{ path: target, kind: 'delete', before: before(target), after: undefined }];
    const write: PlannedStep = { path: target, kind: 'write', before: before(target), after: media.bytes };
    return source && media.change.kind === 'move'
      ? [write, { path: source, kind: 'delete', before: before(source), after: undefined }]
      : [write];
  });
}

/** Takes back what a set did, newest first (bytes restored, created files removed, removed ones recreated); the paths that could not be restored. */
export async function rollBack(ctx: SaveContext & { readonly log: Log }, done: readonly DoneStep[]): Promise<string[]> {
  const failed: string[] = [];
  for (const step of [...done].reverse()) {
    try {
      await putBack(ctx, step.path, step.before, step.kind === 'removed', step.meta);
    } catch (e) {
      ctx.log.warn(`Rolling back "${step.path.display}" failed: ${e instanceof Error ? e.message : String(e)}`);
      failed.push(step.path.display);
    }
  }
  return failed;
}

/**
 * Records the files of a set as one save set for undo (joining `set` when given): its id, the files
 * whose record failed (the log says why; a failure never fails the set, and the others are still
 * recorded), and `unkept`: why the set cannot be undone, when the bytes it needs kept do not fit the
 * undo budget (then none are kept, and no other save is dropped for them).
 */
export async function recordAll(
  ctx: { readonly saves: SaveHistory; readonly log: Log },
  records: readonly SetRecord[],
  set?: string,
): Promise<{ readonly set: string | undefined; readonly failed: readonly string[]; readonly unkept?: string }> {
  const failed: string[] = [];
  const over = ctx.saves.roomFor(undoBytes(records), set);
  let unkept = over === undefined ? undefined : `its set ${over}`;
  for (const record of records) {
    try {
      const saved = await ctx.saves.record({
        ...record,
        ...(set ? { set } : {}),
        ...(unkept !== undefined ? { unkept } : {}),
      });
      set ??= saved.id;
      unkept ??= saved.lost;
    } catch (e) {
      ctx.log.warn(
        `The change to "${record.path.display}" cannot be undone: the bytes it replaced could not be kept (${e instanceof Error ? e.message : String(e)}).`,
      );
      failed.push(record.path.display);
    }
  }
  return { set, failed, ...(unkept !== undefined ? { unkept } : {}) };
}

/** The bytes the undo history keeps for these records: what each file held and what it was given. */
export const undoBytes = (records: readonly Pick<SetRecord, 'replaced' | 'written'>[]): number =>
  records.reduce((sum, r) => sum + (r.replaced?.byteLength ?? 0) + r.written.byteLength, 0);

/**
 * Saves a set of changes as one: checks them all, then writes, deletes and moves in order; if a step
 * fails, what was done is rolled back (bytes restored, deleted files recreated, moves undone) and the
 * error says so. Records one save set for undo.
 */
export async function commitSet(ctx: SetContext, changes: readonly SetChange[]): Promise<SetOutcome> {
  const disks = await checkAll(ctx, changes);
  const journal = await beginJournal(ctx, plannedSteps(changes, disks));
  const done: DoneStep[] = [];
  const files: SetFileOutcome[] = [];
  for (const { media, target, source } of changes) {
    const counts = ctx.media.find(media.id) ? ctx.media.changes(media.id) : { added: 0, removed: 0 };
    try {
      if (media.change.kind === 'delete') {
        const removed = await removeFile(ctx, target, media.base.hash);
        done.push({ kind: 'removed', path: target, before: removed.bytes, meta: removed.meta });
        if (ctx.media.find(media.id)) ctx.media.markSaved(media.id, target, new Uint8Array(0));
        ctx.media.noteDisk(target, undefined);
        files.push({ kind: 'delete', mediaId: media.id, path: target, ...counts, write: undefined });
        continue;
      }
      const move = media.change.kind === 'move' && source !== undefined;
      // Before the write: saving rebases the media onto what it wrote.
      const sourceHash = media.base.hash;
      // Security: a moved file keeps its source's mode and owner (a private file stays private).
      const carried = move ? await metaAt(ctx, source) : undefined;
      const write = await commitMedia(
        ctx,
        media.id,
        target,
        move && media.change.kind === 'move' ? (media.change.replace ? 'any' : 'absent') : undefined,
        carried,
      );
      done.push({ kind: 'wrote', path: target, before: write.replaced, meta: write.replacedMeta });
      if (move) {
        const removed = await removeFile(ctx, source, sourceHash);
        done.push({ kind: 'removed', path: source, before: removed.bytes, meta: removed.meta });
        ctx.media.noteDisk(source, undefined);
        files.push({ kind: 'move', mediaId: media.id, path: target, from: source, ...counts, write });
      } else {
        files.push({
          kind: 'write',
          mediaId: media.id,
          path: target,
          added: write.added,
          removed: write.removed,
          write,
        });
      }
    } catch (e) {
      const failed = await rollBack(ctx, done);
      if (failed.length === 0) await journal.close();
      else
        ctx.log.warn(
          `The set's journal (${journal.folder}) keeps what it replaced; the next start of Workspace Tools on this workspace puts back what it can.`,
        );
      const cause = e instanceof SandboxError ? e : undefined;
      const what = cause?.what ?? (e instanceof Error ? e.message : String(e));
      const rolled =
        done.length === 0
          ? 'Nothing had been written yet.'
          : failed.length === 0
            ? `What was already written (${done.map((d) => `"${d.path.display}"`).join(', ')}) was rolled back, so nothing remains changed.`
            : `Rolling back failed for ${failed.map((f) => `"${f}"`).join(', ')}: check those files.`;
      throw new SandboxError(
        cause?.code ?? 'E_SANDBOX_IO',
        `Saving the set failed at "${target.display}": ${what} ${rolled}`,
        cause?.next ?? 'Tell the user.',
        { cause: e },
      );
    }
  }
  const removedFolders: string[] = [];
  for (const step of done)
    if (step.kind === 'removed') removedFolders.push(...(await removeEmptiedFolders(ctx, step.path)));
  const recorded = await recordAll(ctx, setRecords(files, done));
  // A set that cannot be undone as a whole gives no save_id.
  const saveId = recorded.failed.length === 0 && recorded.unkept === undefined ? recorded.set : undefined;
  await journal.close();
  return { saveId, files, removedFolders };
}

/** Journals the set before its first write; a journal that cannot be written stops the set before it starts. */
async function beginJournal(ctx: SetContext, steps: readonly PlannedStep[]): Promise<JournalRecord> {
  try {
    return await ctx.journal.begin('save', steps);
  } catch (e) {
    throw new SandboxError(
      'E_SANDBOX_IO',
      `The set could not be journaled before writing (${e instanceof Error ? e.message : String(e)}), so nothing in it was written.`,
      `Tell the user: Workspace Tools journals change sets in that folder, which must be the user's own writable folder with free space.`,
      { cause: e },
    );
  }
}

/** What the set replaced, for undo: a write record per written file, a delete record per removed one (a move is both). */
function setRecords(files: readonly SetFileOutcome[], done: readonly DoneStep[]): SetRecord[] {
  return files.flatMap((f): SetRecord[] => {
    const base = { mediaId: f.mediaId, added: f.added, removed: f.removed };
    const first: SetRecord = f.write
      ? {
          ...base,
          path: f.path,
          replaced: f.write.replaced,
          replacedMeta: f.write.replacedMeta,
          written: f.write.written,
          file: f.write.file,
          ...(f.from ? { moved: { from: f.from } } : {}),
        }
      : { ...base, path: f.path, kind: 'delete', ...removedAt(done, f.path), written: new Uint8Array(0) };
    if (!f.from) return [first];
    const source: SetRecord = {
      ...base,
      path: f.from,
      kind: 'delete',
      ...removedAt(done, f.from),
      written: new Uint8Array(0),
      moved: { to: f.path },
    };
    return [first, source];
  });
}

/** The bytes, mode and owner a set removed at `path`, as a delete record keeps them. */
function removedAt(
  done: readonly DoneStep[],
  path: ModelPath,
): { readonly replaced: Uint8Array | undefined; readonly replacedMeta: FileMeta | undefined } {
  const step = done.find((d) => d.kind === 'removed' && pathKey(d.path) === pathKey(path));
  return { replaced: step?.before, replacedMeta: step?.meta };
}
