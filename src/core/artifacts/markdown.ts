import type MarkdownItType from 'markdown-it';
import { lazyModule } from '../lazy-module.ts';
import { nearest } from './nearest.ts';
import type { Heading } from '../outline/heading.ts';

/**
 * Blank YAML front matter ("---" ... "---" at the top) while keeping the line count: its closing
 * "---" would otherwise turn the line above it into a setext heading.
 */
function blankFrontMatter(text: string): string {
  if (!/^---\r?\n/.test(text)) return text;
  const close = /\r?\n(?:---|\.\.\.)[ \t]*(?:\r?\n|$)/.exec(text.slice(3));
  if (!close) return text;
  const end = 3 + close.index + close[0].length;
  return text.slice(0, end).replace(/[^\r\n]/g, '') + text.slice(end);
}

/** Headings an outline holds at most: parsing stops after them (4 MB of "#" lines are 2 million headings). */
export const OUTLINE_MAX_HEADINGS = 1000;
/** Lines handed to markdown-it at most: it allocates several numbers per line of what it parses, up front. */
export const OUTLINE_MAX_LINES = 200_000;
/** Characters of a heading's title kept; longer ones end with "…". */
export const TITLE_MAX_CHARS = 200;

export interface Outline {
  readonly headings: Heading[];
  /** Set when parsing stopped early (after OUTLINE_MAX_HEADINGS headings or OUTLINE_MAX_LINES lines): the line it stopped at. */
  readonly stoppedAtLine?: number;
}

/**
 * The heading outline of a Markdown document, from markdown-it's block parse (CommonMark), bounded: markdown-it parses at most OUTLINE_MAX_LINES lines, and its block parse
 * stops once it has found `maxHeadings` headings (a rule placed first ends it), so memory and the
 * outline stay small whatever the document holds.
 */
export function parseOutline(text: string, totalLines: number, maxHeadings = OUTLINE_MAX_HEADINGS): Outline {
  let cut = -1;
  for (let n = 0; n < OUTLINE_MAX_LINES && cut < text.length; n++) {
    cut = text.indexOf('\n', cut + 1);
    if (cut === -1) break;
  }
  const linesCut = cut !== -1 && cut + 1 < text.length;
  // markdown-it (~95 KB with its helpers) loads on the first Markdown outline, not at activation.
  const MarkdownIt = lazyModule<typeof MarkdownItType>('markdown-it');
  const md = new MarkdownIt('commonmark');
  // Only block structure matters; inline parsing is most of the cost and memory.
  md.core.ruler.disable(['inline']);
  let headings = 0;
  let counted = 0;
  let stoppedAtLine: number | undefined;
  md.block.ruler.before('table', 'wt_outline_cap', (state, startLine, endLine, silent) => {
    for (; counted < state.tokens.length; counted++) if (state.tokens[counted]!.type === 'heading_open') headings++;
    if (headings < maxHeadings) return false;
    if (silent) return true;
    stoppedAtLine ??= startLine + 1;
    state.line = endLine;
    return true;
  });
  const tokens = md.parse(blankFrontMatter(linesCut ? text.slice(0, cut + 1) : text), {});
  if (linesCut) stoppedAtLine ??= OUTLINE_MAX_LINES + 1;
  const found: Array<{ level: number; title: string; startLine: number }> = [];
  for (let i = 0; i < tokens.length && found.length < maxHeadings; i++) {
    const token = tokens[i]!;
    if (token.type !== 'heading_open' || !token.map) continue;
    const title = tokens[i + 1]?.content.trim() ?? '';
    found.push({
      level: Number(token.tag.slice(1)),
      title: title.length > TITLE_MAX_CHARS ? `${title.slice(0, TITLE_MAX_CHARS)}…` : title,
      startLine: token.map[0] + 1,
    });
  }
  const ends = found.map(() => (stoppedAtLine === undefined ? totalLines : stoppedAtLine - 1));
  const open: number[] = [];
  const chain: string[] = [];
  const paths = found.map((h, i) => {
    // The heading closes every open section of its level or deeper.
    while (open.length > 0 && found[open[open.length - 1]!]!.level >= h.level) {
      ends[open.pop()!] = h.startLine - 1;
      chain.pop();
    }
    open.push(i);
    chain.push(h.title);
    return chain.join('/');
  });
  const headingList = found.map((h, i) => ({
    level: h.level,
    title: h.title,
    path: paths[i]!,
    startLine: h.startLine,
    endLine: ends[i]!,
  }));
  return stoppedAtLine === undefined ? { headings: headingList } : { headings: headingList, stoppedAtLine };
}

const plain = (s: string): string =>
  s
    .replace(/[`*_~]/g, '')
    .replace(/\s+/g, ' ')
    .trim()
    .toLowerCase();

/**
 * The section a heading path selects: "Install/Linux" is a heading "Linux" inside a section
 * "Install"; the first segment may be at any level, and each next one lies within the previous
 * section (any deeper level). The first match in document order wins; titles are compared as
 * written, then ignoring case and inline markup.
 */
export function findSection(headings: readonly Heading[], select: string): Heading | undefined {
  const segments = select.split('/').map((s) => s.trim());
  while (segments.length > 0 && segments[0] === '') segments.shift();
  while (segments.length > 0 && segments[segments.length - 1] === '') segments.pop();
  if (segments.length === 0) return undefined;
  for (const equal of [(a: string, b: string) => a === b, (a: string, b: string) => plain(a) === plain(b)]) {
    const search = (from: number, within: Heading | undefined, rest: readonly string[]): Heading | undefined => {
      for (let i = from; i < headings.length; i++) {
        const h = headings[i]!;
        if (within && h.startLine > within.endLine) break;
        if (within && h.level <= within.level) continue;
        // A title may itself contain "/": let it consume several segments.
        for (let take = 1; take <= rest.length; take++) {
          if (!equal(h.title, rest.slice(0, take).join('/'))) continue;
          if (take === rest.length) return h;
          const deeper = search(i + 1, h, rest.slice(take));
          if (deeper) return deeper;
        }
      }
      return undefined;
    };
    const hit = search(0, undefined, segments);
    if (hit) return hit;
  }
  return undefined;
}

/** Heading paths near `select`, for an error that lists valid selections. */
export function nearHeadings(headings: readonly Heading[], select: string, limit: number): string[] {
  const paths = [...new Set(headings.map((h) => h.path))];
  const last = select.split('/').filter(Boolean).pop() ?? select;
  const byLast = nearest(
    last,
    paths.map((p) => p.split('/').pop() ?? p),
    limit,
  ).map((title) => paths.find((p) => (p.split('/').pop() ?? p) === title)!);
  const byWhole = nearest(select, paths, limit);
  return [...new Set([...byWhole.slice(0, Math.ceil(limit / 2)), ...byLast, ...byWhole])].slice(0, limit);
}
