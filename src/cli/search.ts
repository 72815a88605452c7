import type { SandboxSearch } from '../core/search/port.ts';
import { createRipgrepSearch } from '../core/search/ripgrep.ts';
import { locateRipgrep } from '../core/ripgrep/binary.ts';
import { createRipgrep, type Ripgrep } from '../core/ripgrep/process.ts';

/** The CLI's ripgrep (from @vscode/ripgrep, else PATH) and the search backend over it; none without it. */
export function createSearchBackend(
  warn: (message: string) => void,
): { search: SandboxSearch; ripgrep: Ripgrep } | undefined {
  const rg = locateRipgrep();
  if (!rg) {
    warn(
      'ripgrep was not found (neither @vscode/ripgrep nor PATH): search_files, find_files and artifact_grep are unavailable.',
    );
    return undefined;
  }
  const ripgrep = createRipgrep(rg.path);
  return { search: createRipgrepSearch(ripgrep), ripgrep };
}
