import type { Heading } from './heading.ts';
import type { CodeSymbol } from './port.ts';

/** Symbols an outline holds at most; the rest are found with artifact_grep. */
export const OUTLINE_MAX_SYMBOLS = 1000;
/** Largest file whose outline is asked for: a provider parses the whole document in the host's memory. */
export const OUTLINE_MAX_BYTES = 4 * 1024 * 1024;

/** A code symbol as a section of the file: its nesting `level` (1 at the top), its `path` of names ("Session/invoke"). */
export interface SymbolSection extends Heading {
  readonly kind: string;
}

export interface SymbolOutline {
  readonly symbols: readonly SymbolSection[];
  /** Set when the outline stops early (more than OUTLINE_MAX_SYMBOLS): how many were left out. */
  readonly omitted?: number;
}

const oneLine = (name: string): string => name.replace(/\s+/g, ' ').trim().slice(0, 200);

/** The provider's symbol tree in document order, each with its path of names, bounded. */
export function flattenSymbols(tree: readonly CodeSymbol[], max = OUTLINE_MAX_SYMBOLS): SymbolOutline {
  const out: SymbolSection[] = [];
  let total = 0;
  const walk = (symbols: readonly CodeSymbol[], level: number, parent: string): void => {
    for (const s of [...symbols].sort((a, b) => a.startLine - b.startLine)) {
      total++;
      const title = oneLine(s.name);
      const path = parent ? `${parent}/${title}` : title;
      if (out.length < max)
        out.push({
          level,
          title,
          path,
          kind: s.kind,
          startLine: s.startLine,
          endLine: Math.max(s.startLine, s.endLine),
        });
      walk(s.children, level + 1, path);
    }
  };
  walk(tree, 1, '');
  return total > out.length ? { symbols: out, omitted: total - out.length } : { symbols: out };
}
