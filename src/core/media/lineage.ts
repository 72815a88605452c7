import {
  bomLength,
  decodeAs,
  decodeFile,
  isUtf8Family,
  sniffFile,
  type DecodedText,
  type FileEncoding,
  type SniffedText,
  type TextEncoding,
} from '../text/encoding.ts';
import { lineCounts, lineCountsOfUtf8, type LineCounts } from '../text/line-counts.ts';
import type { PersonChange, StagedMedia } from './types.ts';

/* Lines of edits: which media are unsaved, which are the latest of their line, what the person changed, what a discard drops. */

/**
 * The texts of the last few media bytes decoded, by the bytes' identity (a media's bytes never
 * change): staging, patching and saving one file decode the same megabytes several times otherwise.
 * `sniffed`: the encoding was detected from the bytes (decodeFile), not only imposed.
 */
const recentTexts = new Map<
  Uint8Array,
  { readonly encoding: FileEncoding; readonly text: string; readonly sniffed: boolean }
>();
const RECENT_TEXTS = 4;
const RECENT_CHARS = 64 * 1024 * 1024;

/** Keeps the text of `bytes` in `encoding` for the next few decodes of the same bytes. */
export function rememberText(bytes: Uint8Array, encoding: FileEncoding, text: string, sniffed = false): void {
  if (encoding === 'binary' || text.length > RECENT_CHARS) return;
  const before = recentTexts.get(bytes);
  recentTexts.delete(bytes);
  recentTexts.set(bytes, {
    encoding,
    text,
    sniffed: sniffed || (before?.sniffed === true && before.encoding === encoding),
  });
  let chars = 0;
  for (const entry of recentTexts.values()) chars += entry.text.length;
  // The oldest go first.
  for (const [key, entry] of recentTexts) {
    if (recentTexts.size <= RECENT_TEXTS && chars <= RECENT_CHARS) break;
    recentTexts.delete(key);
    chars -= entry.text.length;
  }
}

/** decodeFile, its text kept for the next decodes of the same bytes (a file being staged is patched and saved next). */
export function decodeRemembered(
  bytes: Uint8Array,
  fileName: string,
  configured: TextEncoding | undefined,
): DecodedText | undefined {
  const decoded = decodeFile(bytes, fileName, configured);
  if (decoded) rememberText(bytes, decoded.encoding, decoded.text, true);
  return decoded;
}

/** The encodings `sniffFile` found for bytes whose text it did not make (UTF-8), so `diskText` need not detect again. */
const sniffedEncodings = new WeakMap<Uint8Array, TextEncoding>();

/** sniffFile, remembered: its text when it made one, else the encoding it found. */
export function sniffRemembered(
  bytes: Uint8Array,
  fileName: string,
  configured: TextEncoding | undefined,
): SniffedText | undefined {
  const sniffed = sniffFile(bytes, fileName, configured);
  if (sniffed?.text !== undefined) rememberText(bytes, sniffed.encoding, sniffed.text, true);
  else if (sniffed) sniffedEncodings.set(bytes, sniffed.encoding);
  return sniffed;
}

/** The text of a media's bytes ('' for binary). */
export function textOf(bytes: Uint8Array, encoding: FileEncoding): string {
  if (encoding === 'binary') return '';
  const known = recentTexts.get(bytes);
  if (known?.encoding === encoding) return known.text;
  const text = decodeAs(bytes, encoding);
  rememberText(bytes, encoding, text);
  return text;
}

/** The text of what disk held, when it holds text in the media's encoding (a new text may replace a binary file). */
export function diskText(bytes: Uint8Array, media: StagedMedia): string | undefined {
  const known = recentTexts.get(bytes);
  if (known?.sniffed && known.encoding === media.encoding) return known.text;
  if (sniffedEncodings.get(bytes) === media.encoding) return textOf(bytes, media.encoding);
  const decoded = decodeFile(bytes, media.path.rel, media.encoding);
  if (decoded === undefined) return undefined;
  rememberText(bytes, decoded.encoding, decoded.text, true);
  return decoded.encoding === media.encoding ? decoded.text : undefined;
}

/** `+added −removed` lines of a media against the disk it was staged from (0/0 for binary); UTF-8 against UTF-8 without decoding either. */
export function countsAgainstBase(media: StagedMedia): LineCounts {
  if (media.encoding === 'binary') return { added: 0, removed: 0 };
  const base = media.base.bytes;
  if (isUtf8Family(media.encoding) && sniffedEncodings.get(base) === media.encoding)
    return lineCountsOfUtf8(base, media.bytes, bomLength(media.encoding));
  return lineCounts(diskText(base, media) ?? '', textOf(media.bytes, media.encoding));
}

/** Of `media` (oldest first): those not saved and not an earlier version of a saved one. */
export function unsavedOf(media: readonly StagedMedia[]): StagedMedia[] {
  const savedLineage = new Set<string>();
  for (const m of media) if (m.saved) m.ancestors.forEach((id) => savedLineage.add(id));
  return media.filter((m) => !m.saved && !savedLineage.has(m.id));
}

/** Of `media` (oldest first): the unsaved ones nothing was derived from yet, the latest version of each line of edits. */
export function headsOf(media: readonly StagedMedia[]): StagedMedia[] {
  const parents = new Set<string>();
  for (const m of media) if (m.parentId !== undefined) parents.add(m.parentId);
  return unsavedOf(media).filter((m) => !parents.has(m.id));
}

/**
 * The person's edit in a line of edits (`lineage`: oldest first, ending with the media asked about;
 * undefined for a version no longer held): the nearest person-made version, counted against the
 * model-made version it was edited from; undefined when the person made none.
 */
export function personChangeIn(lineage: readonly (StagedMedia | undefined)[]): PersonChange | undefined {
  for (let i = lineage.length - 1; i >= 0; i--) {
    const person = lineage[i];
    if (person?.origin !== 'person') continue;
    for (let j = i - 1; j >= 0; j--) {
      const model = lineage[j];
      if (model?.origin === 'model')
        return {
          mediaId: person.id,
          against: model.id,
          ...lineCounts(textOf(model.bytes, model.encoding), textOf(person.bytes, person.encoding)),
        };
    }
    return undefined;
  }
  return undefined;
}

/** What discarding `media` drops from `held`: it, everything derived from it, and the unsaved earlier versions that lead only to it. */
export function discardSet(held: ReadonlyMap<string, StagedMedia>, media: StagedMedia): string[] {
  const gone = new Set<string>();
  for (const m of held.values()) if (m.id === media.id || m.ancestors.includes(media.id)) gone.add(m.id);
  for (const ancestorId of [...media.ancestors].reverse()) {
    const ancestor = held.get(ancestorId);
    if (!ancestor || ancestor.saved) break;
    const stillUsed = [...held.values()].some((m) => !gone.has(m.id) && m.ancestors.includes(ancestorId));
    if (stillUsed) break;
    gone.add(ancestorId);
  }
  return [...gone];
}
