import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock } from '../ports.ts';
import { Emitter, type Disposable, type Listener } from '../events.ts';
import { discardSet, headsOf, personChangeIn, unsavedOf } from './lineage.ts';
import { HeldBytes } from './held-bytes.ts';
import { MediaRecord } from './record.ts';
import type { FileEncoding, TextEncoding } from '../text/encoding.ts';
import type { LineStats } from '../text/eol.ts';
import { formatBytes } from '../text/format.ts';
import type { LineCounts } from '../text/line-counts.ts';
import { DiskBase, byBase, hashKept, heldCopyOf, holdsBase } from './hash.ts';
import { stagedContent } from './staged-content.ts';
import {
  pathKey,
  sourceOf,
  type MediaBase,
  type MediaChangeKind,
  type MediaChange,
  type MediaOrigin,
  type MediaTaint,
  type PersonChange,
  type SaveEffects,
  type StagedMedia,
} from './types.ts';

export interface MediaStoreOptions {
  readonly clock: Clock;
  /** Memory budget for all media and the disk snapshots they were staged from, in bytes. */
  readonly budgetBytes: () => number;
  /** Where the person raises it, as the host names it (default: VS Code's setting). */
  readonly budgetSetting?: string;
  /** The encoding the user's settings give a file (VS Code's files.encoding), if any. */
  readonly encodingOf?: (path: ModelPath) => TextEncoding | undefined;
}

type Tombstone = 'discarded' | 'evicted';

const EMPTY = new Uint8Array(0);
/** The base of a file that did not exist. */
const NO_FILE: MediaBase = { existed: false, hash: undefined, bytes: EMPTY };

/**
 * In-memory staged versions of files ("media"). Each patch or person edit makes a new media, so
 * every id stays valid until it is discarded; nothing here touches disk. Hosts observe it through
 * `onDidChange` (the review panel) and serve a media's bytes as virtual documents.
 */
export class MediaStore {
  readonly options: MediaStoreOptions;
  private readonly entries = new Map<string, MediaRecord>();
  private readonly tombstones = new Map<string, Tombstone>();
  private readonly changed = new Emitter<MediaChange>();
  private counter = 0;

  constructor(options: MediaStoreOptions) {
    this.options = options;
  }

  /** Fires after every change, for views to refresh. A listener that throws does not affect the store. */
  onDidChange(listener: Listener<MediaChange>): Disposable {
    return this.changed.event(listener);
  }

  /** The path a media was staged for, for the gate (pure). */
  target(mediaId: string): ModelPath {
    return this.get(mediaId).path;
  }

  /** The media with this id; a narrated E_SANDBOX_NOT_FOUND when there is none. */
  get(mediaId: string): StagedMedia {
    return this.entry(mediaId);
  }

  /** The media with this id, or undefined. */
  find(mediaId: string): StagedMedia | undefined {
    return this.entries.get(mediaId);
  }

  /** Every media held, oldest first (saved ones and earlier versions included). */
  all(): StagedMedia[] {
    return [...this.entries.values()];
  }

  /** Media of one file, oldest first. */
  ofPath(path: ModelPath): StagedMedia[] {
    const key = pathKey(path);
    return this.all().filter((m) => pathKey(m.path) === key);
  }

  /** Media not saved and not an earlier version of a saved one, oldest first. */
  unsaved(): StagedMedia[] {
    return unsavedOf(this.all());
  }

  /** The unsaved media nothing was derived from yet: the latest version of each line of edits, oldest first. */
  heads(): StagedMedia[] {
    return headsOf(this.all());
  }

  /** `+added −removed` lines of a media against the disk it was staged from (0/0 for binary). */
  changes(mediaId: string): LineCounts {
    return this.entry(mediaId).changes();
  }

  /**
   * The person's edit in this media's line (the media itself or its nearest person-made ancestor),
   * counted against the model-made version it was edited from; undefined when the person made none.
   */
  personChange(mediaId: string): PersonChange | undefined {
    const m = this.entry(mediaId);
    return personChangeIn([...m.ancestors, m.id].map((id) => this.entries.get(id)));
  }

  /** Bytes held in memory: media and the distinct disk snapshots they refer to. */
  usedBytes(): number {
    return new HeldBytes(this.entries.values()).total;
  }

  /**
   * Makes room for `bytes` more (evicting media that were saved or superseded by a save, oldest
   * first), or throws a narrated E_SANDBOX_TOO_LARGE. Call before reading a file to stage it.
   */
  ensureRoom(display: string, bytes: number): void {
    this.makeRoom(display, bytes, new HeldBytes(this.entries.values()));
  }

  private makeRoom(display: string, bytes: number, held: HeldBytes): void {
    const budget = this.options.budgetBytes();
    if (bytes > budget) {
      throw new SandboxError(
        'E_SANDBOX_TOO_LARGE',
        `Staging "${display}" needs ${formatBytes(bytes)}, more than the whole staged-media budget of ${formatBytes(budget)}; nothing was staged. Edit a smaller file, or ask the user to raise the staged-media budget (${this.options.budgetSetting ?? 'workspaceTools.media.memoryBudgetMB'}).`,
        '',
      );
    }
    if (held.total + bytes <= budget) return;
    const used = this.evictSaved(budget - bytes, held);
    if (used + bytes > budget) {
      const unsaved = this.heads().length;
      throw new SandboxError(
        'E_SANDBOX_TOO_LARGE',
        `Staging "${display}" needs ${formatBytes(bytes)}, but staged media already hold ${formatBytes(used)} of the ${formatBytes(budget)} budget (${unsaved} unsaved; list_media shows them); nothing was staged.`,
        `Save the changes you want with save_media (the user can discard the rest), or ask the user to raise the staged-media budget (${this.options.budgetSetting ?? 'workspaceTools.media.memoryBudgetMB'}).`,
      );
    }
  }

  /**
   * A new line of edits for `path`. `read`: the file's bytes now, or undefined when it does not
   * exist. `content`: the full new text (written in the file's encoding and line endings), or bytes
   * taken as they are; omitted, the media is those bytes. `change`: a delete (`path` staged
   * against `read`, no content) or a move (`read` is the source's, `path` the destination).
   */
  stage(
    path: ModelPath,
    read: Uint8Array | undefined,
    content?: string | Uint8Array,
    taint?: MediaTaint,
    origin: MediaOrigin = 'model',
    change?: MediaChangeKind,
  ): StagedMedia {
    const disk =
      read === undefined
        ? undefined
        : heldCopyOf(this.entries.values(), change?.kind === 'move' ? change.from : path, read);
    const base: MediaBase = disk === undefined ? NO_FILE : new DiskBase(disk);
    const { bytes, encoding, text } = stagedContent(
      path,
      disk,
      change?.kind === 'delete' ? EMPTY : content,
      this.options.encodingOf?.(path),
    );
    return this.add({ path, bytes, encoding, text, base, parent: undefined, origin, taint, change });
  }

  /**
   * A new version made by the model (media_apply_patch) from `parentId`, with what the patch knows
   * of it already, so nothing is decoded or counted twice: the `text` the bytes encode, the `+added
   * −removed` lines from the parent's text (`counts`), and its lines and line endings (`stats`).
   */
  derive(
    parentId: string,
    bytes: Uint8Array,
    known: { readonly text?: string; readonly counts?: LineCounts; readonly stats?: LineStats | undefined } = {},
  ): StagedMedia {
    const parent = this.entry(parentId);
    // Against the parent is against the base when the parent holds its base's bytes (a file just staged).
    const counts = known.counts && parent.bytes === parent.base.bytes ? known.counts : undefined;
    return this.add({
      path: parent.path,
      bytes,
      encoding: parent.encoding,
      text: known.text,
      counts,
      stats: known.stats,
      base: parent.base,
      parent,
      origin: 'model',
      taint: undefined,
    });
  }

  /**
   * The person edited a staged document (saved it in the editor): a new version from `parentId`.
   * Identical bytes make no new version; the parent is returned.
   */
  stagePersonEdit(parentId: string, bytes: Uint8Array): StagedMedia {
    const parent = this.entry(parentId);
    if (Buffer.from(parent.bytes.buffer, parent.bytes.byteOffset, parent.bytes.byteLength).equals(bytes)) return parent;
    return this.add({
      path: parent.path,
      bytes,
      encoding: parent.encoding,
      base: parent.base,
      parent,
      origin: 'person',
      taint: undefined,
    });
  }

  /**
   * Records that `mediaId` was written to `target`. Media derived from it are rebased onto what
   * was written; the other unsaved media of that file become stale.
   */
  markSaved(mediaId: string, target: ModelPath, written: Uint8Array): SaveEffects {
    const media = this.entry(mediaId);
    const hash = hashKept(written);
    const key = pathKey(target);
    const samePath = key === pathKey(media.path);
    const newBase: MediaBase = { existed: true, hash, bytes: written };
    media.saved = { at: this.options.clock.now(), path: target, hash };
    if (samePath) {
      media.base = newBase;
      media.stale = undefined;
    }
    const stale: string[] = [];
    const rebased: string[] = [];
    const holdsWritten = byBase((base) => holdsBase(written, base));
    for (const other of this.entries.values()) {
      if (other === media || pathKey(other.path) !== key) continue;
      if (samePath && other.ancestors.includes(media.id)) {
        other.base = newBase;
        other.stale = undefined;
        rebased.push(other.id);
      } else if (holdsWritten(other.base)) {
        // The same bytes as written: held once from now on, and compared once by the next save.
        other.base = newBase;
      } else {
        other.stale = { kind: 'saved', by: media.id };
        // Earlier versions of the saved media are superseded by it, not left behind: not reported.
        if (!other.saved && !media.ancestors.includes(other.id)) stale.push(other.id);
      }
    }
    this.changed.fire({ kind: 'saved', media, stale, rebased });
    return { stale, rebased };
  }

  /**
   * For a host watching the disk: the file at `path` now holds `disk` (undefined: deleted). Media
   * staged from other bytes are marked stale (`disk-changed`), ones that match again are cleared.
   * Returns the ids of the media of that file that would now conflict.
   */
  noteDisk(path: ModelPath, disk: Uint8Array | undefined): string[] {
    const conflicting: string[] = [];
    const flipped: string[] = [];
    const holdsDisk = byBase((base) => holdsBase(disk, base));
    for (const m of this.entries.values()) {
      if (pathKey(sourceOf(m)) !== pathKey(path) || m.saved) continue;
      const conflicts = !holdsDisk(m.base);
      if (conflicts) {
        conflicting.push(m.id);
        if (m.stale === undefined) {
          m.stale = { kind: 'disk-changed' };
          flipped.push(m.id);
        }
      } else if (m.stale !== undefined) {
        m.stale = undefined;
        flipped.push(m.id);
      }
    }
    if (flipped.length) this.changed.fire({ kind: 'stale', ids: flipped });
    return conflicting;
  }

  /**
   * Discards a media with everything derived from it, and the unsaved earlier versions that lead
   * only to it. Returns the discarded ids; their ids then fail with a narrated "discarded".
   */
  discard(mediaId: string): string[] {
    const ids = discardSet(this.entries, this.entry(mediaId));
    this.remove(ids, 'discarded');
    this.changed.fire({ kind: 'discarded', ids });
    return ids;
  }

  /** Discards every unsaved line of edits. Returns the discarded ids. */
  discardAll(): string[] {
    const ids: string[] = [];
    for (const head of this.heads()) if (this.entries.has(head.id)) ids.push(...this.discard(head.id));
    return ids;
  }

  /** Drops every media (the session ends). */
  clear(): void {
    const had = this.entries.size > 0;
    this.entries.clear();
    this.tombstones.clear();
    if (had) this.changed.fire({ kind: 'cleared' });
  }

  dispose(): void {
    this.clear();
    this.changed.dispose();
  }

  private add(init: {
    path: ModelPath;
    bytes: Uint8Array;
    encoding: FileEncoding;
    text?: string | undefined;
    counts?: LineCounts | undefined;
    stats?: LineStats | undefined;
    base: MediaBase;
    parent: MediaRecord | undefined;
    origin: MediaOrigin;
    taint: MediaTaint | undefined;
    change?: MediaChangeKind | undefined;
  }): StagedMedia {
    const held = new HeldBytes(this.entries.values());
    const need =
      (held.has(init.bytes) ? 0 : init.bytes.byteLength) +
      (held.has(init.base.bytes) || init.base.bytes === init.bytes ? 0 : init.base.bytes.byteLength);
    this.makeRoom(init.path.display, need, held);
    const record = new MediaRecord({ ...init, id: `m${++this.counter}`, createdAt: this.options.clock.now() });
    this.entries.set(record.id, record);
    this.changed.fire({ kind: 'added', media: record });
    return record;
  }

  private entry(mediaId: string): MediaRecord {
    const found = this.entries.get(mediaId);
    if (found) return found;
    switch (this.tombstones.get(mediaId)) {
      case 'discarded':
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `Media "${mediaId}" was discarded by the user, so it cannot be patched or saved.`,
          `Call list_media to see what is still staged, or stage the file again.`,
        );
      case 'evicted':
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `Media "${mediaId}" was already saved and has been dropped from memory to stay within the staged-media budget.`,
          `Stage the file again with stage_file to edit it further.`,
        );
      case undefined:
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `No staged media has id "${mediaId}".`,
          `Call list_media to see the unsaved ones, or stage the file again.`,
        );
    }
  }

  private remove(ids: readonly string[], why: Tombstone): void {
    for (const id of ids) {
      this.entries.delete(id);
      this.tombstones.set(id, why);
    }
  }

  /**
   * Drops saved media and earlier versions of saved media, oldest first, until at most `target`
   * bytes are held; returns the bytes then held (`held` is kept up to date as it goes).
   */
  private evictSaved(target: number, held: HeldBytes): number {
    const keep = new Set(this.unsaved().map((m) => m.id));
    const evicted: string[] = [];
    for (const m of this.all()) {
      if (held.total <= target) break;
      if (keep.has(m.id)) continue;
      this.entries.delete(m.id);
      this.tombstones.set(m.id, 'evicted');
      evicted.push(m.id);
      held.release(m);
    }
    if (evicted.length) this.changed.fire({ kind: 'evicted', ids: evicted });
    return held.total;
  }
}
