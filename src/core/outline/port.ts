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

/** A symbol a workspace symbol provider finds (VS Code's "Go to Symbol in Workspace"). Lines are 1-based. */
export interface WorkspaceSymbol {
  readonly name: string;
  readonly kind: string;
  /** What it is declared in ("Ledger" for a method), where the provider says. */
  readonly container?: string;
  /** Its file, by its address in the host's terms (what a WorkspaceRoot's `address` is a prefix of). */
  readonly address: string;
  readonly startLine: number;
  readonly endLine: number;
}

/** The host's symbol providers; none in the CLI. */
export interface OutlinePort {
  /** The file's symbols; undefined when no provider answers for it (no language extension for it, or not in time). */
  symbols(file: ProblemScope, signal: AbortSignal): Promise<readonly CodeSymbol[] | undefined>;
  /** The workspace's symbols whose names match `query` (as the providers match: fuzzily); undefined when none answers in time. */
  workspaceSymbols(query: string, signal: AbortSignal): Promise<readonly WorkspaceSymbol[] | undefined>;
}
