import { readdirSync, readFileSync, statSync } from 'node:fs';
import * as nodePath from 'node:path';

/** Every file under `dir`, by path relative to the working folder (the repository root in tests). */
export function filesUnder(dir: string): string[] {
  return readdirSync(dir).flatMap((name) => {
    const full = nodePath.join(dir, name);
    return statSync(full).isDirectory() ? filesUnder(full) : [full];
  });
}

/**
 * The files of this repository a source file imports (`import`, `import type`, `export … from`,
 * side-effect imports and `import('…')`), by path; packages are left out.
 */
export function relativeImportsOf(file: string): string[] {
  const source = readFileSync(file, 'utf8');
  const specifiers = [
    ...source.matchAll(/^\s*(?:import|export)\b[^'"]*?\bfrom\s+['"]([^'"]+)['"]/gm),
    ...source.matchAll(/^\s*import\s+['"]([^'"]+)['"]/gm),
    ...source.matchAll(/\bimport\(\s*['"]([^'"]+)['"]\s*\)/g),
  ].map((m) => m[1]!);
  return specifiers.filter((s) => s.startsWith('.')).map((s) => nodePath.join(nodePath.dirname(file), s));
}
