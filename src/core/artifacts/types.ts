/* What the artifact store and the artifact_* contracts hand out: handles, pages, grep and query results. */
import type { ModelPath } from '../paths.ts';
import type { FileEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import type { JsonSummary, JsonType } from './json.ts';
import type { LineIndex } from './line-index.ts';
import type { Heading } from '../outline/heading.ts';
import type { SymbolSection } from '../outline/symbols.ts';

export type { SymbolOutline } from '../outline/symbols.ts';

export type { Outline } from './markdown.ts';
export type { Heading } from '../outline/heading.ts';
export type { JsonSummary, JsonType } from './json.ts';

/** `result`: a tool's result too large for one page (see results/pager.ts), not a file. */
export type ArtifactKind = 'text' | 'json' | 'markdown' | 'result';

/** What open_file returns: a handle, never content. */
export interface ArtifactHandle {
  readonly callId: string;
  /** The file as the model addresses it. */
  readonly path: string;
  /** Bytes of the file when it was opened. */
  readonly bytes: number;
  readonly lines: number;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly binary: boolean;
  /** The file's modification time when it was opened (ISO 8601). */
  readonly mtime: string;
  /** Set when the file has more than one name (hard links): how many. */
  readonly links?: number;
}

/** An open artifact as a host lists it. */
export interface ArtifactInfo extends ArtifactHandle {
  readonly kind: ArtifactKind;
  readonly source: ModelPath;
  /** Clock times. */
  readonly openedAt: number;
  readonly lastUsedAt: number;
  /** Disk space the snapshot takes. */
  readonly spoolBytes: number;
  /** A result artifact: the most of the result held in memory at once while it was written. */
  readonly heldBytes?: number;
}

export interface PageLine {
  /** 1-based line number. */
  readonly n: number;
  /** At most MAX_LINE_CHARS characters, without the line terminator. */
  readonly text: string;
  /** Set when the line was cut: the whole line's length in bytes. */
  readonly cutBytes?: number;
}

export interface ArtifactPage {
  readonly callId: string;
  readonly path: string;
  readonly totalLines: number;
  /** First line in `lines` (the requested offset). */
  readonly startLine: number;
  /** Last line in `lines` (startLine - 1 when the page is empty). */
  readonly endLine: number;
  readonly lines: readonly PageLine[];
  /** The page stopped at the PAGE_MAX_BYTES cap before `limit` lines. */
  readonly truncated: boolean;
  /** The offset to read next, when lines follow. */
  readonly nextOffset?: number;
  /** A result artifact still being written: `totalLines` are the lines so far. */
  readonly spooling?: true;
}

export interface GrepOptions {
  readonly pattern: string;
  readonly literal?: boolean;
  readonly ignoreCase?: boolean;
  readonly maxResults?: number;
  readonly context?: number;
}

export interface GrepLine extends PageLine {
  /** A matching line, or a context line around one. */
  readonly match: boolean;
  /** Binary artifacts: the byte offset of the first match on the line. */
  readonly byteOffset?: number;
}

/** What a grep found, before its lines are read: what the header and the notes say. */
export interface GrepHead {
  readonly callId: string;
  readonly path: string;
  readonly pattern: string;
  readonly literal: boolean;
  readonly binary: boolean;
  /** Matching lines found (at most maxResults). */
  readonly matchCount: number;
  readonly maxResults: number;
  /** Set when the maxResults asked for was over GREP_MAX_RESULTS (and so capped to it): what was asked. */
  readonly maxResultsAsked?: number;
  /** More matching lines exist beyond maxResults. */
  readonly limited: boolean;
  /** Context lines were asked for a binary artifact and left out. */
  readonly contextOmitted: boolean;
}

export interface ArtifactGrepResult extends GrepHead {
  /** Matching and context lines in file order; a gap between groups is a jump in `n`. */
  readonly lines: readonly GrepLine[];
}

export type ArtifactQueryResult =
  | {
      readonly kind: 'json';
      readonly callId: string;
      readonly path: string;
      readonly pointer: string;
      readonly node: JsonSummary;
      readonly text: string;
      readonly truncated: boolean;
    }
  | {
      readonly kind: 'markdown';
      readonly callId: string;
      readonly path: string;
      readonly heading: Heading;
      readonly page: ArtifactPage;
    }
  | {
      readonly kind: 'symbol';
      readonly callId: string;
      readonly path: string;
      readonly symbol: SymbolSection;
      readonly page: ArtifactPage;
    };

export interface JsonShape {
  readonly type: JsonType;
  readonly size?: number;
  readonly startLine: number;
  readonly endLine: number;
  /** Members (object) or the first items (array) with their types and sizes. */
  readonly members: ReadonlyArray<{
    readonly key: string | number;
    readonly type: JsonType;
    readonly size?: number;
    readonly line: number;
  }>;
  /** Members not listed. */
  readonly omitted: number;
  /** For an array: how many items of each type. */
  readonly itemTypes?: Partial<Record<JsonType, number>>;
}

export type ArtifactChange = { readonly type: 'opened' | 'evicted' | 'closed'; readonly callId: string };

/** The writer's side of a result artifact (from `openResult`). */
export interface ResultArtifactWriter {
  readonly callId: string;
  readonly spoolPath: string;
  /** More lines are in the spool file, up to `index`. */
  grow(index: LineIndex): void;
  /**
   * Asked before `bytes` more are written: undefined when they fit the artifact disk budget (least
   * recently used artifacts are evicted to make room, as for an open), else why they do not (the
   * budget is reached, or the artifact is gone: evicted or closed).
   */
  room(bytes: number): string | undefined;
  /** The spool file is complete; `heldBytes` is the most of the result that was held in memory at once. */
  end(index: LineIndex, heldBytes: number): Promise<void>;
  /** The result failed before anyone was told of it: the artifact goes. */
  remove(): Promise<void>;
}
