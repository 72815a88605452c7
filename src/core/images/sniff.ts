import type * as ImageSize from 'image-size';
import { lazyModule } from '../lazy-module.ts';

/** The image formats a model is given as images, by the type image-size reads from the bytes. */
const MIME: Readonly<Record<string, string>> = {
  png: 'image/png',
  jpg: 'image/jpeg',
  gif: 'image/gif',
  webp: 'image/webp',
};

export interface ImageInfo {
  readonly mime: string;
  readonly width: number;
  readonly height: number;
  readonly bytes: number;
}

/** Names that say "image": a file so named whose bytes are not one is told apart. */
export const IMAGE_NAME = /\.(png|jpe?g|gif|webp)$/i;

/**
 * A PNG, JPEG, GIF or WebP image, recognised from its bytes (never its name), with its size in
 * pixels; undefined for anything else (or bytes image-size cannot read as one).
 */
export function sniffImage(bytes: Uint8Array, fileBytes: number): ImageInfo | undefined {
  try {
    // image-size (~13 KB) loads on the first file that may be an image; the module is its default export, imageSize.
    const size = lazyModule<typeof ImageSize.imageSize>('image-size')(bytes);
    const mime = size.type === undefined ? undefined : MIME[size.type];
    if (mime === undefined || !(size.width > 0) || !(size.height > 0)) return undefined;
    return { mime, width: size.width, height: size.height, bytes: fileBytes };
  } catch {
    return undefined;
  }
}
