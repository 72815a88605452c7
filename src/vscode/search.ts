import type { SandboxSearch } from '../core/search/port.ts';

/** The ripgrep search backend for a located rg binary (wired once the backend lands). */
export function createSearch(_rgPath: string): SandboxSearch | undefined {
  return undefined;
}
