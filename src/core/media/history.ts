import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock } from '../ports.ts';
import { Emitter, type Disposable, type Listener } from '../events.ts';
import { formatBytes } from '../text/format.ts';
import type { LineCounts } from '../text/line-counts.ts';
import { hashKept } from './hash.ts';
import type { FileMeta } from './file-meta.ts';
import { madeThing, type TreeManifest } from './tree.ts';

/** How a save was undone. */
export type UndoneBy =
  /** The previous bytes were written back (by the save `by`). */
  | { readonly kind: 'restored'; readonly by: string }
  /** The file the save created was removed. */
  | { readonly kind: 'removed' }
  /** The file had changed since: the previous bytes were staged as `mediaId` for review. */
  | { readonly kind: 'staged'; readonly mediaId: string }
  /** Put back as it was before the save, with the rest of its set or as a deleted file recreated (undo_save of a set or a delete). */
  | { readonly kind: 'reverted' };

/** One save of this window, and what is needed to undo it. */
export interface SaveRecord extends LineCounts {
  /** "s1", "s2", ... in save order. */
  readonly id: string;
  readonly path: ModelPath;
  /** The media that was written. */
  readonly mediaId: string;
  /**
   * `write`: bytes were written to `path`; `delete`: `path` was removed (a move is a delete of its
   * source and a write of its destination, in one set); `tree`: a command made the folder `path`
   * whole, or the symbolic link `path` (`tree` says what it held), and undoing removes it.
   */
  readonly kind: 'write' | 'delete' | 'tree';
  /** The save_id of the set it belongs to (its own id for a save of one file): undo_save of the set undoes every file of it. */
  readonly set: string;
  /** Part of a move: the other side (the source for the write, the destination for the delete). */
  readonly moved?: { readonly from: ModelPath } | { readonly to: ModelPath };
  readonly at: number;
  /** The file did not exist before: undoing removes it. */
  readonly created: boolean;
  /** The mode and owner of the file before the save (a deleted file's), where known: an undo gives them back. */
  readonly replacedMeta: FileMeta | undefined;
  /** SHA-256 of what the save wrote: the file must still hold it for the undo to write. */
  readonly savedHash: string;
  /** The file the save created (device and inode, where the backend has them): an undo removes only that file. */
  readonly file: FileIdentity | undefined;
  readonly savedBytes: number;
  /** Why the bytes needed to undo are not kept (too large for the budget, evicted); undefined while kept. */
  readonly lost: string | undefined;
  readonly undone: UndoneBy | undefined;
  /** kind `tree`: what the folder held when it was made. */
  readonly tree?: TreeManifest;
  /** How many folders above `path` its set made, innermost first: undoing the set removes them while they are empty. */
  readonly madeFolders?: number;
}

export interface FileIdentity {
  readonly dev: number;
  readonly ino: number;
}

export interface SaveHistoryOptions {
  /** A private folder for the kept bytes (created on first use; removed by `dispose`). */
  readonly dir: () => Promise<string>;
  /** Disk budget for the kept bytes; the oldest saves' bytes are dropped beyond it. */
  readonly budgetBytes: () => number;
  /** Where the person raises it, as the host names it (default: VS Code's setting). */
  readonly budgetSetting?: string;
  readonly clock: Clock;
}

interface Entry {
  record: SaveRecord;
  /** Bytes the kept files take (before + after). */
  kept: number;
  readonly files: { readonly before: string; readonly after: string } | undefined;
}

/**
 * The saves of this window, newest last, each with the bytes it replaced and the bytes it wrote,
 * kept in files within a disk budget so that any save can be undone and shown as a diff.
 */
export class SaveHistory {
  private readonly options: SaveHistoryOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly changed = new Emitter<void>();
  private counter = 0;
  private folder: Promise<string> | undefined;

  constructor(options: SaveHistoryOptions) {
    this.options = options;
  }

  /** Fires when a save is recorded, undone, or its bytes are dropped. */
  onDidChange(listener: Listener<void>): Disposable {
    return this.changed.event(listener);
  }

  /** This window's saves, newest first. */
  list(): SaveRecord[] {
    return [...this.entries.values()].reverse().map((e) => e.record);
  }

  /** A save by id; a narrated E_SANDBOX_NOT_FOUND when there is none. */
  get(id: string): SaveRecord {
    return this.entry(id).record;
  }

  /** The newest save not undone yet; a narrated E_SANDBOX_NOT_FOUND when there is none. */
  latest(): SaveRecord {
    const found = this.list().find((r) => r.undone === undefined);
    if (!found)
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        this.entries.size
          ? 'Every save of this window has already been undone; there is nothing left to undo.'
          : 'Nothing was saved with save_media in this window, so there is nothing to undo.',
        '',
      );
    return found;
  }

  /**
   * Records a save: `replaced` is what the file held before (undefined: it did not exist),
   * `written` what the save wrote. Keeps both within the budget, dropping the oldest first.
   */
  async record(
    save: {
      readonly path: ModelPath;
      readonly mediaId: string;
      readonly replaced: Uint8Array | undefined;
      readonly replacedMeta?: FileMeta | undefined;
      readonly written: Uint8Array;
      readonly file?: FileIdentity | undefined;
      readonly kind?: 'write' | 'delete';
      readonly set?: string;
      readonly moved?: SaveRecord['moved'];
      /** Keep no bytes, for this reason (its set does not fit the budget). */
      readonly unkept?: string;
      readonly madeFolders?: number;
    } & LineCounts,
  ): Promise<SaveRecord> {
    const id = `s${++this.counter}`;
    const set = save.set ?? id;
    const size = (save.replaced?.byteLength ?? 0) + save.written.byteLength;
    const budget = this.options.budgetBytes();
    const base = {
      id,
      path: save.path,
      mediaId: save.mediaId,
      kind: save.kind ?? 'write',
      set,
      ...(save.moved ? { moved: save.moved } : {}),
      at: this.options.clock.now(),
      created: save.replaced === undefined,
      replacedMeta: save.replacedMeta,
      savedHash: hashKept(save.written),
      savedBytes: save.written.byteLength,
      file: save.file,
      added: save.added,
      removed: save.removed,
      undone: undefined,
      ...(save.madeFolders ? { madeFolders: save.madeFolders } : {}),
    };
    // The files of its own set are never dropped for it: a set evicting itself would keep none of it whole.
    const room = budget - this.keptOf(set);
    const unkept =
      save.unkept ??
      (size > room
        ? `it needs ${formatBytes(size)}, more than the undo budget of ${formatBytes(budget)}${room < budget ? ' has room for beside the rest of its set' : ''} (${this.setting()})`
        : undefined);
    if (unkept !== undefined) {
      const record: SaveRecord = { ...base, lost: unkept };
      this.entries.set(id, { record, kept: 0, files: undefined });
      this.changed.fire();
      return record;
    }
    this.dropOldest(budget - size, set);
    const dir = await this.dir();
    const files = { before: nodePath.join(dir, `${id}.before`), after: nodePath.join(dir, `${id}.after`) };
    // Security: copies of workspace files: only this user may read them.
    if (save.replaced) await fsp.writeFile(files.before, save.replaced, { mode: 0o600 });
    await fsp.writeFile(files.after, save.written, { mode: 0o600 });
    const record: SaveRecord = { ...base, lost: undefined };
    this.entries.set(id, { record, kept: size, files });
    this.changed.fire();
    return record;
  }

  /** Records a folder a command made whole, or a link it made: no bytes are kept; undoing it removes the folder (or link) while it holds just what `tree` says. */
  recordTree(save: {
    readonly path: ModelPath;
    readonly mediaId: string;
    readonly tree: TreeManifest;
    readonly set?: string;
    readonly madeFolders?: number;
  }): SaveRecord {
    const id = `s${++this.counter}`;
    const record: SaveRecord = {
      id,
      path: save.path,
      mediaId: save.mediaId,
      kind: 'tree',
      set: save.set ?? id,
      at: this.options.clock.now(),
      created: true,
      replacedMeta: undefined,
      savedHash: '',
      savedBytes: save.tree.bytes,
      file: undefined,
      added: 0,
      removed: 0,
      lost: undefined,
      undone: undefined,
      tree: save.tree,
      ...(save.madeFolders ? { madeFolders: save.madeFolders } : {}),
    };
    this.entries.set(id, { record, kept: 0, files: undefined });
    this.changed.fire();
    return record;
  }

  /** The files of a set, in save order (one record for a save of one file); a narrated E_SANDBOX_NOT_FOUND when there is none. */
  setOf(id: string): SaveRecord[] {
    const set = this.get(id).set;
    return [...this.entries.values()].map((e) => e.record).filter((r) => r.set === set);
  }

  /**
   * Bytes a set of files needs kept to be undone, past which it cannot be: `undefined` when they fit
   * the budget beside what `set` (a set being recorded) keeps already, dropping other saves as needed;
   * else why not.
   */
  roomFor(bytes: number, set?: string): string | undefined {
    const budget = this.options.budgetBytes();
    if (bytes + (set === undefined ? 0 : this.keptOf(set)) <= budget) return undefined;
    return `needs ${formatBytes(bytes)} kept to be undone, more than the undo budget of ${formatBytes(budget)} (${this.setting()})`;
  }

  /** What the file held before the save (undefined: the save created it). */
  async before(id: string): Promise<Uint8Array | undefined> {
    const entry = this.kept(id);
    return entry.record.created ? undefined : fsp.readFile(entry.files.before);
  }

  /** What the save wrote. */
  async after(id: string): Promise<Uint8Array> {
    return fsp.readFile(this.kept(id).files.after);
  }

  /** Notes how a save was undone (a staged undo counts: it is the person's to save or discard). */
  markUndone(id: string, how: UndoneBy): void {
    const entry = this.entries.get(id);
    if (!entry) return;
    entry.record = { ...entry.record, undone: how };
    this.changed.fire();
  }

  /** Removes every kept file. */
  async dispose(): Promise<void> {
    const folder = this.folder;
    this.entries.clear();
    this.changed.dispose();
    if (folder) await fsp.rm(await folder.catch(() => ''), { recursive: true, force: true }).catch(() => undefined);
  }

  private entry(id: string): Entry {
    const entry = this.entries.get(id);
    if (!entry)
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `No save has id "${id}" in this window${this.entries.size ? ` (saves: ${[...this.entries.keys()].join(', ')})` : ''}.`,
        `Use the save_id that save_media returned.`,
      );
    return entry;
  }

  private kept(id: string): { readonly record: SaveRecord; readonly files: NonNullable<Entry['files']> } {
    const { record, files } = this.entry(id);
    if (record.tree !== undefined) {
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        madeThing(record.tree) === 'folder'
          ? `Save ${id} made the folder "${record.path.display}" whole (${record.tree.files} files) and keeps no copy of them: undoing it removes the folder.`
          : `Save ${id} made the symbolic link "${record.path.display}": undoing it removes the link.`,
        `Undo the whole save (undo_save with its save_id).`,
      );
    }
    if (files === undefined || record.lost !== undefined) {
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `Save ${id} of "${record.path.display}" cannot be undone: the bytes it replaced were not kept (${record.lost ?? 'dropped'}).`,
        `Stage the file and change it back by hand instead.`,
      );
    }
    return { record, files };
  }

  private dir(): Promise<string> {
    this.folder ??= this.options.dir().then(async (dir) => {
      await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
      return dir;
    });
    return this.folder;
  }

  private setting(): string {
    return this.options.budgetSetting ?? 'workspaceTools.undo.diskBudgetMB';
  }

  /** Bytes the saves of `set` keep. */
  private keptOf(set: string): number {
    let kept = 0;
    for (const e of this.entries.values()) if (e.record.set === set) kept += e.kept;
    return kept;
  }

  /** Drops the oldest saves' kept bytes (never those of `set`) until at most `target` bytes are kept. */
  private dropOldest(target: number, set: string): void {
    let used = 0;
    for (const e of this.entries.values()) used += e.kept;
    for (const entry of this.entries.values()) {
      if (used <= target) return;
      if (entry.kept === 0 || !entry.files || entry.record.set === set) continue;
      used -= entry.kept;
      entry.kept = 0;
      entry.record = {
        ...entry.record,
        lost: `the oldest saves were dropped to stay within the undo budget (${this.setting()})`,
      };
      void fsp.rm(entry.files.before, { force: true });
      void fsp.rm(entry.files.after, { force: true });
    }
  }
}
