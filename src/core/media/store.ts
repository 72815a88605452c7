import { BugError, SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock } from '../ports.ts';
import { Emitter, type Disposable, type Listener } from './events.ts';
import { decodeAs, decodeFile, encodeText, imposed, type FileEncoding, type TextEncoding } from '../text/encoding.ts';
import { countLines, detectEol, withEol, type Eol } from '../text/eol.ts';
import { formatBytes } from '../text/format.ts';
import { lineCounts, type LineCounts } from '../text/line-counts.ts';
import { hashBytes } from './hash.ts';
import { checkWriteRoots, type WriteRoots } from './write-roots.ts';

export interface MediaStoreOptions {
  readonly clock: Clock;
  /** Memory budget for all media and the disk snapshots they were staged from, in bytes. */
  readonly budgetBytes: () => number;
  /** Where save_media may write, read on every save. Absent or undefined: anywhere in the workspace folders. */
  readonly writeRoots?: () => WriteRoots;
  /** The encoding the user's settings give a file (VS Code's files.encoding), if any. */
  readonly encodingOf?: (path: ModelPath) => TextEncoding | undefined;
}

/** What disk held when a line of edits began. */
export interface MediaBase {
  /** SHA-256 (hex) of the disk bytes; undefined when the file did not exist (a new file). */
  readonly hash: string | undefined;
  /** The disk bytes (empty for a new file): the left side of "+/− against disk". */
  readonly bytes: Uint8Array;
}

/** `person`: the user edited a staged document; `undo`: an undo of a save put the previous bytes back. */
export type MediaOrigin = 'model' | 'person' | 'undo';

/**
 * Security: a media staged from a path the policy protects (ask or deny for reading) carries its
 * origin, so its bytes stay protected wherever they go: saving it asks again naming both paths, and
 * no error quotes its content.
 */
export interface MediaTaint {
  /** The protected path it was staged from, as displayed. */
  readonly from: string;
  /** The rule that protects it. */
  readonly rule: string;
}

/** Why saving a media would conflict: `saved`, another media was saved to its file; `disk-changed`, the host saw the file change. */
export type StaleReason = { readonly kind: 'saved'; readonly by: string } | { readonly kind: 'disk-changed' };

export interface SavedRecord {
  readonly at: number;
  readonly path: ModelPath;
  readonly hash: string;
}

/** One staged version of a file. Its bytes never change; a patch or an edit makes a new media. */
export interface StagedMedia {
  readonly id: string;
  /** The file it was staged for. */
  readonly path: ModelPath;
  /** The file's bytes as they will be written (encoding, BOM and line endings included). */
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

export type MediaChange =
  /** A media was staged, patched, or edited by the person (`media.origin`). */
  | { readonly kind: 'added'; readonly media: StagedMedia }
  | { readonly kind: 'saved'; readonly media: StagedMedia; readonly stale: readonly string[]; readonly rebased: readonly string[] }
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

/** A durable reference to bytes on disk, verifiable by hash. */
export interface ReaderDescriptor {
  readonly kind: 'workspace-file';
  readonly folder: string;
  readonly path: string;
  readonly sha256: string;
}

/** Read access to one media's bytes (e.g. for a `staged:` FileSystemProvider). */
export interface MediaReader {
  readonly mediaId: string;
  readonly path: ModelPath;
  readonly size: number;
  bytes(): Uint8Array;
  /** The decoded text; E_SANDBOX_BINARY for a binary media. */
  text(): string;
  /**
   * A descriptor that outlives this session. Only a saved media has one: an unsaved media exists
   * only in memory, so this throws E_READER_NOT_DESCRIBABLE.
   */
  toDescriptor(): ReaderDescriptor;
}

type Tombstone = 'discarded' | 'evicted';

class MediaRecord implements StagedMedia {
  readonly id: string;
  readonly path: ModelPath;
  readonly bytes: Uint8Array;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly lines: number;
  base: MediaBase;
  readonly parentId: string | undefined;
  readonly ancestors: readonly string[];
  readonly createdAt: number;
  readonly origin: MediaOrigin;
  readonly taint: MediaTaint | undefined;
  saved: SavedRecord | undefined = undefined;
  stale: StaleReason | undefined;
  /** Line counts against `base`, computed once per base. */
  counts: { readonly base: MediaBase; readonly counts: LineCounts } | undefined = undefined;

  constructor(init: { id: string; path: ModelPath; bytes: Uint8Array; encoding: FileEncoding; text?: string | undefined; base: MediaBase; parent: MediaRecord | undefined; createdAt: number; origin: MediaOrigin; taint: MediaTaint | undefined }) {
    this.id = init.id;
    this.path = init.path;
    this.bytes = init.bytes;
    this.base = init.base;
    this.parentId = init.parent?.id;
    this.ancestors = init.parent ? [...init.parent.ancestors, init.parent.id] : [];
    this.createdAt = init.createdAt;
    this.origin = init.origin;
    this.stale = init.parent?.stale;
    this.taint = init.taint ?? init.parent?.taint;
    // A media keeps the encoding it was staged in: a patch that leaves only ASCII must not turn a windows1252 file into UTF-8.
    this.encoding = init.encoding;
    const text = init.text ?? textOf(init.bytes, init.encoding);
    this.eol = detectEol(text);
    this.lines = countLines(text);
  }

  get isNew(): boolean { return this.base.hash === undefined; }
}

const EMPTY = new Uint8Array(0);

/** The identity of a file across media: folder and relative path. */
export function pathKey(path: ModelPath): string {
  return `${path.root.name}\u0000${path.rel}`;
}

/** The text of a media's bytes ('' for binary). */
export function textOf(bytes: Uint8Array, encoding: FileEncoding): string {
  return encoding === 'binary' ? '' : decodeAs(bytes, encoding);
}

/** The text of what disk held, when it holds text in the media's encoding (a new text may replace a binary file). */
export function diskText(bytes: Uint8Array, media: StagedMedia): string | undefined {
  const decoded = decodeFile(bytes, media.path.rel, media.encoding);
  return decoded?.encoding === media.encoding ? decoded.text : undefined;
}

/**
 * In-memory staged versions of files ("media"). Each patch or person edit makes a new media, so
 * every id stays valid until it is discarded; nothing here touches disk. Hosts observe it through
 * `onDidChange` (the review panel) and serve `reader(id)` bytes as virtual documents.
 */
export class MediaStore {
  readonly options: MediaStoreOptions;
  private readonly entries = new Map<string, MediaRecord>();
  private readonly tombstones = new Map<string, Tombstone>();
  private readonly changed = new Emitter<MediaChange>();
  /** The save in progress per file, so two saves of one file never interleave their check and write. */
  private readonly saving = new Map<string, Promise<unknown>>();
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
    const savedLineage = new Set<string>();
    for (const m of this.entries.values()) if (m.saved) m.ancestors.forEach((id) => savedLineage.add(id));
    return this.all().filter((m) => !m.saved && !savedLineage.has(m.id));
  }

  /** The unsaved media nothing was derived from yet: the latest version of each line of edits, oldest first. */
  heads(): StagedMedia[] {
    const parents = new Set<string>();
    for (const m of this.entries.values()) if (m.parentId !== undefined) parents.add(m.parentId);
    return this.unsaved().filter((m) => !parents.has(m.id));
  }

  /** `+added −removed` lines of a media against the disk it was staged from (0/0 for binary). */
  changes(mediaId: string): LineCounts {
    const m = this.entry(mediaId);
    if (m.counts?.base !== m.base) m.counts = { base: m.base, counts: m.encoding === 'binary' ? { added: 0, removed: 0 } : lineCounts(diskText(m.base.bytes, m) ?? '', textOf(m.bytes, m.encoding)) };
    return m.counts.counts;
  }

  /**
   * The person's edit in this media's line (the media itself or its nearest person-made ancestor),
   * counted against the model-made version it was edited from; undefined when the person made none.
   */
  personChange(mediaId: string): PersonChange | undefined {
    const m = this.entry(mediaId);
    const lineage = [...m.ancestors, m.id].map((id) => this.entries.get(id));
    for (let i = lineage.length - 1; i >= 0; i--) {
      const person = lineage[i];
      if (person?.origin !== 'person') continue;
      for (let j = i - 1; j >= 0; j--) {
        const model = lineage[j];
        if (model?.origin === 'model') return { mediaId: person.id, against: model.id, ...lineCounts(textOf(model.bytes, model.encoding), textOf(person.bytes, person.encoding)) };
      }
      return undefined;
    }
    return undefined;
  }

  /** Bytes held in memory: media and the distinct disk snapshots they refer to. */
  usedBytes(): number {
    const held = new Set<Uint8Array>();
    for (const m of this.entries.values()) { held.add(m.bytes); held.add(m.base.bytes); }
    let total = 0;
    for (const b of held) total += b.byteLength;
    return total;
  }

  /**
   * Makes room for `bytes` more (evicting media that were saved or superseded by a save, oldest
   * first), or throws a narrated E_SANDBOX_TOO_LARGE. Call before reading a file to stage it.
   */
  ensureRoom(display: string, bytes: number): void {
    const budget = this.options.budgetBytes();
    if (bytes > budget) {
      throw new SandboxError('E_SANDBOX_TOO_LARGE', `Staging "${display}" needs ${formatBytes(bytes)}, more than the whole staged-media budget of ${formatBytes(budget)}; nothing was staged. Edit a smaller file, or ask the user to raise the staged-media budget (workspaceTools.media.memoryBudgetMB).`);
    }
    if (this.usedBytes() + bytes <= budget) return;
    this.evictSaved(budget - bytes);
    const used = this.usedBytes();
    if (used + bytes > budget) {
      const unsaved = this.heads().length;
      throw new SandboxError('E_SANDBOX_TOO_LARGE', `Staging "${display}" needs ${formatBytes(bytes)}, but staged media already hold ${formatBytes(used)} of the ${formatBytes(budget)} budget (${unsaved} unsaved; list_media shows them); nothing was staged. Save the changes you want with save_media (the user can discard the rest), or ask the user to raise the staged-media budget (workspaceTools.media.memoryBudgetMB).`);
    }
  }

  /**
   * A new line of edits for `path`. `disk`: the file's bytes now, or undefined when it does not
   * exist. `content`: the full new text (written in the file's encoding and line endings), or bytes
   * taken as they are; omitted, the media is the disk bytes.
   */
  stage(path: ModelPath, disk: Uint8Array | undefined, content?: string | Uint8Array, taint?: MediaTaint, origin: MediaOrigin = 'model'): StagedMedia {
    const base: MediaBase = disk === undefined ? { hash: undefined, bytes: EMPTY } : { hash: hashBytes(disk), bytes: disk };
    const configured = this.options.encodingOf?.(path);
    const fileName = path.rel.slice(path.rel.lastIndexOf('/') + 1);
    let bytes: Uint8Array;
    let encoding: FileEncoding;
    let text: string | undefined;
    if (content === undefined || content instanceof Uint8Array) {
      bytes = content ?? disk ?? fail('MediaStore.stage: no content for a file that does not exist');
      const decoded = decodeFile(bytes, fileName, configured);
      encoding = decoded?.encoding ?? 'binary';
      text = decoded?.text;
    } else {
      const decoded = disk === undefined ? undefined : decodeFile(disk, fileName, configured);
      encoding = decoded?.encoding ?? imposed(configured) ?? 'utf8';
      bytes = encodeText(decoded ? withEol(content, detectEol(decoded.text)) : content, encoding, path.display);
    }
    return this.add({ path, bytes, encoding, text, base, parent: undefined, origin, taint });
  }

  /** A new version made by the model (media_apply_patch) from `parentId`. */
  derive(parentId: string, bytes: Uint8Array): StagedMedia {
    const parent = this.entry(parentId);
    return this.add({ path: parent.path, bytes, encoding: parent.encoding, base: parent.base, parent, origin: 'model', taint: undefined });
  }

  /**
   * The person edited a staged document (saved it in the editor): a new version from `parentId`.
   * Identical bytes make no new version; the parent is returned.
   */
  stagePersonEdit(parentId: string, bytes: Uint8Array): StagedMedia {
    const parent = this.entry(parentId);
    if (Buffer.from(parent.bytes.buffer, parent.bytes.byteOffset, parent.bytes.byteLength).equals(bytes)) return parent;
    return this.add({ path: parent.path, bytes, encoding: parent.encoding, base: parent.base, parent, origin: 'person', taint: undefined });
  }

  /**
   * Runs `fn` once every earlier `exclusive` call for the same file has settled. Security: without
   * it, two saves could both pass the conflict check and the second would silently drop the first.
   */
  async exclusive<T>(path: ModelPath, fn: () => Promise<T>): Promise<T> {
    const key = pathKey(path);
    const before = this.saving.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(() => undefined, () => undefined);
    this.saving.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.saving.get(key) === settled) this.saving.delete(key);
    }
  }

  /** Refuses a save target outside the host's write roots (narrated E_SANDBOX_REFUSED); pure. */
  checkWriteRoot(target: ModelPath): void {
    checkWriteRoots(target, this.options.writeRoots?.());
  }

  /**
   * Records that `mediaId` was written to `target`. Media derived from it are rebased onto what
   * was written; the other unsaved media of that file become stale.
   */
  markSaved(mediaId: string, target: ModelPath, written: Uint8Array): SaveEffects {
    const media = this.entry(mediaId);
    const hash = hashBytes(written);
    const key = pathKey(target);
    const samePath = key === pathKey(media.path);
    const newBase: MediaBase = { hash, bytes: written };
    media.saved = { at: this.options.clock.now(), path: target, hash };
    if (samePath) { media.base = newBase; media.stale = undefined; }
    const stale: string[] = [];
    const rebased: string[] = [];
    for (const other of this.entries.values()) {
      if (other === media || pathKey(other.path) !== key) continue;
      if (samePath && other.ancestors.includes(media.id)) {
        other.base = newBase;
        other.stale = undefined;
        rebased.push(other.id);
      } else if (other.base.hash !== hash) {
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
    const hash = disk === undefined ? undefined : hashBytes(disk);
    const conflicting: string[] = [];
    const flipped: string[] = [];
    for (const m of this.entries.values()) {
      if (pathKey(m.path) !== pathKey(path) || m.saved) continue;
      const conflicts = m.base.hash !== hash;
      if (conflicts) {
        conflicting.push(m.id);
        if (m.stale === undefined) { m.stale = { kind: 'disk-changed' }; flipped.push(m.id); }
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
    const media = this.entry(mediaId);
    const gone = new Set<string>();
    for (const m of this.entries.values()) if (m.id === media.id || m.ancestors.includes(media.id)) gone.add(m.id);
    for (const ancestorId of [...media.ancestors].reverse()) {
      const ancestor = this.entries.get(ancestorId);
      if (!ancestor || ancestor.saved) break;
      const stillUsed = [...this.entries.values()].some((m) => !gone.has(m.id) && m.ancestors.includes(ancestorId));
      if (stillUsed) break;
      gone.add(ancestorId);
    }
    const ids = [...gone];
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

  /** Read access to a media's bytes. */
  reader(mediaId: string): MediaReader {
    const media = this.entry(mediaId);
    return {
      mediaId: media.id,
      path: media.path,
      size: media.bytes.byteLength,
      bytes: () => media.bytes,
      text: () => {
        if (media.encoding === 'binary') throw new SandboxError('E_SANDBOX_BINARY', `Media "${media.id}" ("${media.path.display}") holds binary bytes, not text. It can be saved as it is, but not read or patched as text.`);
        return textOf(media.bytes, media.encoding);
      },
      toDescriptor: () => {
        const saved = media.saved;
        if (!saved) {
          throw new SandboxError('E_READER_NOT_DESCRIBABLE', `Media "${media.id}" ("${media.path.display}") is staged but not saved, so it has no durable descriptor: it exists only in this session's memory. Save it with save_media first, then refer to the saved file by its path.`);
        }
        return { kind: 'workspace-file', folder: saved.path.root.name, path: saved.path.rel, sha256: saved.hash };
      },
    };
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

  private add(init: { path: ModelPath; bytes: Uint8Array; encoding: FileEncoding; text?: string | undefined; base: MediaBase; parent: MediaRecord | undefined; origin: MediaOrigin; taint: MediaTaint | undefined }): StagedMedia {
    const held = new Set<Uint8Array>();
    for (const m of this.entries.values()) { held.add(m.bytes); held.add(m.base.bytes); }
    const need = (held.has(init.bytes) ? 0 : init.bytes.byteLength) + (held.has(init.base.bytes) || init.base.bytes === init.bytes ? 0 : init.base.bytes.byteLength);
    this.ensureRoom(init.path.display, need);
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
        throw new SandboxError('E_SANDBOX_NOT_FOUND', `Media "${mediaId}" was discarded by the user, so it cannot be patched or saved. Call list_media to see what is still staged, or stage the file again.`);
      case 'evicted':
        throw new SandboxError('E_SANDBOX_NOT_FOUND', `Media "${mediaId}" was already saved and has been dropped from memory to stay within the staged-media budget. Stage the file again with stage_file to edit it further.`);
      case undefined:
        throw new SandboxError('E_SANDBOX_NOT_FOUND', `No staged media has id "${mediaId}". Call list_media to see the unsaved ones, or stage the file again.`);
    }
  }

  private remove(ids: readonly string[], why: Tombstone): void {
    for (const id of ids) { this.entries.delete(id); this.tombstones.set(id, why); }
  }

  /** Drops saved media and earlier versions of saved media, oldest first, until `target` bytes are used. */
  private evictSaved(target: number): void {
    const keep = new Set(this.unsaved().map((m) => m.id));
    const evicted: string[] = [];
    for (const m of this.all()) {
      if (this.usedBytes() <= target) break;
      if (keep.has(m.id)) continue;
      this.entries.delete(m.id);
      this.tombstones.set(m.id, 'evicted');
      evicted.push(m.id);
    }
    if (evicted.length) this.changed.fire({ kind: 'evicted', ids: evicted });
  }
}

function fail(message: string): never {
  throw new BugError(message);
}
