import { createJimp } from '@jimp/core';
import gif from '@jimp/js-gif';
import jpeg from '@jimp/js-jpeg';
import png from '@jimp/js-png';
import { methods as resize } from '@jimp/plugin-resize';

/**
 * Decoders and encoders for the images that get downscaled (PNG, JPEG, GIF) and the resize: the
 * parts of jimp fit.ts needs, bundled into a file of their own that loads on first use.
 */
export const Jimp = createJimp({ formats: [png, jpeg, gif], plugins: [resize] });
