import type { WorkspaceRoot } from '../paths.ts';

export const PROBLEM_SEVERITIES = ['error', 'warning', 'information', 'hint'] as const;
export type ProblemSeverity = (typeof PROBLEM_SEVERITIES)[number];

/** One problem a language service reports for a file (VS Code's Problems panel). Lines and columns are 1-based. */
export interface Problem {
  readonly severity: ProblemSeverity;
  /** Who reports it ("ts", "eslint"). */
  readonly source?: string;
  /** The reporter's code for it ("2322"). */
  readonly code?: string;
  readonly startLine: number;
  readonly startColumn: number;
  readonly endLine: number;
  readonly endColumn: number;
  readonly message: string;
}

/** A file's problems, the file by its address in the host's terms (what a WorkspaceRoot's `address` is a prefix of). */
export interface FileProblems {
  readonly address: string;
  readonly problems: readonly Problem[];
}

/** A file or folder of the workspace, as the host is asked to look at it. */
export interface ProblemScope {
  readonly root: WorkspaceRoot;
  readonly rel: string;
}

/**
 * The host's language services (VS Code's diagnostics). A host without them (the CLI) has none, and
 * the problems tool says so.
 */
export interface ProblemsPort {
  /**
   * Every file's problems as reported now, after the files in `open` were opened for the language
   * services (which only check open documents) and their reports settled, or `signal` aborted.
   */
  collect(open: readonly ProblemScope[], signal: AbortSignal): Promise<readonly FileProblems[]>;
}
