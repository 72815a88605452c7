import type * as IconvLite from 'iconv-lite';
import { lazyModule } from '../lazy-module.ts';

/**
 * iconv-lite, loaded on first use. With its CJK tables it is ~490 KB minified, almost the size of
 * the whole extension, and only a file that is not UTF-8 needs it.
 */
export function iconv(): typeof IconvLite {
  return lazyModule<typeof IconvLite>('iconv-lite');
}
