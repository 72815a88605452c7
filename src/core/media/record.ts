import type { ModelPath } from '../paths.ts';
import type { FileEncoding } from '../text/encoding.ts';
import { lineStats, type Eol } from '../text/eol.ts';
import { lineCounts, type LineCounts } from '../text/line-counts.ts';
import { diskText, rememberText, textOf } from './lineage.ts';
import type { MediaBase, MediaChangeKind, MediaOrigin, MediaTaint, SavedRecord, StagedMedia, StaleReason } from './types.ts';

/** A media as the store keeps it: its base, saved and stale state change as the file is saved. */
export class MediaRecord implements StagedMedia {
  readonly id: string;
  readonly path: ModelPath;
  readonly change: MediaChangeKind;
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
  private counts: { readonly base: MediaBase; readonly counts: LineCounts } | undefined = undefined;

  constructor(init: { id: string; path: ModelPath; bytes: Uint8Array; encoding: FileEncoding; text?: string | undefined; base: MediaBase; parent: MediaRecord | undefined; createdAt: number; origin: MediaOrigin; taint: MediaTaint | undefined; change?: MediaChangeKind | undefined }) {
    this.id = init.id;
    this.path = init.path;
    this.change = init.change ?? init.parent?.change ?? { kind: 'write' };
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
    // A patch or a save decodes these bytes next: the text is kept for them, briefly (see rememberText).
    if (init.text !== undefined) rememberText(init.bytes, init.encoding, text);
    ({ eol: this.eol, lines: this.lines } = lineStats(text));
  }

  get isNew(): boolean { return !this.base.existed; }

  /** `+added −removed` lines against the disk it was staged from (0/0 for binary), computed once per base. */
  changes(): LineCounts {
    if (this.counts?.base !== this.base) this.counts = { base: this.base, counts: this.encoding === 'binary' ? { added: 0, removed: 0 } : lineCounts(diskText(this.base.bytes, this) ?? '', textOf(this.bytes, this.encoding)) };
    return this.counts.counts;
  }
}
