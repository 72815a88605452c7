import * as vscode from 'vscode';
import type { MediaStore } from '../../core/media/store.ts';
import type { StagedMedia } from '../../core/media/types.ts';

export const STAGED_SCHEME = 'staged';

/**
 * A line of edits is a media and everything derived from it; its id is its first version's. A staged
 * document shows the line's latest unsaved version, so a patch or a person's edit updates it in place.
 */
export function lineOf(media: StagedMedia): string {
  return media.ancestors[0] ?? media.id;
}

/** `staged:/<display path>?<line id>`, readable in tab titles. */
export function stagedUri(media: StagedMedia): vscode.Uri {
  return vscode.Uri.from({ scheme: STAGED_SCHEME, path: `/${media.path.display}`, query: lineOf(media) });
}

/** The empty left side of a new file's diff. */
export function emptyBaseUri(media: StagedMedia): vscode.Uri {
  return vscode.Uri.from({ scheme: STAGED_SCHEME, path: `/${media.path.display}`, query: `${lineOf(media)}.base` });
}

/** The latest version of a line: its newest unsaved head, else (after a save) its newest media. */
export function headOfLine(store: MediaStore, line: string): StagedMedia | undefined {
  const inLine = (m: StagedMedia): boolean => lineOf(m) === line;
  const heads = store.heads().filter(inLine);
  const pool = heads.length ? heads : store.all().filter(inLine);
  return pool.reduce<StagedMedia | undefined>((newest, m) => (!newest || m.createdAt >= newest.createdAt ? m : newest), undefined);
}
