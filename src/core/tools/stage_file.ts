import * as z from 'zod';
import { SandboxError, invalidInput } from '../errors.ts';
import { defineTool, type CurrentBytesUse, type TargetScope, type ToolContext } from '../contract/tool.ts';
import { patchArgument, pathArgument } from '../contract/schema.ts';
import { patchMedia, type MediaPatch, type PatchedMedia } from '../media/patch-media.ts';
import type { MediaStore } from '../media/store.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import type { GatedPath, ModelPath } from '../paths.ts';
import { pathKey } from '../media/types.ts';
import { foldersLeftEmpty, stageDelete, stageMove, stageWrite } from '../media/stage-change.ts';
import { MAX_SET } from './save_media.ts';

/** The most changes one stage_file call stages (as many as save_media saves as one set). */
export const MAX_CHANGES = MAX_SET;

/** The arguments of one change: the single form's, and each entry of `changes`. */
const changeFields = () => ({
  content: z.string().optional().describe("The full new content. Omit to stage the file's current bytes for patching."),
  patch: patchArgument()
    .optional()
    .describe(
      'Edits to apply at once, as media_apply_patch takes them: one {find, replace, replace_all?}, a list of them in order, or {unified: "<diff>"}. The result is then the patched media (one call instead of stage_file + media_apply_patch). Not with content.',
    ),
  action: z
    .enum(['write', 'delete', 'move'])
    .optional()
    .describe(
      'write (default): stage new bytes for path. delete: stage the removal of the file at path (files only; no content or patch). move: stage moving path to `to`, optionally with content or patch (a rename with an edit is one call).',
    ),
  to: pathArgument('For a move: where the file goes (must not exist unless replace is true)').optional(),
  replace: z
    .boolean()
    .optional()
    .describe('For a move onto an existing file: replace it (the user is asked to confirm replacing it).'),
});

const changeSchema = () =>
  z.strictObject({
    path: pathArgument('The file to stage (existing, or new when content is given)'),
    ...changeFields(),
  });

export const stageFileSchema = () =>
  z.strictObject({
    path: pathArgument('The file to stage (existing, or new when content is given). Give this or changes').optional(),
    ...changeFields(),
    changes: z
      .array(changeSchema())
      .min(1)
      .max(MAX_CHANGES)
      .optional()
      .describe(
        `Several files in one call (at most ${MAX_CHANGES}): each {path, content?, patch?, action?, to?, replace?} as for one file. Returns their media_ids, to save with ONE save_media media_ids call. All or nothing: if one entry fails, none is staged.`,
      ),
  });

type StageFileInput = z.infer<ReturnType<typeof stageFileSchema>>;
/** One change: the single form's arguments, or an entry of `changes`. */
type StageChangeInput = z.infer<ReturnType<typeof changeSchema>>;

export interface StageFileResult {
  readonly media_id: string;
  /** Where the bytes go (a move's destination; the file to delete for a delete). */
  readonly path: string;
  /** delete or move (omitted for a write). */
  readonly action?: 'delete' | 'move';
  /** A move's source. */
  readonly from?: string;
  readonly bytes: number;
  readonly lines: number;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly isNew: boolean;
  /** With `patch`: the media of the file as staged, before the edits (media_id is the patched one). */
  readonly parent_id?: string;
  readonly added?: number;
  readonly removed?: number;
  /** With `patch`: 1-based edits that matched only with line endings normalized. */
  readonly normalized_line_endings?: readonly number[];
  /** Set when the file has more than one name (hard links): a save writes it in place, so every name changes. */
  readonly links?: number;
  /** The open editor that holds the user's unsaved changes to this file (not in the media). */
  readonly unsaved_editor?: string;
  /** The folders a delete or move leaves with nothing in them: a save removes them with the file. */
  readonly leaves_empty?: readonly string[];
}

/** The line saying which folders a save removes with the files, when any. */
function emptiedLine(folders: readonly string[] | undefined): string {
  if (!folders?.length) return '';
  return `\nSaving also removes ${folders.join(', ')}, which then ${folders.length === 1 ? 'holds' : 'hold'} nothing (undo_save brings ${folders.length === 1 ? 'it' : 'them'} back).`;
}

export function renderStageFile(r: StageFileResult): string {
  const shown = {
    media_id: r.media_id,
    path: r.path,
    ...(r.action ? { action: r.action } : {}),
    ...(r.from ? { from: r.from } : {}),
    ...(r.parent_id !== undefined || r.action ? { added: r.added ?? 0, removed: r.removed ?? 0 } : { lines: r.lines }),
    ...(r.isNew ? { new: true } : {}),
  };
  const next =
    r.parent_id === undefined && r.action === undefined && !r.isNew
      ? 'Nothing written: patch it (media_apply_patch), then save_media.'
      : 'Nothing written yet: save_media (media_ids for several).';
  const links = r.links
    ? `\nThis file has ${r.links} names (hard links): saving it changes the file under every name.`
    : '';
  const editor =
    r.unsaved_editor === undefined
      ? ''
      : `\nThe user has unsaved changes to this file in the editor "${r.unsaved_editor}"; they are not in this media, which holds the file as it is on disk, and save_media will refuse until the user saves or reverts them.`;
  return `${JSON.stringify(shown)}\n${next}${links}${editor}${emptiedLine(r.leaves_empty)}`;
}

/**
 * What a call with `changes` returns: each change's result, in order. It has none of the single
 * form's fields, so a caller reading `media_id` of either form gets a string or undefined.
 */
export type StageBatchResult = {
  readonly media_ids: readonly string[];
  readonly files: readonly StageFileResult[];
  /** The folders the set's deletes and moves leave with nothing in them: a save removes them. */
  readonly leaves_empty?: readonly string[];
} & { readonly [K in Exclude<keyof StageFileResult, 'leaves_empty'>]?: never };

/** How one staged change reads in a batch's result: its path, kind and counts. */
function batchLine(r: StageFileResult): string {
  const counts = `+${r.added ?? 0} −${r.removed ?? 0}`;
  if (r.action === 'delete') return `delete ${r.path}`;
  if (r.action === 'move') return `move ${r.from ?? '?'} → ${r.path} ${counts}`;
  if (r.isNew) return `new ${r.path} (${r.lines} line${r.lines === 1 ? '' : 's'})`;
  return r.parent_id === undefined ? `${r.path} (as on disk)` : `${r.path} ${counts}`;
}

export function renderStageBatch(r: StageBatchResult): string {
  const notes = r.files.flatMap((f) => [
    ...(f.normalized_line_endings
      ? [`${f.path}: edits ${f.normalized_line_endings.join(', ')} matched only with line endings normalized.`]
      : []),
    ...(f.links ? [`${f.path} has ${f.links} names (hard links): saving it changes the file under every name.`] : []),
    ...(f.unsaved_editor === undefined
      ? []
      : [
          `${f.path} has unsaved changes in the editor "${f.unsaved_editor}" (not in the media); save_media will refuse until the user saves or reverts them.`,
        ]),
  ]);
  return (
    [
      JSON.stringify({ media_ids: r.media_ids }),
      `${r.files.map(batchLine).join('; ')}. Nothing written yet: save_media with these media_ids.`,
      ...notes,
    ].join('\n') + emptiedLine(r.leaves_empty)
  );
}

/** A call's targets as one change plans them: its paths and what it does with their bytes. */
interface ChangeTargets {
  readonly paths: readonly ModelPath[];
  readonly summary: string;
  readonly reads: CurrentBytesUse;
}

/** The plan of a call with `changes`: how many of the call's targets each change has (a move has two). */
type StagePlan = readonly number[];

export const stageFile = defineTool({
  name: 'stage_file',
  displayName: 'Stage File',
  userDescription: 'Stage an in-memory copy of a file, or several, for editing (writes nothing).',
  description:
    'The edit is in memory; nothing changes on disk until save_media. Stages a media: an in-memory copy of a file\'s current bytes (to patch with media_apply_patch), or, with content, the full content of a new or replaced file. With patch, the edits are applied at once and the patched media is returned: an edit is ONE call (use this rather than stage + media_apply_patch). action "delete" stages deleting a file (files only); action "move" with `to` stages a rename/move, with content or patch for a rename with an edit in one call (one tool with an action keeps one way to stage any change, and every kind is saved, reviewed and undone the same way). For several files, give changes (a list of such entries) instead of path: one call stages them all and returns their media_ids. The user sees each as a diff. Always finish with save_media (media_ids saves several as one set), or the change is lost.',
  risk: 'write',
  requires: ['writable'],
  needs: ['fs', 'media', 'editors'],
  icon: 'git-stage',
  schema: stageFileSchema,
  targets: (input, scope) => {
    const changes = changesOf(input);
    if (input.changes === undefined) return { ...changeTargets(changes[0]!, scope) };
    const planned = changes.map((change, i) => {
      try {
        return changeTargets(change, scope);
      } catch (e) {
        throw namedEntry(e, i, change);
      }
    });
    refuseTwice(planned);
    const plan: StagePlan = planned.map((p) => p.paths.length);
    const summary = `stage ${changes.length} change${changes.length === 1 ? '' : 's'}: ${planned.map((p) => p.summary.replace(/^stage /, '')).join('; ')}`;
    return {
      paths: planned.flatMap((p) => p.paths),
      reads: planned.flatMap((p) => p.paths.map(() => p.reads)),
      summary,
      plan,
    };
  },
  run: async (input, ctx, plan): Promise<StageFileResult | StageBatchResult> => {
    if (input.changes === undefined) return stageOne(changesOf(input)[0]!, ctx.targets, ctx, true);
    return stageAll(input.changes, plan ?? [], ctx);
  },
  render: (r) => ('media_ids' in r ? renderStageBatch(r) : renderStageFile(r)),
});

/** The changes a call makes: its one change (the single form), or its `changes`. */
function changesOf(input: StageFileInput): readonly StageChangeInput[] {
  const { changes, path, ...single } = input;
  if (changes === undefined) {
    if (path === undefined)
      throw invalidInput(
        `stage_file needs path (one file) or changes (several), and got neither.`,
        `Give path, e.g. {"path": "src/a.ts", "patch": {"find": "old", "replace": "new"}}, or changes: a list of such objects.`,
      );
    return [{ path, ...single }];
  }
  const extra = Object.keys(input).filter((k) => k !== 'changes');
  if (extra.length > 0)
    throw invalidInput(
      `stage_file was given changes and also ${extra.join(', ')}; with changes, every file's arguments go inside its entry.`,
      `Move ${extra.join(', ')} into the entry of changes they belong to.`,
    );
  return changes;
}

/** One change's targets, checked before the gate is asked. */
function changeTargets(input: StageChangeInput, scope: TargetScope): ChangeTargets {
  if (input.content !== undefined && input.patch !== undefined) {
    throw invalidInput(
      `stage_file was given both content (the whole new file) and patch (edits to the file as it is); they cannot be combined.`,
      `Give content to replace the file, or patch to edit it.`,
    );
  }
  const action = input.action ?? 'write';
  checkAction(input, action);
  if (action === 'delete')
    return { paths: [scope.normalize(input.path)], summary: `stage deleting ${input.path}`, reads: 'none' };
  if (action === 'move') {
    const to = scope.normalize(input.to ?? '');
    return {
      paths: [scope.normalize(input.path), to],
      summary: `stage moving ${input.path} to ${to.display}${input.replace ? ', replacing it' : ''}${input.content !== undefined ? ' with new content' : input.patch !== undefined ? ' and patch it' : ''}`,
      reads: 'change',
    };
  }
  return {
    paths: [scope.normalize(input.path)],
    summary: `stage ${input.path}${input.content !== undefined ? ' with new content' : input.patch !== undefined ? ' and patch it' : ''}`,
    reads: input.content !== undefined ? 'none' : input.patch !== undefined ? 'change' : 'keep',
  };
}

/** A file named by two changes of one call is refused: which would the set save? */
function refuseTwice(planned: readonly ChangeTargets[]): void {
  const seen = new Map<string, number>();
  for (const [i, p] of planned.entries()) {
    for (const path of p.paths) {
      const first = seen.get(pathKey(path));
      if (first !== undefined && first !== i)
        throw invalidInput(
          `changes[${first}] and changes[${i}] both name "${path.display}"; each file can change once per call.`,
          `Give one entry per file (a patch may list several edits).`,
        );
      seen.set(pathKey(path), i);
    }
  }
}

/** The error of entry `index` of `changes`, naming it. */
function namedEntry(e: unknown, index: number, change: StageChangeInput, discarded = 0): unknown {
  if (!(e instanceof SandboxError)) return e;
  const before =
    discarded > 0 ? ` (the ${discarded} staged before it ${discarded === 1 ? 'was' : 'were'} discarded)` : '';
  return new SandboxError(
    e.code,
    `changes[${index}] ("${change.path}"): ${e.what} Nothing was staged by this call${before}.`,
    `${e.next} Fix that entry and call stage_file again with all the changes.`.trim(),
    { cause: e },
  );
}

/** Stages every change in order; if one fails, the ones staged before it are discarded and the error names it. */
async function stageAll(
  changes: readonly StageChangeInput[],
  plan: StagePlan,
  ctx: ToolContext<'fs' | 'media' | 'editors'>,
): Promise<StageBatchResult> {
  const files: StageFileResult[] = [];
  let at = 0;
  for (const [i, change] of changes.entries()) {
    const count = plan[i] ?? 1;
    const paths = ctx.targets.slice(at, at + count);
    at += count;
    try {
      files.push(await stageOne(change, paths, ctx, false));
    } catch (e) {
      for (const f of files) if (ctx.media.find(f.media_id)) ctx.media.discard(f.media_id);
      throw namedEntry(e, i, change, files.length);
    }
  }
  // Each change's first target is the file it removes (a delete, a move's source) or writes; a move's second, its destination.
  const firsts = changes.map((_, i) => plan.slice(0, i).reduce((a, b) => a + b, 0));
  const removed = changes.flatMap((c, i) =>
    c.action === 'delete' || c.action === 'move' ? [ctx.targets[firsts[i]!]!] : [],
  );
  const written = changes.flatMap((c, i) =>
    c.action === 'move' ? [ctx.targets[firsts[i]! + 1]!] : c.action === 'delete' ? [] : [ctx.targets[firsts[i]!]!],
  );
  const emptied = await foldersLeftEmpty(ctx, removed, written);
  return { media_ids: files.map((f) => f.media_id), files, ...(emptied.length ? { leaves_empty: emptied } : {}) };
}

/**
 * Stages one change on its approved paths. `alone` (the single form): when its patch fails, the file
 * stays staged unpatched for the model to patch, and the folder a removal empties is looked at here;
 * in a batch, a failed entry is discarded too, and the batch looks at its removals together.
 */
async function stageOne(
  input: StageChangeInput,
  paths: readonly GatedPath[],
  ctx: ToolContext<'fs' | 'media' | 'editors'>,
  alone: boolean,
): Promise<StageFileResult> {
  const [path, to] = paths;
  if (path === undefined) throw invalidInput('stage_file was given no path.', 'Give path.');
  if (input.action === 'delete' || input.action === 'move') return stageChange(input, path, to, ctx, alone);
  const { media, links } = await stageWrite(ctx, path, input.content);
  const editor = ctx.editors?.unsavedEditor(path);
  const facts = { ...(links > 1 ? { links } : {}), ...(editor !== undefined ? { unsaved_editor: editor } : {}) };
  if (input.patch === undefined) {
    return {
      media_id: media.id,
      path: path.display,
      bytes: media.bytes.byteLength,
      lines: media.lines,
      encoding: media.encoding,
      eol: media.eol,
      isNew: media.isNew,
      ...facts,
    };
  }
  const { child, counts, normalizedEdits } = patchStaged(ctx.media, media.id, input.patch, alone);
  return {
    media_id: child.id,
    path: path.display,
    bytes: child.bytes.byteLength,
    lines: child.lines,
    encoding: child.encoding,
    eol: child.eol,
    isNew: child.isNew,
    parent_id: media.id,
    ...counts,
    ...(normalizedEdits.length ? { normalized_line_endings: normalizedEdits } : {}),
    ...facts,
  };
}

/** Refuses arguments that do not fit the action, before the gate is asked. */
function checkAction(input: StageChangeInput, action: 'write' | 'delete' | 'move'): void {
  if (action !== 'move' && (input.to !== undefined || input.replace !== undefined)) {
    throw invalidInput(
      `to and replace belong to action "move", and this call's action is "${action}".`,
      `Give action "move" to move the file, or drop to and replace.`,
    );
  }
  if (action === 'delete' && (input.content !== undefined || input.patch !== undefined)) {
    throw invalidInput(
      `A delete takes no content or patch: it removes "${input.path}" as it is.`,
      `Drop content and patch, or use action "write" to change the file.`,
    );
  }
  if (action === 'move' && input.to === undefined)
    throw invalidInput(
      `action "move" needs to: the path the file moves to.`,
      `Give to, e.g. {"path": "src/a.ts", "action": "move", "to": "src/b.ts"}.`,
    );
}

/** Stages a delete (no `to`) or a move (with its patch, if any). */
async function stageChange(
  input: StageChangeInput,
  first: GatedPath,
  second: GatedPath | undefined,
  ctx: ToolContext<'fs' | 'media' | 'editors'>,
  alone: boolean,
): Promise<StageFileResult> {
  if (input.action === 'move' && second === undefined)
    throw invalidInput(
      `A move needs two different paths; "${first.display}" was given as both.`,
      `Give the new path in to.`,
    );
  const media =
    second === undefined
      ? await stageDelete(ctx, first)
      : await stageMove(ctx, first, second, input.content, input.replace === true);
  const from = media.change.kind === 'move' ? { from: media.change.from.display } : {};
  // A batch looks at its removals together (one file of a folder's two may be deleted by another entry).
  const emptied = alone ? await foldersLeftEmpty(ctx, [first], second ? [second] : []) : [];
  const base = {
    path: media.path.display,
    action: media.change.kind === 'delete' ? ('delete' as const) : ('move' as const),
    ...from,
    encoding: media.encoding,
    eol: media.eol,
    isNew: false,
    ...(emptied.length ? { leaves_empty: emptied } : {}),
  };
  if (input.patch === undefined)
    return {
      media_id: media.id,
      bytes: media.bytes.byteLength,
      lines: media.lines,
      ...base,
      ...ctx.media.changes(media.id),
    };
  const { child, normalizedEdits } = patchStaged(ctx.media, media.id, input.patch, alone);
  return {
    media_id: child.id,
    bytes: child.bytes.byteLength,
    lines: child.lines,
    ...base,
    parent_id: media.id,
    ...ctx.media.changes(child.id),
    ...(normalizedEdits.length ? { normalized_line_endings: normalizedEdits } : {}),
  };
}

/**
 * The patch of a file just staged. When it fails, the error says the unpatched media is there to
 * patch (`keepUnpatched`), or the unpatched media is discarded (a batch stages all or nothing).
 */
function patchStaged(store: MediaStore, mediaId: string, patch: MediaPatch, keepUnpatched: boolean): PatchedMedia {
  try {
    return patchMedia(store, mediaId, patch);
  } catch (e) {
    if (!keepUnpatched) {
      store.discard(mediaId);
      throw e;
    }
    if (!(e instanceof SandboxError)) throw e;
    throw new SandboxError(
      e.code,
      `${e.what} (The file is staged unpatched as ${mediaId}.)`,
      `${e.next} Retry the edit with media_apply_patch on media_id "${mediaId}".`.trim(),
      { cause: e },
    );
  }
}
