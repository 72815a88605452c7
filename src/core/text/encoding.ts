import { isUtf8 } from 'node:buffer';
import { isBinary } from 'istextorbinary';
import { invalidInput } from '../errors.ts';
import { lineAt } from './eol.ts';
import { iconv } from './iconv.ts';

/**
 * How a file's text is stored, named by VS Code's encoding ids (the values of `files.encoding`):
 * the one set of names every tool reports. `utf8bom`, `utf16le` and `utf16be` carry a byte order
 * mark. A text file that is not UTF-8 is the legacy single-byte `windows1252`, or `iso88591` when it
 * holds a byte windows-1252 leaves undefined; any other id comes from the user's files.encoding.
 */
export type TextEncoding = 'utf8' | 'utf8bom' | 'utf16le' | 'utf16be' | 'windows1252' | 'iso88591' | (string & {});
export type FileEncoding = TextEncoding | 'binary';
export type BomEncoding = 'utf8bom' | 'utf16le' | 'utf16be';

const BOMS: readonly (readonly [BomEncoding, readonly number[]])[] = [
  ['utf8bom', [0xef, 0xbb, 0xbf]],
  ['utf16le', [0xff, 0xfe]],
  ['utf16be', [0xfe, 0xff]],
];

/** Bytes needed to recognise a byte order mark. */
export const BOM_SNIFF_BYTES = 3;

export function bomEncoding(head: Uint8Array): BomEncoding | undefined {
  return BOMS.find(([, bom]) => bom.every((b, i) => head[i] === b))?.[0];
}

function bomOf(encoding: TextEncoding): readonly number[] {
  return BOMS.find(([e]) => e === encoding)?.[1] ?? [];
}

export function isUtf16(encoding: TextEncoding): encoding is 'utf16le' | 'utf16be' {
  return encoding === 'utf16le' || encoding === 'utf16be';
}

/** Bytes at each end of the file that the binary detector looks at. */
export const BINARY_SAMPLE_BYTES = 32 * 1024;
// git's rule: a NUL byte in the first 8,000 bytes means binary, whatever the file name says.
const NUL_WINDOW = 8000;

/** git's test for a binary file: a NUL byte in its first 8,000 bytes. */
export const hasEarlyNul = (bytes: Uint8Array): boolean => bytes.subarray(0, NUL_WINDOW).includes(0);

/**
 * istextorbinary decides by the file name's extension when it knows it (".png" is binary, ".txt"
 * text), else by the content at the start, middle and end of the sample. A NUL near the start
 * overrides a text extension (a ".txt" that is really a PNG).
 */
export function detectBinary(fileName: string, head: Uint8Array, tail: Uint8Array): boolean {
  if (hasEarlyNul(head)) return true;
  return isBinary(fileName, Buffer.concat([head, tail])) === true;
}

/**
 * The encoding the user's files.encoding imposes, if any. A BOM still decides first (as in VS Code);
 * `utf8` and `utf8bom` (VS Code's default) leave the choice to detection, and so does an id
 * iconv-lite does not know.
 */
export function imposed(configured: TextEncoding | undefined): TextEncoding | undefined {
  if (configured === undefined || configured === 'utf8' || configured === 'utf8bom') return undefined;
  return isUtf16(configured) || iconv().encodingExists(configured) ? configured : undefined;
}

/** Decodes a stream of one encoding's bytes, characters split across chunks included. */
export interface StreamDecoder {
  write(bytes: Uint8Array): string;
  end(): string;
  /** Some bytes had no character in this encoding (they read as U+FFFD). */
  readonly lossy: boolean;
}

/** A UTF-16 decoder drops the BOM; a legacy one maps every byte to one character. */
export function streamDecoder(encoding: TextEncoding): StreamDecoder {
  if (isUtf16(encoding)) {
    const decoder = new TextDecoder(encoding === 'utf16le' ? 'utf-16le' : 'utf-16be');
    return { write: (bytes) => decoder.decode(bytes, { stream: true }), end: () => decoder.decode(), lossy: false };
  }
  const decoder = iconv().getDecoder(encoding);
  const state = {
    lossy: false,
    write(bytes: Uint8Array): string {
      return state.check(decoder.write(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength)));
    },
    end(): string {
      return state.check(decoder.end() ?? '');
    },
    check(text: string): string {
      if (!state.lossy && text.includes('\uFFFD')) state.lossy = true;
      return text;
    },
  };
  return state;
}

/** The legacy encoding of text that is not UTF-8: windows-1252, whose undefined bytes latin-1 still maps. */
export const LEGACY_ENCODING = 'windows1252';
export const LEGACY_FALLBACK = 'iso88591';

export interface DecodedText {
  readonly text: string;
  readonly encoding: TextEncoding;
}

function strictUtf(bytes: Uint8Array, label: string): string | undefined {
  try {
    return new TextDecoder(label, { fatal: true, ignoreBOM: true }).decode(bytes);
  } catch {
    return undefined;
  }
}

/** `text` in `encoding` (a legacy one through iconv-lite) gives back exactly `bytes`. */
function roundTrips(text: string, encoding: TextEncoding, bytes: Uint8Array): boolean {
  return Buffer.compare(iconv().encode(text, encoding), bytes) === 0;
}

/** What `decodeFile` decided, before the text is made: `text` is there when deciding needed it (every encoding but UTF-8). */
export interface SniffedText {
  readonly encoding: TextEncoding;
  readonly text: string | undefined;
}

/**
 * The encoding of a whole file, or undefined when it is binary. The one rule every tool follows: a
 * BOM decides (UTF-16 that does not decode is binary); then binary detection; then files.encoding
 * when it imposes one and the file decodes in it; then UTF-8; else the legacy single-byte encoding.
 * UTF-8 is validated, not decoded: a 10 MB file staged to be patched need never become a string.
 */
export function sniffFile(bytes: Uint8Array, fileName: string, configured?: TextEncoding): SniffedText | undefined {
  const forced = imposed(configured);
  const utf16 = bomEncoding(bytes) ?? (forced !== undefined && isUtf16(forced) ? forced : undefined);
  if (utf16 !== undefined && isUtf16(utf16)) {
    const text = strictUtf(
      bytes.subarray(bomEncoding(bytes) === utf16 ? 2 : 0),
      utf16 === 'utf16le' ? 'utf-16le' : 'utf-16be',
    );
    return text === undefined ? undefined : { text, encoding: utf16 };
  }
  const head = bytes.subarray(0, BINARY_SAMPLE_BYTES);
  if (detectBinary(fileName, head, bytes.subarray(Math.max(head.length, bytes.length - BINARY_SAMPLE_BYTES))))
    return undefined;
  if (utf16 === 'utf8bom') return isUtf8(bytes.subarray(3)) ? { text: undefined, encoding: 'utf8bom' } : undefined;
  if (forced !== undefined) {
    const text = iconv().decode(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength), forced);
    if (roundTrips(text, forced, bytes)) return { text, encoding: forced };
  }
  if (isUtf8(bytes)) return { text: undefined, encoding: 'utf8' };
  const legacy = decodeAs(bytes, LEGACY_ENCODING);
  if (!legacy.includes('\uFFFD')) return { text: legacy, encoding: LEGACY_ENCODING };
  return { text: decodeAs(bytes, LEGACY_FALLBACK), encoding: LEGACY_FALLBACK };
}

/** The text of a whole file in the encoding `sniffFile` decides, or undefined when it is binary. */
export function decodeFile(bytes: Uint8Array, fileName: string, configured?: TextEncoding): DecodedText | undefined {
  const sniffed = sniffFile(bytes, fileName, configured);
  return sniffed && { text: sniffed.text ?? decodeAs(bytes, sniffed.encoding), encoding: sniffed.encoding };
}

/** UTF-8 with or without a BOM: bytes in which a line feed or carriage return is that one byte, and nothing else is. */
export function isUtf8Family(encoding: FileEncoding): encoding is 'utf8' | 'utf8bom' {
  return encoding === 'utf8' || encoding === 'utf8bom';
}

/** Where the text starts in bytes of `encoding`: after its BOM. */
export function bomLength(encoding: TextEncoding): number {
  return bomOf(encoding).length;
}

/** The text of bytes known to be in `encoding` (its BOM, if any, left out). */
export function decodeAs(bytes: Uint8Array, encoding: TextEncoding): string {
  const body = Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).subarray(bomOf(encoding).length);
  if (encoding === 'utf8' || encoding === 'utf8bom') return body.toString('utf8');
  if (encoding === 'utf16le') return body.toString('utf16le');
  if (isUtf16(encoding)) return Buffer.from(body).swap16().toString('utf16le');
  return iconv().decode(body, encoding);
}

/**
 * The bytes of `text` in `encoding`, with the BOM that encoding carries. A character the encoding
 * cannot hold is a narrated error (iconv-lite would silently write "?" for it): `display` names the file.
 */
export function encodeText(text: string, encoding: TextEncoding, display: string): Uint8Array {
  const bom = Buffer.from(bomOf(encoding));
  if (encoding === 'utf8' || encoding === 'utf8bom') {
    // Encoded once, straight after the BOM: no concatenation or copy of a file's megabytes.
    const bytes = new Uint8Array(bom.length + Buffer.byteLength(text, 'utf8'));
    bytes.set(bom);
    Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength).write(text, bom.length, 'utf8');
    return bytes;
  }
  if (encoding === 'utf16le') return new Uint8Array(Buffer.concat([bom, Buffer.from(text, 'utf16le')]));
  if (isUtf16(encoding)) return new Uint8Array(Buffer.concat([bom, Buffer.from(text, 'utf16le').swap16()]));
  const bytes = iconv().encode(text, encoding);
  const back = iconv().decode(bytes, encoding);
  if (back !== text) {
    let i = 0;
    while (i < text.length && text.charCodeAt(i) === back.charCodeAt(i)) i++;
    const code = text.codePointAt(i) ?? 0;
    const char = `"${String.fromCodePoint(code)}" (U+${code.toString(16).toUpperCase().padStart(4, '0')})`;
    throw invalidInput(
      `"${display}" is stored as ${encoding}, which has no character for ${char} on line ${lineAt(text, i)} of the new text; no media was made and nothing was written.`,
      `Write it another way (a character ${encoding} has, or an escape the file's language understands), or ask the user to convert the file to UTF-8 (in VS Code: "Save with Encoding"), stage it again and repeat the edit.`,
    );
  }
  return new Uint8Array(bytes);
}
