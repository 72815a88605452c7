import { createRequire } from 'node:module';
import type * as IconvLite from 'iconv-lite';

// Set by esbuild.mjs in the bundles: the file iconv-lite is bundled into, next to them.
declare const WT_ICONV_BUNDLE: string | undefined;

let loaded: typeof IconvLite | undefined;

/**
 * iconv-lite, loaded on first use. With its CJK tables it is ~490 KB minified, almost the size of
 * the whole extension, and only a file that is not UTF-8 needs it: the bundles keep it in a file of
 * its own, so activation never pays for it.
 */
export function iconv(): typeof IconvLite {
  if (loaded !== undefined) return loaded;
  const bundled = typeof WT_ICONV_BUNDLE === 'string' ? WT_ICONV_BUNDLE : undefined;
  const load = createRequire(bundled !== undefined ? __filename : import.meta.url);
  loaded = load(bundled ?? 'iconv-lite') as typeof IconvLite;
  return loaded;
}
