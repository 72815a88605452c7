import type { ImagePart } from './part.ts';

/** The decoding worker's one reply: the image to show, or why its pixels could not be decoded. */
export type DecodeReply = { readonly part: ImagePart } | { readonly failed: string };
