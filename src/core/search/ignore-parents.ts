import { realpathSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';

/**
 * What ripgrep looks for in each folder above the one it searches (its ignore crate's `add_parents`):
 * the ignore files it reads there, and the repository markers (`.git` brings `.git/info/exclude`).
 */
const READ_ABOVE = ['.gitignore', '.ignore', '.rgignore', '.git', '.jj'] as const;

/**
 * Whether a folder above `root` holds anything ripgrep reads ignore rules from. Where none does,
 * `--no-ignore-parent` changes nothing ripgrep lists, and spares it a path joined and tested against
 * every folder above for each walked file: about 4% of a large listing. A name that cannot be
 * checked (any error but "not found") counts as present, and so does a root without a real path.
 * Synchronous: a few dozen stats of local folders, ~0.1 ms, where the promise of each cost more.
 */
export function ignoreRulesAbove(root: string): boolean {
  let real: string;
  try {
    // ripgrep looks above its root's real path.
    real = realpathSync.native(root);
  } catch {
    return true;
  }
  for (let dir = real, parent = nodePath.dirname(dir); parent !== dir; dir = parent, parent = nodePath.dirname(dir)) {
    if (READ_ABOVE.some((name) => present(nodePath.join(parent, name)))) return true;
  }
  return false;
}

function present(path: string): boolean {
  try {
    return statSync(path, { throwIfNoEntry: false }) !== undefined;
  } catch {
    return true;
  }
}
