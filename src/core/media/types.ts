import type { ModelPath } from '../paths.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import type { LineCounts } from '../text/line-counts.ts';
import type { ReadProtection, ReadTaint } from '../gate.ts';

/* What the media store holds and tells: staged versions of files, their lineage and changes. */

/** What disk held when a line of edits began. */
export interface MediaBase {
  /** Whether the file existed (false: a new file). */
  readonly existed: boolean;
  /** SHA-256 (hex) of the disk bytes; undefined when the file did not exist (a new file). */
  readonly hash: string | undefined;
  /** The disk bytes (empty for a new file): the left side of "+/− against disk". */
  readonly bytes: Uint8Array;
}

/** `person`: the user edited a staged document; `undo`: an undo of a save put the previous bytes back. */
export type MediaOrigin = 'model' | 'person' | 'undo';

/**
 * Security: a media staged from a path the policy protects (ask or deny for reading) carries its
 * origin, so its bytes stay protected wherever they go: a call that could reveal them (a patch, a
 * save elsewhere) is refused under `deny` and asked every time under `ask`, and no error quotes them.
 */
export type MediaTaint = ReadTaint;

/** The identity of a file across media: folder and relative path. */
export function pathKey(path: ModelPath): string {
  return `${path.root.name}\u0000${path.rel}`;
}

/** The taint of bytes read from `from` (as displayed), when a read rule protects it; undefined when none does. */
export function mediaTaint(from: string, protection: ReadProtection | undefined): MediaTaint | undefined {
  return protection === undefined ? undefined : { from, ...protection };
}

/** Why saving a media would conflict: `saved`, another media was saved to its file; `disk-changed`, the host saw the file change. */
export type StaleReason = { readonly kind: 'saved'; readonly by: string } | { readonly kind: 'disk-changed' };

export interface SavedRecord {
  readonly at: number;
  readonly path: ModelPath;
  readonly hash: string;
}

/**
 * What saving a media does. `write`: its bytes go to `path`. `delete`: `path` is removed (the media
 * holds no bytes; its base is the disk it was staged against, kept for undo). `move`: the file at
 * `from` goes to `path` holding the media's bytes (its base is `from`'s disk; the destination must
 * not exist unless `replace`). Folders are never deleted or moved: only files are staged.
 */
export type MediaChangeKind =
  | { readonly kind: 'write' }
  | { readonly kind: 'delete' }
  | { readonly kind: 'move'; readonly from: ModelPath; readonly replace: boolean };

export type MediaKind = MediaChangeKind['kind'];

/** The file whose disk a media was staged against: `from` for a move, else `path`. */
export function sourceOf(media: Pick<StagedMedia, 'path' | 'change'>): ModelPath {
  return media.change.kind === 'move' ? media.change.from : media.path;
}

/**
 * One path a call will write, as its plan declares it (CallTargets.writes): hosts render the
 * confirmation and diff links from this, never from the tool's name. A move is one entry (`from`
 * set) although it writes both paths.
 */
export interface PlannedWrite extends LineCounts {
  readonly kind: MediaKind;
  /** Where the bytes go (the deleted file for a delete, the destination for a move). */
  readonly path: ModelPath;
  /** A move's source. */
  readonly from?: ModelPath;
  /** A move onto an existing file the person agreed to replace. */
  readonly replace?: boolean;
  /** The staged media it writes. */
  readonly mediaId: string;
}

/** One staged version of a file. Its bytes never change; a patch or an edit makes a new media. */
export interface StagedMedia {
  readonly id: string;
  /** The file it was staged for (a move's destination). */
  readonly path: ModelPath;
  /** Write (the default), delete or move; derived versions keep their parent's. */
  readonly change: MediaChangeKind;
  /** The file's bytes as they will be written (encoding, BOM and line endings included); empty for a delete. */
  readonly bytes: Uint8Array;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly lines: number;
  /** The disk it was staged from; after it (or an ancestor) is saved, what was written. */
  readonly base: MediaBase;
  /** True when the file did not exist at staging. */
  readonly isNew: boolean;
  readonly parentId: string | undefined;
  /** Every earlier version it derives from, oldest first. */
  readonly ancestors: readonly string[];
  readonly createdAt: number;
  /** `person`: the user edited the staged document in the editor. */
  readonly origin: MediaOrigin;
  readonly saved: SavedRecord | undefined;
  readonly stale: StaleReason | undefined;
  /** Set when it was staged from a protected path (and for everything derived from it). */
  readonly taint: MediaTaint | undefined;
}

/** The user's change inside a line of edits, against the model's version it started from. */
export interface PersonChange extends LineCounts {
  /** The person-made media. */
  readonly mediaId: string;
  /** The model-made media it was edited from. */
  readonly against: string;
}

/** A person's change as a tool's result shows it to the model (list_media, save_media). */
export interface UserEdit {
  readonly media_id: string;
  readonly against: string;
  readonly added: number;
  readonly removed: number;
}

/** `{ user_edit }` for a result, where the person changed the media; nothing otherwise. */
export function userEditOf(person: PersonChange | undefined): { readonly user_edit?: UserEdit } {
  return person
    ? { user_edit: { media_id: person.mediaId, against: person.against, added: person.added, removed: person.removed } }
    : {};
}

export type MediaChange =
  /** A media was staged, patched, or edited by the person (`media.origin`). */
  | { readonly kind: 'added'; readonly media: StagedMedia }
  | {
      readonly kind: 'saved';
      readonly media: StagedMedia;
      readonly stale: readonly string[];
      readonly rebased: readonly string[];
    }
  | { readonly kind: 'discarded'; readonly ids: readonly string[] }
  /** Media dropped from memory to stay within the budget (they were saved or superseded by a save). */
  | { readonly kind: 'evicted'; readonly ids: readonly string[] }
  /** The stale state of these media changed (a host noticed the disk change, or change back). */
  | { readonly kind: 'stale'; readonly ids: readonly string[] }
  | { readonly kind: 'cleared' };

/** What a save did to the other media of the file. */
export interface SaveEffects {
  /** Unsaved media of the same file that now conflict with disk (earlier versions of the saved one excepted). */
  readonly stale: readonly string[];
  /** Media derived from the saved one: their base is now what was written, so they stay saveable. */
  readonly rebased: readonly string[];
}
