/** Largest image passed to the model, in bytes and in pixels a side (what model APIs accept); larger ones are described, not sent. */
export const IMAGE_MAX_BYTES = 5 * 1024 * 1024;
export const IMAGE_MAX_SIDE = 8000;

/**
 * The longest side the model is shown: a larger image is downscaled to it first. Model APIs resize
 * anything larger themselves (Anthropic's to about this size), so sending more pixels only costs
 * bytes on the way.
 */
export const IMAGE_SHOWN_MAX_SIDE = 1568;

/** Largest image decoded to downscale it: the pixels its frames cover (4 bytes each while decoded) and its file. */
export const IMAGE_DECODE_MAX_PIXELS = 25_000_000;
export const IMAGE_DECODE_MAX_BYTES = 32 * 1024 * 1024;
