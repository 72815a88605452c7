import { SandboxError, invalidInput } from '../errors.ts';
import type { GatedPath } from '../paths.ts';
import { refuseUnsavedEditor } from './editors.ts';
import { inPinned, putBack, readFileAt, removeEmptiedFolders, removeFile, type FileBytes } from './file-ops.ts';
import { madeThing, moveTree, removeTree, treeChange, undoneName } from './tree.ts';
import type { PlannedStep } from './journal.ts';
import { hashBytes } from './hash.ts';
import type { SaveRecord } from './history.ts';
import type { UndoContext } from './undo.ts';
import { pathKey } from './types.ts';

/** A record that made a folder or a link names it: the link is what the undo removes, never followed. */
const LINK_AT_END = { linkAtEnd: true } as const;

/** A record of a set to undo, with its gated path and the bytes it replaced (undefined: it created the file). */
interface Step {
  readonly record: SaveRecord;
  readonly path: GatedPath;
  readonly before: Uint8Array | undefined;
  /** What the file holds now (what the save left), with its mode and owner: the journal keeps it. */
  readonly now: FileBytes | undefined;
}

/**
 * Undoes several saved files at once (a set, or a delete): checks every file still holds what the
 * save left (a deleted file still absent) before touching any, then puts each back, newest first:
 * written files get their previous bytes (created ones are removed), deleted ones are recreated.
 * If a step fails, the steps done are redone, and the error says so. Never overwrites a newer change.
 */
export async function undoFiles(
  ctx: UndoContext,
  records: readonly SaveRecord[],
  targets: readonly GatedPath[],
): Promise<void> {
  const trees: { readonly record: SaveRecord; readonly path: GatedPath }[] = [];
  const files: { readonly record: SaveRecord; readonly path: GatedPath }[] = [];
  for (const record of records) {
    if (record.undone)
      throw invalidInput(`Save ${record.id} of "${record.path.display}" was already undone. Nothing was changed.`, '');
    const path = targets.find((t) => pathKey(t) === pathKey(record.path));
    if (path === undefined)
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `"${record.path.display}" was not among the files the user was asked about; nothing was undone.`,
        'Call undo_save again.',
      );
    ctx.saveGuard.checkWriteRoot(path);
    if (record.tree === undefined) {
      files.push({ record, path });
      continue;
    }
    const tree = record.tree;
    const why = await inPinned(ctx, path, false, (address) => treeChange(address, tree), LINK_AT_END);
    if (why !== undefined)
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `The ${madeThing(tree)} "${record.path.display}", which save ${record.id} made, changed since (${why}), so undoing the set would remove that newer change; nothing was undone.`,
        `Ask the user; they can remove it themselves.`,
      );
    trees.push({ record, path });
  }
  // Folders made whole and links made are moved aside first (one rename each, taken back if a file's
  // check or undo fails), removed at the end: a file the set removed where it put a link goes back.
  const aside: { readonly record: SaveRecord; readonly path: GatedPath }[] = [];
  for (const tree of trees) {
    const manifest = tree.record.tree!;
    const notMoved = await inPinned(
      ctx,
      tree.path,
      false,
      async (address) => {
        const beside = undoneName(address, tree.record.id);
        if (!(await moveTree(address, beside))) return 'something is in the way';
        // Security: checked again once aside, so what moved is what was checked (a link swapped for
        // the person's folder in between goes back untouched).
        const why = await treeChange(beside, manifest);
        if (why === undefined) return undefined;
        await moveTree(beside, address);
        return `it changed as it was moved: ${why}`;
      },
      LINK_AT_END,
    );
    if (notMoved !== undefined) {
      await putTreesBack(ctx, aside);
      throw new SandboxError(
        'E_SANDBOX_CONFLICT',
        `The ${madeThing(manifest)} "${tree.record.path.display}" could not be moved aside to be removed (${notMoved}); nothing was undone.`,
        'Tell the user.',
      );
    }
    aside.push(tree);
  }
  const steps: Step[] = [];
  const made = foldersMade(records);
  try {
    for (const { record, path } of files) {
      refuseUnsavedEditor(ctx.editors, path, 'undo_save');
      // A file the set replaced by a folder: the folder goes with the files the set put in it, before the file comes back.
      const now =
        record.kind === 'delete' && made.has(pathKey(path)) ? undefined : await readFileAt(ctx, path, 'restored');
      const disk = now?.bytes;
      const holdsSave =
        record.kind === 'delete' ? disk === undefined : disk !== undefined && hashBytes(disk) === record.savedHash;
      if (!holdsSave) {
        throw new SandboxError(
          'E_SANDBOX_CONFLICT',
          `"${record.path.display}" ${record.kind === 'delete' ? 'exists again' : 'changed'} since save ${record.id}, so undoing the set would overwrite that newer change; nothing was undone.`,
          `Undo the other files one by one (undo_save with save_id and path), or ask the user.`,
        );
      }
      steps.push({ record, path, before: await ctx.saves.before(record.id), now });
    }
  } catch (e) {
    await putTreesBack(ctx, aside);
    throw e;
  }
  const journal =
    steps.length === 0
      ? undefined
      : await ctx.journal
          .begin(
            'undo',
            steps.map((s): PlannedStep => ({
              path: s.path,
              kind: s.before === undefined ? 'delete' : 'write',
              before: s.now,
              after: s.before,
              afterMeta: s.record.replacedMeta,
              keepAfter: true,
            })),
          )
          .catch((e: unknown) => {
            return putTreesBack(ctx, aside).then(() => {
              throw new SandboxError(
                'E_SANDBOX_IO',
                `The undo could not be journaled before writing (${e instanceof Error ? e.message : String(e)}), so nothing was undone.`,
                `Tell the user: Workspace Tools journals change sets in that folder, which must be the user's own writable folder with free space.`,
                { cause: e },
              );
            });
          });
  const done: Step[] = [];
  for (const step of [...steps].reverse()) {
    try {
      if (step.record.kind === 'delete') await putBack(ctx, step.path, step.before, true, step.record.replacedMeta);
      else if (step.before === undefined) {
        await removeFile(ctx, step.path, step.record.savedHash);
        // The folders the set made for it go as soon as they are empty: a file the set replaced by a folder comes back in its place.
        if (step.record.madeFolders !== undefined)
          await removeEmptiedFolders(ctx, step.path, step.record.madeFolders).catch(() => []);
      } else await putBack(ctx, step.path, step.before, false, step.record.replacedMeta, step.now?.bytes);
      ctx.media.noteDisk(step.path, step.before);
      done.push(step);
    } catch (e) {
      const failed = [...(await redo(ctx, done)), ...(await putTreesBack(ctx, aside))];
      if (failed.length === 0) await journal?.close();
      else if (journal !== undefined)
        ctx.log.warn(
          `The undo's journal (${journal.folder}) keeps what the files held; the next start of Workspace Tools on this workspace puts back what it can.`,
        );
      const what = e instanceof SandboxError ? e.what : e instanceof Error ? e.message : String(e);
      throw new SandboxError(
        e instanceof SandboxError ? e.code : 'E_SANDBOX_IO',
        `Undoing failed at "${step.path.display}": ${what} ${failed.length ? `Putting back the files already undone failed for ${failed.join(', ')}: check them.` : 'The files already undone were put back, so nothing remains changed.'}`,
        'Tell the user.',
        { cause: e },
      );
    }
  }
  for (const tree of aside)
    await inPinned(ctx, tree.path, false, async (address) => {
      const beside = undoneName(address, tree.record.id);
      // Removed only while it is still what the set made.
      const why = await treeChange(beside, tree.record.tree!);
      if (why !== undefined) throw new Error(`it changed beside it (${why}), so it was kept as ${beside}`);
      await removeTree(beside);
    }).catch((e: unknown) =>
      ctx.log.warn(
        `The ${madeThing(tree.record.tree!)} "${tree.record.path.display}" was undone but its copy beside it could not be removed: ${e instanceof Error ? e.message : String(e)}`,
      ),
    );
  // The folders the set made for its links go too once empty (never one holding anything, nor above what it made).
  for (const { record, path } of aside)
    if (record.madeFolders !== undefined) await removeEmptiedFolders(ctx, path, record.madeFolders).catch(() => []);
  for (const step of [...steps, ...aside]) ctx.saves.markUndone(step.record.id, { kind: 'reverted' });
  await journal?.close();
}

/** The folders the set's records say it made above their files (by `pathKey`). */
function foldersMade(records: readonly SaveRecord[]): Set<string> {
  const made = new Set<string>();
  for (const { path, madeFolders = 0 } of records) {
    let rel = path.rel;
    for (let up = 0; up < madeFolders && rel.includes('/'); up++) {
      rel = rel.slice(0, rel.lastIndexOf('/'));
      made.add(pathKey({ ...path, rel }));
    }
  }
  return made;
}

/** Moves folders an undo had moved aside back to their place; the ones that could not be (as shown). */
async function putTreesBack(
  ctx: UndoContext,
  aside: readonly { readonly record: SaveRecord; readonly path: GatedPath }[],
): Promise<string[]> {
  const failed: string[] = [];
  for (const tree of aside) {
    const back = await inPinned(ctx, tree.path, false, (address) =>
      moveTree(undoneName(address, tree.record.id), address),
    ).catch(() => false);
    if (!back) failed.push(`"${tree.record.path.display}"`);
  }
  return failed;
}

/** Takes an undo back: each file gets what the save had left there again. */
async function redo(ctx: UndoContext, done: readonly Step[]): Promise<string[]> {
  const failed: string[] = [];
  for (const step of [...done].reverse()) {
    try {
      if (step.record.kind === 'delete') await removeFile(ctx, step.path, undefined);
      else
        await putBack(ctx, step.path, await ctx.saves.after(step.record.id), step.before === undefined, step.now?.meta);
    } catch {
      failed.push(`"${step.path.display}"`);
    }
  }
  return failed;
}
