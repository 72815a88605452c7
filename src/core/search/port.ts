import type { Policy } from '../policy/policy.ts';

/**
 * One folder to search: a workspace folder's local path and, under it, what to search. The tool
 * gated and resolved `path` before it reaches the backend (no `..`, no symlinked component).
 */
export interface SearchScope {
  /** The workspace folder's name; frames carry it back so the tool can display paths. */
  readonly folder: string;
  /**
   * The workspace folder's local path: the backend's working directory. Globs, policy rules and the
   * paths in frames are all relative to it.
   */
  readonly cwd: string;
  /** What to search under, relative to `cwd`, "/"-separated; "" is the whole folder. */
  readonly path: string;
}

/** The policy as a backend needs it: exclusions to pass down, and a check for every result. */
export type SearchPolicy = Pick<Policy, 'decide' | 'hidesFromSearch' | 'searchExclusions' | 'clearOfRules'>;

export interface SearchQueryBase {
  /** Searched one after the other; `limit` counts across all of them. */
  readonly scopes: readonly SearchScope[];
  /**
   * Security: the backend must keep the policy's deny/ask paths out of the search (so it never opens
   * them, where it can) and must drop every frame whose path `hidesFromSearch`.
   */
  readonly policy: SearchPolicy;
  /**
   * An integer >= 1: at most this many match/path frames, then a `limit` frame if more exist.
   * Omitted: every result, then `{kind: 'done', complete: true}`. A backend must never impose a bound
   * of its own when this is omitted (see `SandboxSearch`).
   */
  readonly limit?: number;
  /** Omitted: no depth bound at all. 1 = only entries directly under the scope's path. */
  readonly maxDepth?: number;
  /** Include dot-prefixed files and folders. */
  readonly hidden?: boolean;
  /** Disregard .gitignore, .ignore and similar files. */
  readonly noIgnore?: boolean;
  /** Only meaningful when the backend declares `supportsFollow`; otherwise it must throw. */
  readonly follow?: boolean;
  /** Aborting stops the search at once (child processes are killed) and the iteration throws a cancellation. */
  readonly signal: AbortSignal;
}

export interface ContentQuery extends SearchQueryBase {
  /** A regular expression (ripgrep syntax), or a fixed string when `literal`. */
  readonly pattern: string;
  readonly literal?: boolean;
  readonly ignoreCase?: boolean;
  /**
   * Which files are searched: globs relative to the folder, "!" to exclude, with ripgrep's `--glob`
   * meaning: a file matching any of `globs`/`iglobs` is searched, even a dot-prefixed or ignored one.
   */
  readonly globs?: readonly string[];
  /** As `globs`, matched case-insensitively (ripgrep `--iglob`). */
  readonly iglobs?: readonly string[];
}

export interface PathQuery extends SearchQueryBase {
  /**
   * The files to list: a glob with ripgrep's syntax over folder-relative paths (without "/" it
   * matches the name at any depth). It only narrows: a dot-prefixed or ignored file is listed only
   * with `hidden` / `noIgnore`, whatever the glob says.
   */
  readonly glob: string;
  /** A second glob the paths must also match, case-insensitively. */
  readonly iglob?: string;
}

/** One matching line. `text` has no line terminator and at most 2,000 characters (`cut` when shortened). */
export interface MatchFrame {
  readonly kind: 'match';
  readonly folder: string;
  /** Relative to the folder, "/"-separated. */
  readonly path: string;
  /** 1-based. */
  readonly line: number;
  readonly text: string;
  readonly cut?: true;
}

export interface PathFrame {
  readonly kind: 'path';
  readonly folder: string;
  /** Relative to the folder, "/"-separated. */
  readonly path: string;
}

/** Something the caller should know about the results (e.g. a path that could not be read). */
export interface NoteFrame {
  readonly kind: 'note';
  /** One sentence for the model. */
  readonly message: string;
  /** The path the note is about, when there is one (never a path the policy hides). */
  readonly folder?: string;
  readonly path?: string;
}

/** Terminal frame when `limit` was given and more results exist than it allows. */
export interface LimitFrame {
  readonly kind: 'limit';
  readonly limit: number;
}

/** Terminal frame when every result was emitted. */
export interface DoneFrame {
  readonly kind: 'done';
  readonly complete: true;
}

export type SearchFrame = MatchFrame | PathFrame | NoteFrame | LimitFrame | DoneFrame;

/**
 * Frames in the order they came, batched as the backend has them (never empty): a search with
 * thousands of results costs one step of the iteration per batch, not per result.
 */
export type SearchBatch = readonly SearchFrame[];

/**
 * The search backend. The tools' schemas are built from `supportsFollow`, and the tools reach the
 * backend only with scopes they gated and resolved.
 *
 * Contract for every backend:
 * - Both queries yield frames, in batches, and end with exactly one terminal frame: `limit` (only
 *   when the query gave `limit` and more results exist) or `{kind: 'done', complete: true}`.
 * - Omitted `limit` means unbounded. A backend that cannot honour that (it has a hard internal cap)
 *   must refuse a call without `limit`, or with a `limit` above its cap, by throwing a narrated
 *   `E_SANDBOX_UNSUPPORTED` that names its cap. It must never truncate silently and report `done`.
 * - Security: paths the policy hides are never opened where the backend can avoid it, and never
 *   appear in a frame, not even in a note.
 * - `follow: true` from a backend that does not declare `supportsFollow` is refused with a thrown
 *   error, whoever the caller is.
 * - Aborting the query's signal stops all work at once (child processes killed) and the iteration
 *   throws a cancellation error (`isCancellation`).
 * A query may be refused by throwing from the call itself or from the first step of the iteration.
 */
export interface SandboxSearch {
  /** The backend's declaration that following symlinks has passed a containment audit. */
  readonly supportsFollow: boolean;
  /** File contents: `match` frames, grouped by file. */
  searchContent(query: ContentQuery): AsyncIterable<SearchBatch>;
  /** File paths: `path` frames. */
  findPaths(query: PathQuery): AsyncIterable<SearchBatch>;
}
