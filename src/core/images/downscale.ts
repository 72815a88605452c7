import { Jimp } from './codecs.ts';
import { IMAGE_DECODE_MAX_PIXELS, IMAGE_MAX_BYTES } from './bounds.ts';
import type { ImagePart } from './part.ts';

const JPEG_QUALITY = 85;

/** What the decoding worker is asked: the file's bytes, its type, and the size to show it at. */
export interface DownscaleRequest {
  readonly bytes: Uint8Array;
  readonly mime: string;
  readonly width: number;
  readonly height: number;
}

/**
 * The image decoded and downscaled to `width`×`height` (a PNG stays a lossless PNG unless that is
 * over the byte bound; a JPEG stays a JPEG; a GIF's first frame becomes a PNG). Runs in the
 * decoding worker (decode-worker.ts), never on a host's main thread.
 */
export async function downscale(request: DownscaleRequest): Promise<ImagePart> {
  // jpeg-js bounds its own allocations too, as a second line behind frames.ts.
  const decoded = await Jimp.read(
    Buffer.from(request.bytes.buffer, request.bytes.byteOffset, request.bytes.byteLength),
    {
      'image/jpeg': { maxResolutionInMP: IMAGE_DECODE_MAX_PIXELS / 1_000_000, maxMemoryUsageInMB: 512 },
    },
  );
  decoded.resize({ w: request.width, h: request.height });
  if (request.mime !== 'image/jpeg') {
    const png = await decoded.getBuffer('image/png');
    if (png.byteLength <= IMAGE_MAX_BYTES) return { mime: 'image/png', data: png };
  }
  return { mime: 'image/jpeg', data: await decoded.getBuffer('image/jpeg', { quality: JPEG_QUALITY }) };
}
