import type { SandboxSearch } from '../core/search/port.ts';
import { createRipgrepSearch } from '../core/search/ripgrep.ts';

/** The ripgrep search backend for a located rg binary. */
export function createSearch(rgPath: string): SandboxSearch {
  return createRipgrepSearch({ rgPath });
}
