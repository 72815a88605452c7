import * as z from 'zod';
import { defineTool, soleTarget, type CallContext } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import { BugError, isSandboxError, type SandboxError } from '../errors.ts';
import type { GatedPath, ResolvedPath } from '../paths.ts';
import type { ArtifactHandle } from '../artifacts/types.ts';
import { renderOpenFile, renderOpenFiles } from '../artifacts/render.ts';
import { windowIfAsked, windowOn, type OpenWindow, type PageRequest } from '../artifacts/window.ts';
import { OPEN_FILES_MAX, shareOnePage, type OpenedEntry, type OpenedFiles } from '../artifacts/batch.ts';
import type { ArtifactStore } from '../artifacts/store.ts';
import { pageArguments } from './artifact_read.ts';
import type { OutlinePort } from '../outline/port.ts';
import { OUTLINE_MAX_BYTES, flattenSymbols, type SymbolOutline } from '../outline/symbols.ts';
import { attachSymbols } from '../artifacts/query.ts';
import { formatBytes } from '../text/format.ts';
import { readArtifactBytes } from '../artifacts/page.ts';
import { IMAGE_NAME, sniffImage, type ImageInfo } from '../images/sniff.ts';
import { IMAGE_DECODE_MAX_BYTES, IMAGE_MAX_BYTES } from '../images/bounds.ts';
import { imageShown, lookAtImage, showingNote } from '../images/fit.ts';

const fileEntry = z.strictObject({
  path: pathArgument('A file to open'),
  ...pageArguments(' of this file (default: a page from line 1)'),
});

export const openFileSchema = () =>
  z
    .strictObject({
      path: pathArgument('The file to open').optional(),
      ...pageArguments(' with the handle (omit both offset and limit for the handle alone)'),
      files: z
        .array(fileEntry)
        .min(1)
        .max(OPEN_FILES_MAX)
        .optional()
        .describe(
          `Several files to open and read in one call, instead of path (at most ${OPEN_FILES_MAX}): each {path, offset?, limit?} returns its handle and a page (from line 1 unless offset says otherwise); the pages share one result page.`,
        ),
    })
    .superRefine((input, issues) => {
      if ((input.path === undefined) === (input.files === undefined))
        issues.addIssue({
          code: 'custom',
          message: 'give either "path" (one file) or "files" (several), not both and not neither',
        });
      if (input.files !== undefined && (input.offset !== undefined || input.limit !== undefined))
        issues.addIssue({
          code: 'custom',
          message: 'with "files", give offset and limit inside each entry ({path, offset, limit}), not beside it',
        });
    });

/** The gated I/O step shared by the open tools: the approved path, checked on disk (links, and the policy of where they lead). */
export async function resolveForOpen(ctx: CallContext): Promise<ResolvedPath> {
  return ctx.resolve(soleTarget(ctx));
}

/** The handle, the page asked for with it (`offset`/`limit`), and a source file's outline where the host's provider gave one. */
export type OpenedFile = ArtifactHandle & {
  readonly window?: OpenWindow;
  readonly outline?: SymbolOutline;
  readonly outlineNote?: string;
  /** A PNG, JPEG, GIF or WebP file (by its bytes): what it is; the model is shown it where the host can. */
  readonly image?: ImageInfo;
  /** Why an image is not shown, or a file named like one is not one. */
  readonly imageNote?: string;
};

/** One file (`path`), or several (`files`). */
export type OpenFileResult = OpenedFile | OpenedFiles;

export function isOpenedFiles(result: OpenFileResult): result is OpenedFiles {
  return 'files' in result;
}

export const openFile = defineTool({
  name: 'open_file',
  displayName: 'Open File',
  userDescription:
    'Open workspace files as read-only artifacts the model can page and search, with a first page of each if asked.',
  description: `Opens a workspace file as an artifact: a snapshot of its bytes at this moment, spooled and line-indexed. Returns a handle {callId, path, bytes, lines, encoding, eol, binary, mtime}; with \`offset\` and/or \`limit\` (as artifact_read takes them: 1-based, negative counts from the end) it also returns that page in the same call (one header line \`lines A-B of N, artifact <callId>\`, then the lines as they are, unnumbered: line A first), so opening and reading 40 lines around a search hit is one call. Without them no content is returned. To read several files at once, pass \`files: [{path, offset?, limit?}]\` (at most ${OPEN_FILES_MAX}) instead of path: one call returns each file's handle and page (from line 1 by default); the pages share one result page (50 KiB or your token budget), so long ones are cut and say where artifact_read goes on; a file that is refused or fails fails only its own entry. In VS Code, a source file opened without offset/limit for which a language extension gives symbols also returns its outline (kind, name, line range, nesting): read one definition with artifact_query by its path of names ("Session/invoke"). A PNG, JPEG, GIF or WebP image (recognised by its bytes) is shown to you as an image where the host can (VS Code), downscaled to 1568 px on its longest side when larger (up to 25 megapixels; larger ones are described). Read further with artifact_read (pages by line), search with artifact_grep. The snapshot does not change if the file does; open again to see a newer version. Use open_json_file for JSON and open_markdown_file for Markdown to also get their structure.`,
  risk: 'read',
  requires: [],
  needs: ['artifacts', 'outline'],
  icon: 'file',
  schema: openFileSchema,
  targets: (input, scope) => {
    if (input.files !== undefined) {
      const files = input.files;
      return {
        paths: files.map((f) => scope.normalize(f.path)),
        summary: `open and read ${files.length === 1 ? '1 file' : `${files.length} files`}: ${files.map((f) => `${f.path}${windowText(f) ? ` (${windowText(f)})` : ''}`).join(', ')}`,
        each: files.map((f) => `open ${f.path} and read ${windowText(f) || 'from line 1'}`),
      };
    }
    const path = input.path ?? '';
    return { paths: [scope.normalize(path)], summary: `open ${path}${windowSummary(input)}` };
  },
  run: async (input, ctx): Promise<OpenFileResult> => {
    if (input.files !== undefined) return openEach(input.files, ctx);
    const target = soleTarget(ctx);
    const handle = await ctx.artifacts.open(await resolveForOpen(ctx), ctx.signal);
    // A window means the model knows where to look: no outline (bytes, and a cold language server's wait).
    const asked = input.offset !== undefined || input.limit !== undefined;
    const looked = handle.binary
      ? await imageOf(ctx.artifacts, handle)
      : asked
        ? {}
        : await outlineOf(ctx, handle, target);
    return { ...handle, ...looked, ...(await windowIfAsked(ctx.artifacts, handle, input, ctx.signal)) };
  },
  render: (result) => (isOpenedFiles(result) ? renderOpenFiles(result) : renderOpenFile(result)),
  images: async (result, ctx) => {
    if (isOpenedFiles(result) || result.image === undefined) return [];
    const bytes = await imageBytes(ctx.artifacts, result);
    const looked = lookAtImage(bytes, result.bytes);
    if (looked === undefined) return [];
    const shown = await imageShown(bytes, looked.image, looked.showing, ctx.signal);
    return shown === undefined ? [] : 'unshown' in shown ? shown : [shown];
  },
});

/**
 * A binary file that is a PNG, JPEG, GIF or WebP image by its bytes (the read gate and the rules
 * already passed, as for text): what it is, and how the model is shown it (as it is, downscaled, or not).
 */
async function imageOf(
  store: ArtifactStore,
  handle: ArtifactHandle,
): Promise<{ image?: ImageInfo; imageNote?: string }> {
  const looked = lookAtImage(await imageBytes(store, handle), handle.bytes);
  if (looked === undefined) {
    return IMAGE_NAME.test(handle.path)
      ? {
          imageNote: `"${handle.path}" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary.`,
        }
      : {};
  }
  const { image } = looked;
  const note = showingNote(looked.showing);
  return note === undefined ? { image } : { image, imageNote: note };
}

/**
 * The bytes an image is judged by: enough to recognise one (IMAGE_MAX_BYTES), and for an image that
 * may be decoded, all of it, so that every frame is read (frames.ts).
 */
async function imageBytes(store: ArtifactStore, handle: ArtifactHandle): Promise<Uint8Array> {
  const head = await readArtifactBytes(store, handle.callId, IMAGE_MAX_BYTES);
  if (
    head.byteLength >= handle.bytes ||
    handle.bytes > IMAGE_DECODE_MAX_BYTES ||
    sniffImage(head, handle.bytes) === undefined
  )
    return head;
  return readArtifactBytes(store, handle.callId, IMAGE_DECODE_MAX_BYTES);
}

/**
 * A source file's outline from the host's document symbol provider, recorded on its artifact for
 * artifact_query; where none answers, a line saying so. Nothing in a host without providers (the CLI).
 */
async function outlineOf(
  ctx: CallContext & { readonly artifacts: ArtifactStore; readonly outline: OutlinePort | undefined },
  handle: ArtifactHandle,
  target: GatedPath,
): Promise<{ outline?: SymbolOutline; outlineNote?: string }> {
  if (ctx.outline === undefined || handle.binary || handle.lines === 0) return {};
  if (handle.bytes > OUTLINE_MAX_BYTES)
    return {
      outlineNote: `No outline: the file is over ${formatBytes(OUTLINE_MAX_BYTES)}, more than a symbol provider is asked to parse.`,
    };
  const tree = await ctx.outline.symbols({ root: target.root, rel: target.rel }, ctx.signal);
  if (tree === undefined) return { outlineNote: 'No outline (no symbol provider answered).' };
  if (tree.length === 0) return {};
  const outline = flattenSymbols(tree);
  await attachSymbols(ctx.artifacts, handle.callId, outline);
  return { outline };
}

const errorOf = (e: SandboxError): NonNullable<OpenedEntry['error']> => ({ code: e.code, message: e.message });

/** A batch: each approved file opened with its page, each refused or failing one an entry with its narrated error. */
async function openEach(
  files: readonly (PageRequest & { readonly path: string })[],
  ctx: CallContext & { readonly artifacts: ArtifactStore },
): Promise<OpenedFiles> {
  const batch = ctx.batch;
  if (batch === undefined || batch.length !== files.length)
    throw new BugError('open_file with files: the call has no batch of the same length');
  const entries: OpenedEntry[] = [];
  for (const [i, entry] of batch.entries()) {
    const file = files[i]!;
    if ('refusal' in entry) {
      entries.push({ path: file.path, error: errorOf(entry.refusal) });
      continue;
    }
    try {
      const handle = await ctx.artifacts.open(await ctx.resolve(entry.path), ctx.signal);
      entries.push({ path: file.path, handle, window: await windowOn(ctx.artifacts, handle, file, ctx.signal) });
    } catch (e) {
      if (!isSandboxError(e) || e.code === 'E_SANDBOX_CANCELLED') throw e;
      entries.push({ path: file.path, error: errorOf(e) });
    }
  }
  return shareOnePage(entries, ctx.page);
}

/** The page asked for, in words: `lines 40-79`, `from line -20 (counted from the end)`; empty when none is. */
export function windowText(request: PageRequest): string {
  const { offset, limit } = request;
  if (offset === undefined && limit === undefined) return '';
  const from = offset ?? 1;
  if (from < 0) return `${limit === undefined ? '' : `${limit} lines `}from line ${from} (counted from the end)`;
  return limit === undefined ? `from line ${from}` : `lines ${from}-${from + limit - 1}`;
}

/** The page asked for, in the person's words for the gate: ` and read lines 40-79`. */
export function windowSummary(request: PageRequest): string {
  const text = windowText(request);
  return text === '' ? '' : ` and read ${text}`;
}

/** The result of an open_file call given `path`: one file's handle (and page). */
export function oneFile(result: OpenFileResult): OpenedFile {
  if (isOpenedFiles(result)) throw new BugError('open_file was given files, so its result is a batch, not one file');
  return result;
}
