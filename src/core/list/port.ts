import type { EntryType } from '../ports.ts';
import type { ResolvedPath } from '../paths.ts';

export interface ListedEntry {
  /** Relative to the listed folder, "/"-separated. */
  readonly path: string;
  readonly type: EntryType;
  readonly size?: number;
  readonly depth: number;
}

/**
 * What a directory backend yields: entries in listing order, a run of them at a time (one frame an
 * entry would cost a promise each). `list_directory` has no `limit`, so a `limit` frame is a protocol
 * violation: the listing is discarded with a narrated io failure, never shown as "depth-limited".
 */
export type ListFrame =
  | { readonly kind: 'entries'; readonly entries: readonly ListedEntry[] }
  | { readonly kind: 'limit'; readonly limit: number }
  | { readonly kind: 'done'; readonly complete: true };

export interface ListQuery {
  /** The folder, already gated and resolved. */
  readonly folder: ResolvedPath;
  /** Omitted: the whole tree. */
  readonly maxDepth?: number;
  /**
   * Security: true for a folder-relative path the policy denies. A backend never enters such a
   * folder nor yields a link that leads to such a path; the listing drops every other such entry it yields.
   */
  readonly hidden: (relFromRoot: string) => boolean;
  readonly signal: AbortSignal;
}

/** A directory-listing backend: entries in display order (folders first, then by name), then `done`. */
export interface DirectoryLister {
  /** Named in errors. */
  readonly name: string;
  list(query: ListQuery): AsyncIterable<ListFrame>;
}
