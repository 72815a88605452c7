import * as vscode from 'vscode';
import type { StagedMedia } from '../../core/media/types.ts';

export const STAGED_SCHEME = 'staged';

/** A line of edits is a media and everything derived from it; its id is its first version's. */
export function lineOf(media: StagedMedia): string {
  return media.ancestors[0] ?? media.id;
}

/**
 * `staged:/<display path>?<media id>`: exactly that media's bytes, never another version of its
 * line (media bytes never change, so neither does the document). `generation` > 0 names the same
 * bytes afresh, for when the person saved an edit through an earlier document of this media (that
 * document then held the edit's text, and VS Code may still have it loaded).
 */
export function stagedUri(media: StagedMedia, generation = 0): vscode.Uri {
  return vscode.Uri.from({
    scheme: STAGED_SCHEME,
    path: `/${media.path.display}`,
    query: generation > 0 ? `${media.id}.${generation}` : media.id,
  });
}

/**
 * The bytes a media was staged over (its base): the left side of a new file's diff (empty, or after a
 * save of its line, what was written), and of a write or delete in a set's changes editor.
 */
export function emptyBaseUri(media: StagedMedia): vscode.Uri {
  return vscode.Uri.from({ scheme: STAGED_SCHEME, path: `/${media.path.display}`, query: `${media.id}.base` });
}

/** What a staged URI names: a media id and whether it is the base side; undefined for anything else. */
export function parseStagedUri(uri: vscode.Uri): { readonly mediaId: string; readonly base: boolean } | undefined {
  const match = /^(m\d+)(?:\.(base|\d+))?$/.exec(uri.query);
  if (uri.scheme !== STAGED_SCHEME || !match) return undefined;
  return { mediaId: match[1]!, base: match[2] === 'base' };
}
