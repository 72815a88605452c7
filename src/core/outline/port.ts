import type { ProblemScope } from '../problems/port.ts';

/** One symbol a document symbol provider reports (VS Code's outline). Lines are 1-based. */
export interface CodeSymbol {
  readonly name: string;
  /** "class", "function", "method", … (VS Code's SymbolKind, lower case). */
  readonly kind: string;
  readonly startLine: number;
  readonly endLine: number;
  readonly children: readonly CodeSymbol[];
}

/** The host's document symbol providers; none in the CLI. */
export interface OutlinePort {
  /** The file's symbols; undefined when no provider answers for it (no language extension for it, or not in time). */
  symbols(file: ProblemScope, signal: AbortSignal): Promise<readonly CodeSymbol[] | undefined>;
}
