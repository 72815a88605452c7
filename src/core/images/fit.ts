import { lazyModule } from '../lazy-module.ts';
import type * as Codecs from './codecs.ts';
import { formatBytes } from '../text/format.ts';
import { IMAGE_MAX_BYTES, IMAGE_MAX_SIDE, type ImageInfo } from './sniff.ts';

/**
 * The longest side the model is shown: a larger image is downscaled to it first. Model APIs resize
 * anything larger themselves (Anthropic's to about this size), so sending more pixels only costs
 * bytes on the way.
 */
export const IMAGE_SHOWN_MAX_SIDE = 1568;

/** Largest image decoded to downscale it: its pixels (4 bytes each while decoded) and its file. */
export const IMAGE_DECODE_MAX_PIXELS = 25_000_000;
export const IMAGE_DECODE_MAX_BYTES = 32 * 1024 * 1024;

const JPEG_QUALITY = 85;

/** How an image is shown to the model: as it is, downscaled to a size, or not at all (and why). */
export type ImageShowing =
  | { readonly as: 'original' }
  | { readonly as: 'downscaled'; readonly width: number; readonly height: number }
  | { readonly as: 'described'; readonly why: string };

/** Decided from the image's size alone, before any decoding. */
export function imageShowing(image: ImageInfo): ImageShowing {
  const longest = Math.max(image.width, image.height);
  if (longest <= IMAGE_SHOWN_MAX_SIDE && image.bytes <= IMAGE_MAX_BYTES) return { as: 'original' };
  if (image.mime === 'image/webp') {
    // No pure-JavaScript WebP decoder is bundled: within the model's bound it goes as it is.
    return image.bytes <= IMAGE_MAX_BYTES && longest <= IMAGE_MAX_SIDE
      ? { as: 'original' }
      : { as: 'described', why: `Not shown as an image: a WebP over ${formatBytes(IMAGE_MAX_BYTES)} or ${IMAGE_MAX_SIDE} px a side is not downscaled here. Ask the user for a PNG or JPEG copy, or a smaller one.` };
  }
  if (image.width * image.height > IMAGE_DECODE_MAX_PIXELS || image.bytes > IMAGE_DECODE_MAX_BYTES) {
    return { as: 'described', why: `Not shown as an image: at ${image.width}×${image.height} px and ${formatBytes(image.bytes)} it is over what is decoded to downscale it (${IMAGE_DECODE_MAX_PIXELS / 1_000_000} megapixels, ${formatBytes(IMAGE_DECODE_MAX_BYTES)}). Ask the user for a smaller copy.` };
  }
  const scale = Math.min(1, IMAGE_SHOWN_MAX_SIDE / longest);
  return { as: 'downscaled', width: Math.max(1, Math.round(image.width * scale)), height: Math.max(1, Math.round(image.height * scale)) };
}

/** The text that says how the model is shown the image, after its "Image: …" line. */
export function showingNote(showing: ImageShowing): string | undefined {
  if (showing.as === 'downscaled') return `Shown to you downscaled to ${showing.width}×${showing.height} px; the file is unchanged.`;
  return showing.as === 'described' ? showing.why : undefined;
}

/**
 * The image part the model is given: the file's bytes, or the image decoded and downscaled (a PNG
 * stays a lossless PNG unless that is over the byte bound; a JPEG stays a JPEG; a GIF's first frame).
 */
/** An image for the model: its bytes and MIME type. */
export interface ImagePart {
  readonly mime: string;
  readonly data: Uint8Array;
}

export async function imageShown(bytes: Uint8Array, image: ImageInfo, showing: ImageShowing): Promise<ImagePart | { readonly unshown: string } | undefined> {
  if (showing.as === 'original') return { mime: image.mime, data: bytes };
  if (showing.as === 'described') return undefined;
  const { Jimp } = lazyModule<typeof Codecs>('image-codecs');
  let decoded: Awaited<ReturnType<typeof Jimp.read>>;
  try {
    decoded = await Jimp.read(Buffer.from(bytes.buffer, bytes.byteOffset, bytes.byteLength));
  } catch (e) {
    return { unshown: `Not shown after all: its header says ${image.mime}, but its pixels could not be decoded (${e instanceof Error ? e.message : String(e)}), so nothing was sent.` };
  }
  decoded.resize({ w: showing.width, h: showing.height });
  if (image.mime !== 'image/jpeg') {
    const png = await decoded.getBuffer('image/png');
    if (png.byteLength <= IMAGE_MAX_BYTES) return { mime: 'image/png', data: png };
  }
  return { mime: 'image/jpeg', data: await decoded.getBuffer('image/jpeg', { quality: JPEG_QUALITY }) };
}
