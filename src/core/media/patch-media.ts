import { SandboxError, invalidInput } from '../errors.ts';
import { bomLength, encodeText, isUtf8Family } from '../text/encoding.ts';
import { spliceUtf8 } from './patch-utf8.ts';
import { lineCounts, type LineCounts } from '../text/line-counts.ts';
import { textOf } from './lineage.ts';
import { applyEdits, applyUnified, type FindReplace, type PatchOutcome } from './patch.ts';
import type { MediaStore } from './store.ts';
import type { StagedMedia } from './types.ts';

/** What media_apply_patch (and stage_file with `patch`) applies: one edit, a list in order, or a unified diff. */
export type MediaPatch = FindReplace | readonly FindReplace[] | { readonly unified: string };

export interface PatchedMedia {
  readonly parent: StagedMedia;
  readonly child: StagedMedia;
  readonly counts: LineCounts;
  /** 1-based edits that matched only with line endings normalized. */
  readonly normalizedEdits: readonly number[];
}

/** Applies `patch` to media `parentId` in memory and stages the result as a new media of the same path. */
export function patchMedia(store: MediaStore, parentId: string, patch: MediaPatch): PatchedMedia {
  const parent = store.get(parentId);
  if (parent.change.kind === 'delete') {
    throw invalidInput(
      `Media ${parent.id} stages the deletion of "${parent.path.display}", so there is nothing to patch.`,
      `Stage the file again with stage_file to edit it instead of deleting it.`,
    );
  }
  const subject = {
    mediaId: parent.id,
    display: parent.path.display,
    maxChars: store.options.budgetBytes(),
    ...(store.options.budgetSetting ? { budgetSetting: store.options.budgetSetting } : {}),
    ...(parent.taint ? { protectedFrom: parent.taint.from } : {}),
  };
  if (parent.encoding === 'binary') {
    throw new SandboxError(
      'E_SANDBOX_BINARY',
      `Media ${parent.id} ("${parent.path.display}") holds binary bytes, so it cannot be patched as text.`,
      `Stage a text file, or replace the whole file with stage_file and content.`,
    );
  }
  // Find/replace in UTF-8 is done on the bytes, which are never decoded; where that cannot decide, the text below does.
  const spliced =
    !('unified' in patch) && isUtf8Family(parent.encoding)
      ? spliceUtf8(parent.bytes, bomLength(parent.encoding), editsOf(patch), parent, subject.maxChars)
      : undefined;
  if (spliced)
    return {
      parent,
      child: store.derive(parent.id, spliced.bytes, { counts: spliced.counts, stats: spliced.stats }),
      counts: spliced.counts,
      normalizedEdits: [],
    };
  const text = textOf(parent.bytes, parent.encoding);
  const outcome: PatchOutcome =
    'unified' in patch
      ? applyUnified(text, patch.unified, subject)
      : applyEdits(text, editsOf(patch), parent.eol, subject);
  if (outcome.text === text) {
    throw invalidInput(
      `The patch leaves ${parent.id} ("${parent.path.display}") exactly as it was (the replacement equals the text it replaces once the file's line endings are applied), so no media was made.`,
      `Give the change you want in replace.`,
    );
  }
  const counts = lineCounts(text, outcome.text);
  const child = store.derive(parent.id, encodeText(outcome.text, parent.encoding, parent.path.display), {
    text: outcome.text,
    counts,
  });
  return { parent, child, counts, normalizedEdits: outcome.normalizedEdits };
}

function editsOf(patch: FindReplace | readonly FindReplace[]): readonly FindReplace[] {
  return isEditList(patch) ? patch : [patch];
}

function isEditList(patch: FindReplace | readonly FindReplace[]): patch is readonly FindReplace[] {
  return Array.isArray(patch);
}
