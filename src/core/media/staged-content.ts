import { BugError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import { encodeText, imposed, type FileEncoding, type TextEncoding } from '../text/encoding.ts';
import { detectEol, withEol } from '../text/eol.ts';
import { decodeRemembered, sniffRemembered } from './lineage.ts';

export interface StagedContent {
  readonly bytes: Uint8Array;
  readonly encoding: FileEncoding;
  /** The text of the bytes, where making the media made it (a UTF-8 file staged as it is needs none). */
  readonly text: string | undefined;
}

/**
 * What a new line of edits for `path` holds. `disk`: the file's bytes now, or undefined when it does
 * not exist. `content`: the full new text, written in the file's encoding and line endings; or bytes
 * taken as they are; omitted, the disk bytes. `configured`: the user's files.encoding for the path.
 */
export function stagedContent(
  path: ModelPath,
  disk: Uint8Array | undefined,
  content: string | Uint8Array | undefined,
  configured: TextEncoding | undefined,
): StagedContent {
  const fileName = path.rel.slice(path.rel.lastIndexOf('/') + 1);
  if (content === undefined || content instanceof Uint8Array) {
    const bytes = content ?? disk;
    if (bytes === undefined) throw new BugError('MediaStore.stage: no content for a file that does not exist');
    const sniffed = sniffRemembered(bytes, fileName, configured);
    return { bytes, encoding: sniffed?.encoding ?? 'binary', text: sniffed?.text };
  }
  const decoded = disk === undefined ? undefined : decodeRemembered(disk, fileName, configured);
  const encoding = decoded?.encoding ?? imposed(configured) ?? 'utf8';
  const text = decoded ? withEol(content, detectEol(decoded.text)) : content;
  return { bytes: encodeText(text, encoding, path.display), encoding, text };
}
