import type { SandboxSearch } from '../core/search/port.ts';
import { createRipgrepSearch } from '../core/search/ripgrep.ts';
import { locateRipgrep } from '../core/search/ripgrep-binary.ts';

/** The CLI's search backend: ripgrep from @vscode/ripgrep, else PATH; none without it. */
export function createSearchBackend(warn: (message: string) => void): { search: SandboxSearch; ripgrepPath: string } | undefined {
  const rg = locateRipgrep();
  if (!rg) {
    warn('ripgrep was not found (neither @vscode/ripgrep nor PATH): search_files, find_files and artifact_grep are unavailable.');
    return undefined;
  }
  return { search: createRipgrepSearch({ rgPath: rg.path }), ripgrepPath: rg.path };
}
