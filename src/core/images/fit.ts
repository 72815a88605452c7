import type { ImagePart } from './part.ts';
import { formatBytes } from '../text/format.ts';
import {
  IMAGE_DECODE_MAX_BYTES,
  IMAGE_DECODE_MAX_PIXELS,
  IMAGE_MAX_BYTES,
  IMAGE_MAX_SIDE,
  IMAGE_SHOWN_MAX_SIDE,
} from './bounds.ts';
import { decodeInWorker, type Unshown } from './decode.ts';
import { frameExtent, type FrameExtent } from './frames.ts';
import { sniffImage, type ImageInfo } from './sniff.ts';

/** How an image is shown to the model: as it is, downscaled to a size, or not at all (and why). */
export type ImageShowing =
  | { readonly as: 'original' }
  | { readonly as: 'downscaled'; readonly width: number; readonly height: number }
  | { readonly as: 'described'; readonly why: string };

/** `frame 2 is 65535×65535 px at (0, 0)`: the frame that reaches past the size the header gives. */
function beyondText(image: ImageInfo, extent: FrameExtent): string {
  const frame = extent.beyond;
  return frame === undefined
    ? ''
    : `its header says ${image.width}×${image.height} px, but frame ${frame.index} is ${frame.width}×${frame.height} px at (${frame.x}, ${frame.y}), so its frames cover ${extent.width}×${extent.height} px; `;
}

/**
 * Decided from the sizes alone, before any decoding: the size the header gives (`image`) and the
 * space every frame covers (`extent`, frames.ts). Security: the bounds hold for the frames, not
 * only the header, since a decoder allocates for each frame's own size.
 */
export function imageShowing(image: ImageInfo, extent: FrameExtent): ImageShowing {
  const longest = Math.max(extent.width, extent.height);
  if (longest <= IMAGE_SHOWN_MAX_SIDE && image.bytes <= IMAGE_MAX_BYTES) return { as: 'original' };
  const beyond = beyondText(image, extent);
  if (image.mime === 'image/webp') {
    // No pure-JavaScript WebP decoder is bundled: within the model's bound it goes as it is.
    return image.bytes <= IMAGE_MAX_BYTES && longest <= IMAGE_MAX_SIDE
      ? { as: 'original' }
      : {
          as: 'described',
          why: `Not shown as an image: ${beyond}a WebP over ${formatBytes(IMAGE_MAX_BYTES)} or ${IMAGE_MAX_SIDE} px a side is not downscaled here. Ask the user for a PNG or JPEG copy, or a smaller one.`,
        };
  }
  if (extent.width * extent.height > IMAGE_DECODE_MAX_PIXELS || image.bytes > IMAGE_DECODE_MAX_BYTES) {
    const size =
      beyond === '' ? `at ${image.width}×${image.height} px and ${formatBytes(image.bytes)} it is` : `${beyond}that is`;
    return {
      as: 'described',
      why: `Not shown as an image: ${size} over what is decoded to downscale it (${IMAGE_DECODE_MAX_PIXELS / 1_000_000} megapixels, ${formatBytes(IMAGE_DECODE_MAX_BYTES)}). Ask the user for a smaller copy.`,
    };
  }
  // The decoder gives the header's size: that is what is scaled.
  const scale = Math.min(1, IMAGE_SHOWN_MAX_SIDE / Math.max(image.width, image.height));
  return {
    as: 'downscaled',
    width: Math.max(1, Math.round(image.width * scale)),
    height: Math.max(1, Math.round(image.height * scale)),
  };
}

/**
 * What an image file is and how the model is shown it, from its bytes (read up to
 * IMAGE_DECODE_MAX_BYTES) and its size on disk; undefined when the bytes are no PNG, JPEG, GIF or WebP.
 */
export function lookAtImage(
  bytes: Uint8Array,
  fileBytes: number,
): { readonly image: ImageInfo; readonly showing: ImageShowing } | undefined {
  const image = sniffImage(bytes, fileBytes);
  if (image === undefined) return undefined;
  return { image, showing: imageShowing(image, frameExtent(bytes, image.mime, image.width, image.height)) };
}

/** The text that says how the model is shown the image, after its "Image: …" line. */
export function showingNote(showing: ImageShowing): string | undefined {
  if (showing.as === 'downscaled')
    return `Shown to you downscaled to ${showing.width}×${showing.height} px; the file is unchanged.`;
  return showing.as === 'described' ? showing.why : undefined;
}

/**
 * The image part the model is given: the file's bytes, or the image decoded and downscaled on a
 * worker thread (decode.ts) that `signal` ends.
 */
export async function imageShown(
  bytes: Uint8Array,
  image: ImageInfo,
  showing: ImageShowing,
  signal: AbortSignal,
): Promise<ImagePart | Unshown | undefined> {
  if (showing.as === 'original') return { mime: image.mime, data: bytes };
  if (showing.as === 'described') return undefined;
  return decodeInWorker({ bytes, mime: image.mime, width: showing.width, height: showing.height }, { signal });
}
