import { lineRange, type JsonSummary } from './json.ts';
import type { Heading } from '../outline/heading.ts';
import { MAX_LINE_CHARS } from './reader.ts';
import { PAGE_MAX_BYTES } from '../paging/budget.ts';
import { PAGE_MAX_LINES } from './page.ts';
import type {
  ArtifactGrepResult,
  ArtifactHandle,
  ArtifactPage,
  ArtifactQueryResult,
  GrepHead,
  GrepLine,
  JsonShape,
  PageLine,
} from './types.ts';
import { formatBytes, plural } from '../text/format.ts';
import { isPaged, renderPaged, type ItemRenderer, type Paged } from '../paging/paged.ts';
import type { OpenWindow } from './window.ts';
import type { SymbolOutline } from '../outline/symbols.ts';
import type { ImageInfo } from '../images/sniff.ts';

/**
 * Compact renderings of artifact results for the model: a header line with the values that
 * matter, the content, and a last line saying what to call next.
 */

const KIB = PAGE_MAX_BYTES / 1024;

/** The handle line shared by the three open tools. */
export function renderHandle(h: ArtifactHandle): string {
  const facts = h.binary
    ? [`binary`, `${h.bytes} bytes`]
    : [plural(h.lines, 'line'), `${h.bytes} bytes`, h.encoding, h.eol === 'none' ? 'no line breaks' : h.eol];
  const lines = [`artifact ${h.callId}: ${h.path}, ${facts.join(', ')}, modified ${h.mtime}`];
  if (h.links)
    lines.push(`This file has ${h.links} names (hard links): the same bytes are reachable under other names.`);
  return lines.join('\n');
}

function openHint(h: ArtifactHandle, extra?: string): string {
  if (h.binary)
    return `No text lines (binary): search its bytes with artifact_grep {callId: "${h.callId}", pattern, literal: true}.`;
  return `Next: ${extra ? extra + '; ' : ''}artifact_read {callId: "${h.callId}", offset} pages it (${PAGE_MAX_LINES} lines or ${KIB} KiB a page); artifact_grep {callId: "${h.callId}", pattern} finds lines.`;
}

/** The page an open call returned with its handle, and where to read on (in place of the hint when there is one). */
export function renderWindow(h: ArtifactHandle, window: OpenWindow): string[] {
  if ('pageError' in window)
    return [
      h.binary ? 'No page: the file is binary, so it has no text lines.' : `No page: ${window.pageError}`,
      openHint(h),
    ];
  const page = window.page;
  if (page.totalLines === 0) return [`${page.path} is empty (0 lines).`];
  const readOn = `artifact_read {callId: "${h.callId}", offset: ${page.nextOffset ?? page.startLine}}`;
  if (page.lines.length === 0)
    return [`No room for its lines in this result (the files share one page): ${readOn} reads them.`];
  const header = `Lines ${page.startLine}-${page.endLine} of ${page.totalLines}:`;
  const why = window.cutToShare
    ? 'cut to share one page with the other files; '
    : page.truncated
      ? `page capped at ${KIB} KiB; `
      : '';
  const more =
    page.nextOffset === undefined
      ? '(end of file)'
      : `(${why}more: ${readOn}; artifact_grep {callId: "${h.callId}", pattern} finds lines)`;
  return [header, ...pageBody(page), more];
}

/** Several files opened in one call: each one's handle and page, or why it alone failed. */
export function renderOpenFiles(result: {
  readonly files: readonly {
    readonly path: string;
    readonly handle?: ArtifactHandle;
    readonly window?: OpenWindow;
    readonly error?: { readonly code: string; readonly message: string };
  }[];
  readonly shared?: { readonly bytes: number };
}): string {
  const opened = result.files.filter((f) => f.handle !== undefined).length;
  // A count only says something when a file failed or the pages were cut.
  const out =
    opened === result.files.length && !result.shared
      ? []
      : [
          `Opened ${opened} of ${plural(result.files.length, 'file')}${result.shared ? `; their pages share one result page (${formatBytes(result.shared.bytes)} or your token budget), so the longer ones are cut: each says where to read on` : ''}.`,
        ];
  for (const f of result.files) {
    out.push(`== ${f.handle?.path ?? f.path} ==`);
    if (f.handle === undefined) {
      out.push(f.error ? `${f.error.code}: ${f.error.message}` : 'Not opened.');
      continue;
    }
    // Each file reads as open_file {path, offset, limit} reads it.
    const compact = compactWindow(f.handle, f.window);
    if (compact !== undefined) out.push(compact);
    else out.push(renderHandle(f.handle), ...(f.window ? renderWindow(f.handle, f.window) : [openHint(f.handle)]));
  }
  return out.join('\n');
}

/** The hint, or the page asked for with the handle. */
function hintOrWindow(h: ArtifactHandle, window: OpenWindow | undefined, extra?: string): string[] {
  if (window === undefined) return [openHint(h, extra)];
  return extra && 'page' in window ? [...renderWindow(h, window), `(${extra})`] : renderWindow(h, window);
}

/** A source file's outline (its document symbol provider's), as open_file returns it. */
export function renderSymbols(h: ArtifactHandle, outline: SymbolOutline, maxSymbols = 300): string[] {
  const { symbols } = outline;
  const out = [
    `Outline (${plural(symbols.length + (outline.omitted ?? 0), 'symbol')}; line ranges are whole definitions):`,
  ];
  for (const s of symbols.slice(0, maxSymbols))
    out.push(`${'  '.repeat(s.level)}${s.kind} ${s.title}  ${s.startLine}-${s.endLine}`);
  const left = symbols.length - Math.min(symbols.length, maxSymbols) + (outline.omitted ?? 0);
  if (left > 0) out.push(`… ${plural(left, 'more symbol')} (find them with artifact_grep)`);
  const example = symbols.find((s) => s.path.includes('/')) ?? symbols[0];
  if (example)
    out.push(
      `(artifact_query {callId: "${h.callId}", select: ${JSON.stringify(example.path)}} reads a symbol's lines)`,
    );
  return out;
}

export function renderOpenFile(
  result: ArtifactHandle & {
    readonly window?: OpenWindow;
    readonly outline?: SymbolOutline;
    readonly outlineNote?: string;
    readonly image?: ImageInfo;
    readonly imageNote?: string;
  },
): string {
  const compact = compactWindow(result, result.window);
  if (compact !== undefined && !result.outline && !result.outlineNote && !result.image && !result.imageNote)
    return compact;
  const outline = result.outline
    ? renderSymbols(result, result.outline)
    : result.outlineNote
      ? [result.outlineNote]
      : [];
  const image = result.image ? [`Image: ${result.image.mime}, ${result.image.width}×${result.image.height} px.`] : [];
  const imageNote = result.imageNote ? [result.imageNote] : [];
  return [renderHandle(result), ...image, ...imageNote, ...outline, ...hintOrWindow(result, result.window)].join('\n');
}

/**
 * A text file opened with a page of it, in as few bytes as the lines themselves allow: one header
 * line (the range, the total, the handle; encoding and line ends only where they are not UTF-8 and
 * LF), then the lines as they are, unnumbered: the header's first line number counts them, and the
 * model named the path itself. A footer only when the page stopped short of the lines asked for.
 * The everyday look (a search hit, then 40 lines around it) costs no more than Copilot's read_file.
 * Each file of a batch (open_file with files) reads the same, under a line naming it.
 */
function compactWindow(h: ArtifactHandle, window: OpenWindow | undefined): string | undefined {
  if (window === undefined || !('page' in window) || h.binary || h.links) return undefined;
  const page = window.page;
  if (page.totalLines === 0 || page.lines.length === 0) return undefined;
  const unusual = [
    ...(h.encoding === 'utf8' ? [] : [h.encoding]),
    ...(h.eol === 'lf' ? [] : [h.eol === 'none' ? 'no line breaks' : h.eol]),
  ];
  const header = `lines ${page.startLine}-${page.endLine} of ${page.totalLines}${unusual.length ? ` (${unusual.join(', ')})` : ''}, artifact ${h.callId}`;
  const readOn = `artifact_read {callId: "${h.callId}", offset: ${page.nextOffset ?? page.startLine}}`;
  const stoppedShort =
    page.nextOffset === undefined
      ? []
      : window.cutToShare
        ? [`(cut to share one page with the other files; more: ${readOn})`]
        : page.truncated
          ? [`(page capped at ${KIB} KiB: ${readOn} reads on)`]
          : [];
  return [header, ...page.lines.map(lineText), ...stoppedShort].join('\n');
}

function sizeText(type: string, size: number | undefined): string {
  switch (type) {
    case 'object':
      return `object (${plural(size ?? 0, 'key')})`;
    case 'array':
      return `array (${plural(size ?? 0, 'item')})`;
    case 'string':
      return `string (${size ?? 0} chars)`;
    default:
      return type;
  }
}

export function renderOpenJson(result: { handle: ArtifactHandle; shape: JsonShape; window?: OpenWindow }): string {
  const { handle, shape } = result;
  const out = [
    renderHandle(handle),
    `JSON ${sizeText(shape.type, shape.size)}, ${lineRange(shape.startLine, shape.endLine)}${shape.type === 'object' && shape.members.length ? ':' : ''}`,
  ];
  if (shape.type === 'object') {
    for (const m of shape.members) out.push(`  ${JSON.stringify(m.key)}: ${sizeText(m.type, m.size)} @L${m.line}`);
    if (shape.omitted) out.push(`  … ${plural(shape.omitted, 'more key')}`);
  } else if (shape.type === 'array' && shape.itemTypes) {
    const types = Object.entries(shape.itemTypes).map(([type, count]) => `${type} ×${count}`);
    if (types.length) out.push(`  items: ${types.join(', ')}`);
  }
  const example =
    shape.type === 'object' && shape.members[0]
      ? `"/${String(shape.members[0].key).replace(/~/g, '~0').replace(/\//g, '~1')}"`
      : shape.type === 'array'
        ? '"/0"'
        : '""';
  out.push(
    ...hintOrWindow(
      handle,
      result.window,
      `artifact_query {callId: "${handle.callId}", select: ${example}} shows a value by JSON Pointer`,
    ),
  );
  return out.join('\n');
}

export function renderOpenMarkdown(
  result: { handle: ArtifactHandle; outline: readonly Heading[]; outlineStopsAtLine?: number; window?: OpenWindow },
  maxHeadings = 300,
): string {
  const { handle, outline } = result;
  const out = [renderHandle(handle)];
  if (outline.length === 0) {
    out.push('No headings.');
  } else {
    out.push(`Outline (${plural(outline.length, 'heading')}; line ranges are whole sections):`);
    for (const h of outline.slice(0, maxHeadings))
      out.push(`${'  '.repeat(h.level - 1)}${'#'.repeat(h.level)} ${h.title}  ${h.startLine}-${h.endLine}`);
    if (outline.length > maxHeadings) out.push(`… ${plural(outline.length - maxHeadings, 'more heading')}`);
    if (result.outlineStopsAtLine !== undefined)
      out.push(
        `(the outline stops at line ${result.outlineStopsAtLine}, after ${plural(outline.length, 'heading')}: find later headings with artifact_grep "^#")`,
      );
  }
  const example = outline.find((h) => h.path.includes('/')) ?? outline[0];
  out.push(
    ...hintOrWindow(
      handle,
      result.window,
      example
        ? `artifact_query {callId: "${handle.callId}", select: ${JSON.stringify(example.path)}} reads a section`
        : undefined,
    ),
  );
  return out.join('\n');
}

function lineText(line: PageLine): string {
  return line.cutBytes === undefined
    ? line.text
    : `${line.text} …[line cut: ${line.cutBytes} bytes, first ${MAX_LINE_CHARS} chars shown]`;
}

function pageBody(page: ArtifactPage): string[] {
  return page.lines.map((l) => `${l.n}\t${lineText(l)}`);
}

function continuation(page: ArtifactPage, until?: number): string {
  if (page.nextOffset === undefined) return until === undefined ? '(end of file)' : '(end of section)';
  const why = page.truncated ? `page capped at ${KIB} KiB; ` : '';
  return `(${why}more: artifact_read offset ${page.nextOffset}${until !== undefined ? `, section ends at line ${until}` : ''})`;
}

export function renderPage(page: ArtifactPage): string {
  if (page.totalLines === 0) return `${page.path} is empty (0 lines).`;
  const header = `${page.path} lines ${page.startLine}-${page.endLine} of ${page.totalLines}${page.spooling ? ' so far (still being written)' : ''}:`;
  return [header, ...pageBody(page), continuation(page)].join('\n');
}

function patternText(r: Pick<GrepHead, 'literal' | 'pattern'>): string {
  return r.literal ? JSON.stringify(r.pattern) : `/${r.pattern}/`;
}

/** artifact_grep's result past one page: its first page of lines and the result artifact holding all. */
export interface PagedGrep extends Paged<GrepLine> {
  readonly binary: boolean;
}

export type ArtifactGrepOutput = ArtifactGrepResult | PagedGrep;

/** A grep line as the model reads it; `--` marks a gap between groups of text lines. */
export function grepLineRenderer(binary: boolean): ItemRenderer<GrepLine> {
  return (l, previous) => {
    if (binary) return `${l.n}:\t@${l.byteOffset ?? 0} ${l.text}`;
    const line = `${l.n}${l.match ? ':' : '-'}\t${lineText(l)}`;
    return previous !== undefined && l.n > previous.n + 1 ? `--\n${line}` : line;
  };
}

/** The notes after a grep's lines: maxResults reached, context left out. */
export function grepNotes(r: GrepHead): string[] {
  const out: string[] = [];
  if (r.maxResultsAsked !== undefined)
    out.push(`(maxResults ${r.maxResultsAsked} is over the cap of ${r.maxResults}, so ${r.maxResults} was used.)`);
  if (r.limited)
    out.push(
      `(result limit: stopped at maxResults ${r.maxResults}; more lines match. ${r.maxResultsAsked !== undefined ? 'Narrow the pattern, or search from a later line with artifact_read.' : 'Raise maxResults or narrow the pattern.'})`,
    );
  if (r.contextOmitted) out.push('(context lines are not shown for binary artifacts)');
  return out;
}

export function grepSummary(r: GrepHead): string {
  return `${plural(r.matchCount, 'matching line')} for ${patternText(r)} in ${r.path}`;
}

export function renderGrep(r: ArtifactGrepOutput): string {
  if (isPaged<GrepLine>(r)) return renderPaged(r, grepLineRenderer(r.binary));
  if (r.matchCount === 0) return `No lines match ${patternText(r)} in ${r.path}.`;
  const render = grepLineRenderer(r.binary);
  const out = [`${grepSummary(r)}${r.binary ? ' (binary: byte offset and escaped excerpt)' : ''}:`];
  r.lines.forEach((l, i) => out.push(render(l, i > 0 ? r.lines[i - 1] : undefined)));
  out.push(...grepNotes(r));
  return out.join('\n');
}

function summarized(node: JsonSummary): boolean {
  if (node.omitted) return true;
  if (node.type !== 'object' && node.type !== 'array') return false;
  if ((node.size ?? 0) > 0 && (node.children?.length ?? 0) === 0) return true;
  return (node.children ?? []).some((c) => summarized(c.node));
}

export function renderQuery(r: ArtifactQueryResult): string {
  if (r.kind === 'json') {
    const where = r.pointer === '' ? 'the whole document' : r.pointer;
    const out = [
      `${where} in ${r.path} (${lineRange(r.node.startLine, r.node.endLine)}), ${sizeText(r.node.type, r.node.size)}:`,
      r.text,
    ];
    if (summarized(r.node) || r.truncated)
      out.push('({…N keys}, […N items] and "…" mark summarized parts: select a deeper pointer to see them)');
    return out.join('\n');
  }
  if (r.kind === 'symbol') {
    const { symbol, page } = r;
    return [
      `${symbol.kind} ${symbol.path} in ${r.path} (${lineRange(symbol.startLine, symbol.endLine)}):`,
      ...pageBody(page),
      continuation(page, symbol.endLine)
        .replace('(end of section)', '(end of symbol)')
        .replace('section ends', 'symbol ends'),
    ].join('\n');
  }
  const { heading, page } = r;
  const header = `${'#'.repeat(heading.level)} ${heading.path} in ${r.path} (${lineRange(heading.startLine, heading.endLine)}):`;
  return [header, ...pageBody(page), continuation(page, heading.endLine)].join('\n');
}
