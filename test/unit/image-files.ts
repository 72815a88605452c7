import { deflateSync } from 'node:zlib';

/* Image files built byte by byte: valid ones, and ones whose frames lie about their size. */

const CRC_TABLE = Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c >>> 0;
});

function crc32(bytes: Buffer): number {
  let crc = 0xffffffff;
  for (const b of bytes) crc = CRC_TABLE[(crc ^ b) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

const u16le = (n: number): Buffer => Buffer.from([n & 0xff, (n >> 8) & 0xff]);
const u16be = (n: number): Buffer => Buffer.from([(n >> 8) & 0xff, n & 0xff]);
const u24le = (n: number): Buffer => Buffer.from([n & 0xff, (n >> 8) & 0xff, (n >> 16) & 0xff]);
const u32be = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n >>> 0);
  return b;
};
const u32le = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32LE(n >>> 0);
  return b;
};

function pngChunk(type: string, data: Buffer): Buffer {
  const typed = Buffer.concat([Buffer.from(type, 'latin1'), data]);
  return Buffer.concat([u32be(data.length), typed, u32be(crc32(typed))]);
}

/** A frame on a canvas: its offset and size. */
export interface FrameSpec {
  readonly x?: number;
  readonly y?: number;
  readonly width: number;
  readonly height: number;
}

/**
 * A PNG of `width`×`height` RGBA pixels, all zero (a valid image, small on disk: its rows compress
 * to almost nothing), with an APNG fcTL chunk for each of `frames` before its data. With `pixels`
 * false its data is empty: a header that lies about a size never made.
 */
export function png(width: number, height: number, frames: readonly FrameSpec[] = [], pixels = true): Buffer {
  const ihdr = Buffer.concat([u32be(width), u32be(height), Buffer.from([8, 6, 0, 0, 0])]);
  const fctl = frames.map((f, i) =>
    pngChunk(
      'fcTL',
      Buffer.concat([
        u32be(i),
        u32be(f.width),
        u32be(f.height),
        u32be(f.x ?? 0),
        u32be(f.y ?? 0),
        u16be(1),
        u16be(10),
        Buffer.from([0, 0]),
      ]),
    ),
  );
  const actl = frames.length > 0 ? [pngChunk('acTL', Buffer.concat([u32be(frames.length), u32be(0)]))] : [];
  const data = deflateSync(pixels ? Buffer.alloc((width * 4 + 1) * height) : Buffer.alloc(0));
  return Buffer.concat([
    Buffer.from([137, 80, 78, 71, 13, 10, 26, 10]),
    pngChunk('IHDR', ihdr),
    ...actl,
    ...fctl,
    pngChunk('IDAT', data),
    pngChunk('IEND', Buffer.alloc(0)),
  ]);
}

/**
 * A GIF whose logical screen is `width`×`height`, with one image descriptor for each of `frames`
 * (two colours, each frame's data a single clear code and end: no pixels, as a crafted file has).
 */
export function gif(width: number, height: number, frames: readonly FrameSpec[]): Buffer {
  const head = Buffer.concat([
    Buffer.from('GIF89a', 'latin1'),
    u16le(width),
    u16le(height),
    Buffer.from([0x80, 0, 0]),
    Buffer.from([0, 0, 0, 255, 255, 255]),
  ]);
  const images = frames.map((f) =>
    Buffer.concat([
      Buffer.from([0x2c]),
      u16le(f.x ?? 0),
      u16le(f.y ?? 0),
      u16le(f.width),
      u16le(f.height),
      Buffer.from([0, 2, 2, 0x44, 0x01, 0]),
    ]),
  );
  return Buffer.concat([head, ...images, Buffer.from([0x3b])]);
}

/** A JPEG's segments up to its first scan: SOI, APP0, then one SOF0 for each frame (the first is what size readers report), then EOI. */
export function jpeg(frames: readonly FrameSpec[]): Buffer {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
  ]);
  const sofs = frames.map((f) =>
    Buffer.concat([
      Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08]),
      u16be(f.height),
      u16be(f.width),
      Buffer.from([0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]),
    ]),
  );
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, ...sofs, Buffer.from([0xff, 0xd9])]);
}

function riffChunk(type: string, data: Buffer): Buffer {
  return Buffer.concat([
    Buffer.from(type, 'latin1'),
    u32le(data.length),
    data,
    data.length % 2 === 1 ? Buffer.from([0]) : Buffer.alloc(0),
  ]);
}

/** A lossy VP8 bitstream's chunk that says `width`×`height` (its key frame header only). */
export function vp8(width: number, height: number): Buffer {
  return riffChunk(
    'VP8 ',
    Buffer.concat([Buffer.from([0x10, 0x02, 0x00, 0x9d, 0x01, 0x2a]), u16le(width), u16le(height)]),
  );
}

/** A lossless VP8L bitstream's chunk that says `width`×`height`. */
export function vp8l(width: number, height: number): Buffer {
  const bits = ((width - 1) & 0x3fff) | (((height - 1) & 0x3fff) << 14);
  return riffChunk('VP8L', Buffer.concat([Buffer.from([0x2f]), u32le(bits)]));
}

/** An animated WebP frame (ANMF) at (`x`, `y`) of `width`×`height` (x and y even), holding `bitstream`. */
export function anmf(frame: FrameSpec, bitstream: Buffer): Buffer {
  return riffChunk(
    'ANMF',
    Buffer.concat([
      u24le((frame.x ?? 0) / 2),
      u24le((frame.y ?? 0) / 2),
      u24le(frame.width - 1),
      u24le(frame.height - 1),
      u24le(100),
      Buffer.from([0]),
      bitstream,
    ]),
  );
}

/** An extended WebP: a VP8X canvas of `width`×`height`, then `chunks`. */
export function webp(width: number, height: number, chunks: readonly Buffer[]): Buffer {
  const body = Buffer.concat([
    Buffer.from('WEBP', 'latin1'),
    riffChunk('VP8X', Buffer.concat([Buffer.from([0x02, 0, 0, 0]), u24le(width - 1), u24le(height - 1)])),
    ...chunks,
  ]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
}

/** A simple WebP: one bitstream chunk and nothing else. */
export function simpleWebp(bitstream: Buffer): Buffer {
  const body = Buffer.concat([Buffer.from('WEBP', 'latin1'), bitstream]);
  return Buffer.concat([Buffer.from('RIFF', 'latin1'), u32le(body.length), body]);
}
