import MarkdownIt, { type Token } from 'markdown-it';

/*
 * How a client that renders Markdown (HTML allowed, as many do) reads a question: a CommonMark
 * parser's tokens. Tests check what markup a question holds and what text the person reads.
 */
const parser = new MarkdownIt({ html: true, linkify: false });

/** Every token of `markdown`, the inline ones included, in order. */
export function markdownTokens(markdown: string): Token[] {
  return parser.parse(markdown, {}).flatMap((token) => [token, ...(token.children ?? [])]);
}

/** The markup kinds `markdown` holds (token types other than text, paragraphs and line breaks), in order. */
export function markupOf(markdown: string): string[] {
  return markdownTokens(markdown)
    .map((t) => t.type)
    .filter(
      (type) => !['inline', 'text', 'text_special', 'paragraph_open', 'paragraph_close', 'softbreak'].includes(type),
    );
}

/** The text the person reads in each paragraph of `markdown` (escapes and entities resolved, markup dropped). */
export function paragraphsOf(markdown: string): string[] {
  return parser
    .parse(markdown, {})
    .filter((t) => t.type === 'inline')
    .map((t) => (t.children ?? []).map((c) => (c.type === 'softbreak' ? '\n' : c.content)).join(''));
}
