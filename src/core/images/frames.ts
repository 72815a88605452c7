/**
 * Every frame an image file declares, read from its structure without decoding a pixel.
 *
 * Security: the size image-size reports is one header's (a GIF's logical screen, a PNG's IHDR, a
 * JPEG's first SOF, a WebP's VP8X canvas), but decoders allocate for each frame's own: a 34-byte
 * GIF whose screen says 1600×1600 and whose first frame says 65535×65535 made the decoder allocate
 * 4.29 GB and loop over it. So every frame (GIF image descriptors, APNG fcTL chunks, each JPEG
 * SOFn, WebP VP8/VP8L/ANMF chunks) is read here, and the bounds hold for the space they cover.
 */

/** A frame's place and size on the image's canvas, in pixels. */
export interface Frame {
  readonly x: number;
  readonly y: number;
  readonly width: number;
  readonly height: number;
}

/** The space the image's frames cover (its declared size at least), and the first frame that reaches past that size, if any. */
export interface FrameExtent {
  readonly width: number;
  readonly height: number;
  /** Frames found (a JPEG's SOF segments, a GIF's image descriptors, ...). */
  readonly frames: number;
  /** The first frame that reaches past the declared size, and its number (1-based). */
  readonly beyond?: Frame & { readonly index: number };
}

/** The frames of an image of type `mime` (from sniff.ts) whose header says `width`×`height`. Truncated or malformed files yield the frames read before the fault. */
export function frameExtent(bytes: Uint8Array, mime: string, width: number, height: number): FrameExtent {
  // Folded as they are read, never gathered: a 32 MiB GIF can declare millions of frames.
  let right = width;
  let bottom = height;
  let frames = 0;
  let beyond: FrameExtent['beyond'];
  const see = (frame: Frame): void => {
    frames++;
    if (beyond === undefined && (frame.x + frame.width > width || frame.y + frame.height > height))
      beyond = { ...frame, index: frames };
    right = Math.max(right, frame.x + frame.width);
    bottom = Math.max(bottom, frame.y + frame.height);
  };
  switch (mime) {
    case 'image/gif':
      gifFrames(bytes, see);
      break;
    case 'image/png':
      pngFrames(bytes, see);
      break;
    case 'image/jpeg':
      jpegFrames(bytes, see);
      break;
    case 'image/webp':
      webpFrames(bytes, 12, bytes.length, 0, 0, see);
      break;
  }
  return { width: right, height: bottom, frames, ...(beyond ? { beyond } : {}) };
}

type See = (frame: Frame) => void;

const u16le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8);
const u16be = (b: Uint8Array, at: number): number => (b[at]! << 8) | b[at + 1]!;
const u24le = (b: Uint8Array, at: number): number => b[at]! | (b[at + 1]! << 8) | (b[at + 2]! << 16);
const u32be = (b: Uint8Array, at: number): number =>
  ((b[at]! << 24) >>> 0) + ((b[at + 1]! << 16) | (b[at + 2]! << 8) | b[at + 3]!);
const u32le = (b: Uint8Array, at: number): number =>
  ((b[at + 3]! << 24) >>> 0) + ((b[at + 2]! << 16) | (b[at + 1]! << 8) | b[at]!);
const ascii = (b: Uint8Array, at: number, n: number): string => String.fromCharCode(...b.subarray(at, at + n));

/** GIF: the logical screen descriptor, its colour table, then blocks up to the trailer; each image descriptor is a frame. */
function gifFrames(b: Uint8Array, see: See): void {
  const table = (packed: number): number => (packed & 0x80 ? 3 * (2 << (packed & 7)) : 0);
  /** Skips data sub-blocks from `at`: the position after their terminator, or -1 when they run past the end. */
  const subBlocks = (at: number): number => {
    while (at < b.length) {
      const size = b[at]!;
      at += 1 + size;
      if (size === 0) return at;
    }
    return -1;
  };
  let at = 13 + (b.length > 10 ? table(b[10]!) : 0);
  while (at >= 0 && at < b.length) {
    const block = b[at]!;
    if (block === 0x21) at = subBlocks(at + 2);
    else if (block === 0x2c) {
      if (at + 10 > b.length) break;
      see({ x: u16le(b, at + 1), y: u16le(b, at + 3), width: u16le(b, at + 5), height: u16le(b, at + 7) });
      at = subBlocks(at + 10 + table(b[at + 9]!) + 1);
    } else break; // the trailer (0x3b), or a byte no decoder reads past
  }
}

/** PNG: chunks after the signature; IHDR is the image, each APNG fcTL a frame. */
function pngFrames(b: Uint8Array, see: See): void {
  for (let at = 8; at + 8 <= b.length;) {
    const length = u32be(b, at);
    const type = ascii(b, at + 4, 4);
    const data = at + 8;
    if (type === 'IHDR' && data + 8 <= b.length) see({ x: 0, y: 0, width: u32be(b, data), height: u32be(b, data + 4) });
    else if (type === 'fcTL' && data + 20 <= b.length)
      see({ x: u32be(b, data + 12), y: u32be(b, data + 16), width: u32be(b, data + 4), height: u32be(b, data + 8) });
    else if (type === 'IEND') break;
    at = data + length + 4;
  }
}

/** A JPEG start-of-frame marker: SOF0–SOF15 but DHT (C4), JPG (C8) and DAC (CC). */
const isStartOfFrame = (marker: number): boolean =>
  marker >= 0xc0 && marker <= 0xcf && marker !== 0xc4 && marker !== 0xc8 && marker !== 0xcc;

/** JPEG: marker segments after SOI, skipping entropy-coded data after each SOS; every SOFn is a frame. */
function jpegFrames(b: Uint8Array, see: See): void {
  const bytes = Buffer.from(b.buffer, b.byteOffset, b.byteLength);
  let at = 2;
  while (at < b.length) {
    // A marker: 0xFF (any number of fill bytes) and a code.
    at = bytes.indexOf(0xff, at);
    if (at === -1) break;
    while (b[at] === 0xff) at++;
    if (at >= b.length) break;
    const marker = b[at]!;
    at++;
    // Stuffed zero (inside entropy-coded data), RSTn, SOI, TEM: no length follows.
    if (marker === 0x00 || (marker >= 0xd0 && marker <= 0xd8) || marker === 0x01) continue;
    if (marker === 0xd9) break;
    if (at + 2 > b.length) break;
    const length = u16be(b, at);
    if (isStartOfFrame(marker) && at + 7 <= b.length)
      see({ x: 0, y: 0, width: u16be(b, at + 5), height: u16be(b, at + 3) });
    // After a segment (SOS's header included) the search for the next marker skips entropy-coded
    // data: its 0xFF bytes are followed by 0x00 or an RSTn, both passed over above.
    at += length;
  }
}

/** WebP: RIFF chunks from `from` to `to`; VP8X is the canvas, VP8 and VP8L bitstreams and ANMF frames (and the bitstreams inside them) are frames. */
function webpFrames(b: Uint8Array, from: number, to: number, x: number, y: number, see: See): void {
  for (let at = from; at + 8 <= to;) {
    const type = ascii(b, at, 4);
    const size = u32le(b, at + 4);
    const data = at + 8;
    const end = Math.min(to, data + size);
    if (type === 'VP8 ' && data + 10 <= end) {
      see({ x, y, width: u16le(b, data + 6) & 0x3fff, height: u16le(b, data + 8) & 0x3fff });
    } else if (type === 'VP8L' && data + 5 <= end) {
      const bits = u32le(b, data + 1);
      see({ x, y, width: (bits & 0x3fff) + 1, height: ((bits >>> 14) & 0x3fff) + 1 });
    } else if (type === 'VP8X' && data + 10 <= end) {
      see({ x: 0, y: 0, width: u24le(b, data + 4) + 1, height: u24le(b, data + 7) + 1 });
    } else if (type === 'ANMF' && data + 16 <= end) {
      const frame = {
        x: 2 * u24le(b, data),
        y: 2 * u24le(b, data + 3),
        width: u24le(b, data + 6) + 1,
        height: u24le(b, data + 9) + 1,
      };
      see(frame);
      webpFrames(b, data + 16, end, frame.x, frame.y, see);
    }
    at = data + size + (size & 1);
  }
}
