import { SandboxError, invalidInput } from '../errors.ts';
import { encodeText } from '../text/encoding.ts';
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
    throw invalidInput(`Media ${parent.id} stages the deletion of "${parent.path.display}", so there is nothing to patch.`, `Stage the file again with stage_file to edit it instead of deleting it.`);
  }
  const subject = { mediaId: parent.id, display: parent.path.display, maxChars: store.options.budgetBytes(), ...(parent.taint ? { protectedFrom: parent.taint.from } : {}) };
  if (parent.encoding === 'binary') {
    throw new SandboxError('E_SANDBOX_BINARY', `Media ${parent.id} ("${parent.path.display}") holds binary bytes, so it cannot be patched as text.`, `Stage a text file, or replace the whole file with stage_file and content.`);
  }
  const text = textOf(parent.bytes, parent.encoding);
  const outcome: PatchOutcome = 'unified' in patch
    ? applyUnified(text, patch.unified, subject)
    : applyEdits(text, isEditList(patch) ? patch : [patch], parent.eol, subject);
  if (outcome.text === text) {
    throw invalidInput(`The patch leaves ${parent.id} ("${parent.path.display}") exactly as it was (the replacement equals the text it replaces once the file's line endings are applied), so no media was made.`, `Give the change you want in replace.`);
  }
  const child = store.derive(parent.id, encodeText(outcome.text, parent.encoding, parent.path.display), outcome.text);
  return { parent, child, counts: lineCounts(text, outcome.text), normalizedEdits: outcome.normalizedEdits };
}

function isEditList(patch: FindReplace | readonly FindReplace[]): patch is readonly FindReplace[] {
  return Array.isArray(patch);
}
