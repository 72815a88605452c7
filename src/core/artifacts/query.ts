import { SandboxError } from '../errors.ts';
import { JSON_MAX_DEPTH, missError, parsePointer, renderJson, selectJson, type JsonPosition } from './json.ts';
import { findSection, nearHeadings, parseOutline, type Outline } from './markdown.ts';
import { PAGE_MAX_BYTES } from '../paging/budget.ts';
import { STRUCTURE_MAX_BYTES, readWhole, refuseBinary, withReader } from './leased.ts';
import { PAGE_MAX_LINES, readPage } from './page.ts';
import type { ArtifactStore } from './store.ts';
import type { LeasedArtifact } from './entry.ts';
import type { ArtifactQueryResult, JsonShape } from './types.ts';
import type { SymbolOutline } from '../outline/symbols.ts';

/* The structure contracts: a JSON artifact's shape (open_json_file), a Markdown artifact's outline (open_markdown_file), and artifact_query. */

/** Largest Markdown artifact whose outline is parsed: markdown-it takes ~30x the text in memory. */
export const MARKDOWN_MAX_BYTES = 4 * 1024 * 1024;
const SHAPE_MAX_MEMBERS = 200;
const QUERY_DEPTH = 3;
const QUERY_MAX_CHILDREN = 50;
const QUERY_MAX_NODES = 500;
const QUERY_MAX_STRING = 200;

/** The top-level shape of a JSON artifact; throws a narrated error with line and column for invalid JSON. */
export function jsonShape(store: ArtifactStore, callId: string): Promise<JsonShape> {
  return store.lease(callId, async (artifact) => {
    refuseBinary(artifact, 'parse as JSON');
    const text = await readWhole(artifact, STRUCTURE_MAX_BYTES);
    const selection = selectJson(
      text,
      [],
      { depth: 1, maxChildren: SHAPE_MAX_MEMBERS, maxNodes: SHAPE_MAX_MEMBERS + 1, maxString: 0 },
      true,
    );
    if ('tooDeep' in selection) throw tooDeep(artifact, selection.tooDeep);
    if (selection.error) throw invalidJson(artifact, selection.error);
    if (!selection.found) throw invalidJson(artifact, { error: 'ValueExpected', line: 1, column: 1 });
    const root = selection.node;
    return {
      type: root.type,
      ...(root.size !== undefined ? { size: root.size } : {}),
      startLine: root.startLine,
      endLine: root.endLine,
      members: (root.children ?? []).map(({ key, node }) => ({
        key,
        type: node.type,
        ...(node.size !== undefined ? { size: node.size } : {}),
        line: node.startLine,
      })),
      omitted: root.omitted ?? 0,
      ...(root.itemTypes ? { itemTypes: root.itemTypes } : {}),
    };
  });
}

/** The heading outline of a Markdown artifact. */
export function markdownOutline(store: ArtifactStore, callId: string): Promise<Outline> {
  return store.lease(callId, (artifact) => outlineOf(artifact));
}

/** A JSON Pointer or a Markdown heading path into an artifact: the artifact_query contract. */
export function queryArtifact(
  store: ArtifactStore,
  callId: string,
  select: string,
  signal?: AbortSignal,
): Promise<ArtifactQueryResult> {
  return store.lease(callId, async (artifact) => {
    refuseBinary(artifact, 'query');
    const kind = queryKind(artifact);
    const { path } = artifact.info;
    if (kind === 'json') {
      const pointer = parsePointer(select);
      const text = await readWhole(artifact, STRUCTURE_MAX_BYTES);
      const selection = selectJson(text, pointer, {
        depth: QUERY_DEPTH,
        maxChildren: QUERY_MAX_CHILDREN,
        maxNodes: QUERY_MAX_NODES,
        maxString: QUERY_MAX_STRING,
      });
      if ('tooDeep' in selection) throw tooDeep(artifact, selection.tooDeep);
      if (!selection.found)
        throw selection.error ? invalidJson(artifact, selection.error) : missError(select, selection.miss);
      const rendered = renderJson(selection.node, PAGE_MAX_BYTES);
      return {
        kind,
        callId,
        path,
        pointer: select,
        node: selection.node,
        text: rendered.text,
        truncated: selection.truncated || rendered.capped,
      };
    }
    if (kind === 'symbol') return querySymbol(artifact, artifact.symbols!, select, signal);
    const { headings, stoppedAtLine } = await outlineOf(artifact);
    const heading = findSection(headings, select);
    if (!heading) {
      const stopped =
        stoppedAtLine === undefined
          ? ''
          : ` (the outline stops at line ${stoppedAtLine}, after its first ${headings.length} headings: find later ones with artifact_grep "^#")`;
      if (headings.length === 0)
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `"${path}" has no headings, so heading path ${JSON.stringify(select)} selects nothing. Page it with artifact_read or search it with artifact_grep.`,
          '',
        );
      const near = nearHeadings(headings, select, 8).map((p) => JSON.stringify(p));
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `No heading matches the path ${JSON.stringify(select)} in "${path}"${stopped}. Headings near it: ${near.join(', ')}.`,
        `Call artifact_query with one of those (segments are heading titles separated by "/").`,
      );
    }
    const page = await withReader(artifact, (reader) =>
      readPage(
        artifact,
        reader,
        heading.startLine,
        Math.min(heading.endLine, heading.startLine + PAGE_MAX_LINES - 1),
        signal,
        heading.endLine,
      ),
    );
    return { kind, callId, path, heading, page };
  });
}

/** Records a source file's symbols on its artifact (open_file, where a provider answered): artifact_query then selects them by path. */
export function attachSymbols(store: ArtifactStore, callId: string, outline: SymbolOutline): Promise<void> {
  return store.lease(callId, async (artifact) => {
    artifact.symbols = outline;
  });
}

/** A symbol by its path of names ("Session/invoke"): its lines, as a Markdown section's are read. */
async function querySymbol(
  artifact: LeasedArtifact,
  outline: SymbolOutline,
  select: string,
  signal: AbortSignal | undefined,
): Promise<ArtifactQueryResult> {
  const { callId, path } = artifact.info;
  const hit = findSection(outline.symbols, select);
  const symbol = outline.symbols.find((s) => s === hit);
  if (!symbol) {
    const near = nearHeadings(outline.symbols, select, 8).map((p) => JSON.stringify(p));
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `No symbol matches the path ${JSON.stringify(select)} in "${path}". Symbols near it: ${near.join(', ')}.`,
      `Call artifact_query with one of those (segments are symbol names separated by "/", outermost first).`,
    );
  }
  const page = await withReader(artifact, (reader) =>
    readPage(
      artifact,
      reader,
      symbol.startLine,
      Math.min(symbol.endLine, symbol.startLine + PAGE_MAX_LINES - 1),
      signal,
      symbol.endLine,
    ),
  );
  return { kind: 'symbol', callId, path, symbol, page };
}

async function outlineOf(artifact: LeasedArtifact): Promise<Outline> {
  refuseBinary(artifact, 'parse as Markdown');
  artifact.outline ??= parseOutline(await readWhole(artifact, MARKDOWN_MAX_BYTES), artifact.index.lines);
  return artifact.outline;
}

function queryKind(artifact: LeasedArtifact): 'json' | 'markdown' | 'symbol' {
  if (artifact.info.kind === 'json' || artifact.info.kind === 'markdown') return artifact.info.kind;
  if (artifact.symbols !== undefined && artifact.symbols.symbols.length > 0) return 'symbol';
  if (artifact.info.kind === 'result')
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      `"${artifact.info.callId}" holds the result of ${artifact.info.path}, which is text lines, not JSON or Markdown. Page it with artifact_read or search it with artifact_grep.`,
      '',
    );
  if (/\.(json|jsonc|code-workspace)$/i.test(artifact.info.path)) return 'json';
  if (/\.(md|markdown|mdx|mdown|mkd)$/i.test(artifact.info.path)) return 'markdown';
  throw new SandboxError(
    'E_SANDBOX_UNSUPPORTED',
    `artifact_query selects inside JSON, Markdown, or a source file whose outline open_file returned, and "${artifact.info.path}" (${artifact.info.callId}) was opened with open_file as plain text (no outline).`,
    `Use artifact_grep or artifact_read on it, or reopen it with open_json_file or open_markdown_file.`,
  );
}

function invalidJson(artifact: LeasedArtifact, error: { error: string; line: number; column: number }): SandboxError {
  return new SandboxError(
    'E_SANDBOX_INVALID_INPUT',
    `"${artifact.info.path}" is not valid JSON (comments and trailing commas are accepted): ${error.error} at line ${error.line}, column ${error.column}. It stays open as artifact ${artifact.info.callId}: read around that line with artifact_read (offset ${Math.max(1, error.line - 5)}).`,
    '',
  );
}

function tooDeep(artifact: LeasedArtifact, at: JsonPosition): SandboxError {
  return new SandboxError(
    'E_SANDBOX_TOO_LARGE',
    `"${artifact.info.path}" nests arrays and objects more than ${JSON_MAX_DEPTH.toLocaleString('en-US')} levels deep (the level past that opens at line ${at.line}, column ${at.column}), deeper than its structure is parsed. It stays open as artifact ${artifact.info.callId}: find what you need with artifact_grep and page it with artifact_read.`,
    '',
  );
}
