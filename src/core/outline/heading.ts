/**
 * One heading of a file's outline and the section it opens: a Markdown heading (artifacts/markdown.ts),
 * or a code symbol as a section (symbols.ts). Queries and renderings of either take this shape.
 */
export interface Heading {
  /** 1 at the top; 1-6 for Markdown. */
  readonly level: number;
  /** The heading's text as written (inline Markdown kept, closing #s removed). */
  readonly title: string;
  /** Titles from the outermost enclosing heading down to this one, joined by "/". */
  readonly path: string;
  /** 1-based first line of the heading (for a setext heading, its text line). */
  readonly startLine: number;
  /** 1-based last line of the section: before the next heading of the same or a higher level. */
  readonly endLine: number;
}
