import type { SandboxSearch } from '../core/search/port.ts';

/** The CLI's search backend: ripgrep when it can be found (wired once the backend lands). */
export function createSearchBackend(): SandboxSearch | undefined {
  return undefined;
}
