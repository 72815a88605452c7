import type { ModelPath } from '../paths.ts';
import { bomLength, isUtf8Family, type FileEncoding } from '../text/encoding.ts';
import { lineStats, lineStatsOfUtf8, type Eol, type LineStats } from '../text/eol.ts';
import type { LineCounts } from '../text/line-counts.ts';
import { countsAgainstBase, rememberText, textOf } from './lineage.ts';
import type {
  MediaBase,
  MediaChangeKind,
  MediaOrigin,
  MediaTaint,
  SavedRecord,
  StagedMedia,
  StaleReason,
} from './types.ts';

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

  /**
   * `text`: what the bytes encode, when the caller has it (kept briefly for the next decode); a
   * UTF-8 media needs none. `counts`: its `changes()` against `base`, and `stats`: its lines and
   * line endings, when the caller knows them.
   */
  constructor(init: {
    id: string;
    path: ModelPath;
    bytes: Uint8Array;
    encoding: FileEncoding;
    text?: string | undefined;
    counts?: LineCounts | undefined;
    stats?: LineStats | undefined;
    base: MediaBase;
    parent: MediaRecord | undefined;
    createdAt: number;
    origin: MediaOrigin;
    taint: MediaTaint | undefined;
    change?: MediaChangeKind | undefined;
  }) {
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
    // A patch or a save decodes these bytes next: the text is kept for them, briefly (see rememberText).
    if (init.text !== undefined) rememberText(init.bytes, init.encoding, init.text);
    ({ eol: this.eol, lines: this.lines } = statsOf(init));
    if (init.counts) this.counts = { base: init.base, counts: init.counts };
  }

  get isNew(): boolean {
    return !this.base.existed;
  }

  /** `+added −removed` lines against the disk it was staged from (0/0 for binary), computed once per base. */
  changes(): LineCounts {
    if (this.counts?.base !== this.base) this.counts = { base: this.base, counts: countsAgainstBase(this) };
    return this.counts.counts;
  }
}

/** The stats of each media's bytes in the encoding it read them in: a file staged again shares the bytes held already (MediaStore), and their stats. */
const knownStats = new WeakMap<Uint8Array, { readonly encoding: FileEncoding; readonly stats: LineStats }>();

function statsOf(init: {
  readonly bytes: Uint8Array;
  readonly encoding: FileEncoding;
  readonly text?: string | undefined;
  readonly stats?: LineStats | undefined;
}): LineStats {
  const known = knownStats.get(init.bytes);
  if (known?.encoding === init.encoding) return known.stats;
  const stats =
    init.stats ??
    (init.text !== undefined
      ? lineStats(init.text)
      : isUtf8Family(init.encoding)
        ? lineStatsOfUtf8(init.bytes, bomLength(init.encoding))
        : lineStats(textOf(init.bytes, init.encoding)));
  knownStats.set(init.bytes, { encoding: init.encoding, stats });
  return stats;
}
