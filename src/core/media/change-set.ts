import { SandboxError } from '../errors.ts';
import type { GatedPath, ModelPath } from '../paths.ts';
import type { Log } from '../ports.ts';
import { refuseUnsavedEditor, type OpenEditors } from './editors.ts';
import { putBack, readDisk, removeEmptiedFolders, removeFile } from './file-ops.ts';
import { holdsBase } from './hash.ts';
import type { SaveHistory, SaveRecord } from './history.ts';
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

/** A step already done, and how to take it back. */
type Done =
  | { readonly kind: 'wrote'; readonly path: GatedPath; readonly replaced: Uint8Array | undefined }
  | { readonly kind: 'removed'; readonly path: GatedPath; readonly bytes: Uint8Array };

function conflict(what: string): SandboxError {
  return new SandboxError('E_SANDBOX_CONFLICT', `${what} Nothing in the set was written.`, `Stage that file again, re-apply your change, and save the set again.`);
}

/**
 * Checks every change of a set against disk before anything is written: write roots, unsaved
 * editors, links and folders, and that each file is as it was staged (a move's destination absent
 * unless the person agreed to replace it).
 */
async function checkAll(ctx: SetContext, changes: readonly SetChange[]): Promise<void> {
  const seen = new Set<string>();
  for (const c of changes) {
    for (const p of c.source ? [c.source, c.target] : [c.target]) {
      if (seen.has(pathKey(p))) throw new SandboxError('E_SANDBOX_INVALID_INPUT', `"${p.display}" appears twice in the set; each file can change once per save.`, `Save the latest media of that file alone.`);
      seen.add(pathKey(p));
      ctx.saveGuard.checkWriteRoot(p);
      refuseUnsavedEditor(ctx.editors, p, 'save_media');
    }
  }
  for (const { media, target, source } of changes) {
    const verb = media.change.kind === 'write' ? 'written' : media.change.kind === 'delete' ? 'deleted' : 'moved';
    const disk = await readDisk(ctx, source ?? target, verb);
    const display = (source ?? target).display;
    const samePath = pathKey(target) === pathKey(media.path);
    if (media.change.kind === 'write' && !samePath) {
      if (disk !== undefined) throw conflict(`"${target.display}" already exists, and ${media.id} is saved elsewhere only as a new file.`);
      continue;
    }
    if (disk === undefined && media.base.existed) throw conflict(`"${display}" was deleted after ${media.id} was staged.`);
    if (disk !== undefined && !holdsBase(disk, media.base)) throw conflict(`"${display}" ${media.base.existed ? 'changed on disk' : 'was created'} after ${media.id} was staged.`);
    if (media.change.kind === 'move') {
      const there = await readDisk(ctx, target, 'replaced');
      if (there !== undefined && !media.change.replace) throw conflict(`"${target.display}", where ${media.id} moves "${display}", exists now.`);
    }
  }
}

/** Takes back what was done, newest first; returns the paths that could not be restored. */
async function rollBack(ctx: SetContext, done: readonly Done[]): Promise<string[]> {
  const failed: string[] = [];
  for (const step of [...done].reverse()) {
    try {
      if (step.kind === 'wrote') await putBack(ctx, step.path, step.replaced, false);
      else await putBack(ctx, step.path, step.bytes, true);
    } catch (e) {
      ctx.log.warn(`Rolling back "${step.path.display}" failed: ${e instanceof Error ? e.message : String(e)}`);
      failed.push(step.path.display);
    }
  }
  return failed;
}

/**
 * Saves a set of changes as one: checks them all, then writes, deletes and moves in order; if a step
 * fails, what was done is rolled back (bytes restored, deleted files recreated, moves undone) and the
 * error says so. Records one save set for undo.
 */
export async function commitSet(ctx: SetContext, changes: readonly SetChange[]): Promise<SetOutcome> {
  await checkAll(ctx, changes);
  const done: Done[] = [];
  const files: SetFileOutcome[] = [];
  for (const { media, target, source } of changes) {
    const counts = ctx.media.find(media.id) ? ctx.media.changes(media.id) : { added: 0, removed: 0 };
    try {
      if (media.change.kind === 'delete') {
        const bytes = await removeFile(ctx, target, media.base.hash);
        done.push({ kind: 'removed', path: target, bytes });
        if (ctx.media.find(media.id)) ctx.media.markSaved(media.id, target, new Uint8Array(0));
        ctx.media.noteDisk(target, undefined);
        files.push({ kind: 'delete', mediaId: media.id, path: target, ...counts, write: undefined });
        continue;
      }
      const move = media.change.kind === 'move' && source !== undefined;
      // Before the write: saving rebases the media onto what it wrote.
      const sourceHash = media.base.hash;
      const write = await commitMedia(ctx, media.id, target, move && media.change.kind === 'move' ? (media.change.replace ? 'any' : 'absent') : undefined);
      done.push({ kind: 'wrote', path: target, replaced: write.replaced });
      if (move) {
        const bytes = await removeFile(ctx, source, sourceHash);
        done.push({ kind: 'removed', path: source, bytes });
        ctx.media.noteDisk(source, undefined);
        files.push({ kind: 'move', mediaId: media.id, path: target, from: source, ...counts, write });
      } else {
        files.push({ kind: 'write', mediaId: media.id, path: target, added: write.added, removed: write.removed, write });
      }
    } catch (e) {
      const failed = await rollBack(ctx, done);
      const cause = e instanceof SandboxError ? e : undefined;
      const what = cause?.what ?? (e instanceof Error ? e.message : String(e));
      const rolled = done.length === 0 ? 'Nothing had been written yet.' : failed.length === 0 ? `What was already written (${done.map((d) => `"${d.path.display}"`).join(', ')}) was rolled back, so nothing remains changed.` : `Rolling back failed for ${failed.map((f) => `"${f}"`).join(', ')}: check those files.`;
      throw new SandboxError(cause?.code ?? 'E_SANDBOX_IO', `Saving the set failed at "${target.display}": ${what} ${rolled}`, cause?.next ?? 'Tell the user.', { cause: e });
    }
  }
  const removedFolders: string[] = [];
  for (const step of done) if (step.kind === 'removed') removedFolders.push(...await removeEmptiedFolders(ctx, step.path));
  return { saveId: await recordSet(ctx, files, done), files, removedFolders };
}

/** Keeps what the set replaced, for undo: a write record per written file, a delete record per removed one. Failing to keep it never fails the save. */
async function recordSet(ctx: SetContext, files: readonly SetFileOutcome[], done: readonly Done[]): Promise<string | undefined> {
  let set: string | undefined;
  try {
    for (const f of files) {
      const base = { mediaId: f.mediaId, added: f.added, removed: f.removed, ...(set ? { set } : {}) };
      let first: SaveRecord;
      if (f.write) {
        first = await ctx.saves.record({ ...base, path: f.path, replaced: f.write.replaced, written: f.write.written, file: f.write.file, ...(f.from ? { moved: { from: f.from } } : {}) });
      } else {
        first = await ctx.saves.record({ ...base, path: f.path, kind: 'delete', replaced: removedAt(done, f.path), written: new Uint8Array(0) });
      }
      set ??= first.id;
      if (f.from) await ctx.saves.record({ ...base, set, path: f.from, kind: 'delete', replaced: removedAt(done, f.from), written: new Uint8Array(0), moved: { to: f.path } });
    }
    return set;
  } catch (e) {
    ctx.log.warn(`The save cannot be undone: the bytes it replaced could not be kept (${e instanceof Error ? e.message : String(e)}).`);
    return undefined;
  }
}

function removedAt(done: readonly Done[], path: ModelPath): Uint8Array | undefined {
  const step = done.find((d) => d.kind === 'removed' && pathKey(d.path) === pathKey(path));
  return step?.kind === 'removed' ? step.bytes : undefined;
}
