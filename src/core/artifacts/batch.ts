import type { SandboxCode } from '../errors.ts';
import { fits, type PageBudget } from '../paging/budget.ts';
import { renderOpenFiles } from './render.ts';
import type { ArtifactHandle, ArtifactPage, PageLine } from './types.ts';
import type { OpenWindow } from './window.ts';

/** The most files one open_file call takes. */
export const OPEN_FILES_MAX = 20;

/** One file of an open_file batch: its handle and page, or why it alone failed. */
export interface OpenedEntry {
  /** As the model named it. */
  readonly path: string;
  readonly handle?: ArtifactHandle;
  readonly window?: OpenWindow;
  readonly error?: { readonly code: SandboxCode; readonly message: string };
}

export interface OpenedFiles {
  readonly files: readonly OpenedEntry[];
  /** Set when the pages were cut to share one result page: its size. */
  readonly shared?: { readonly bytes: number };
}

/** What a line takes in the rendered page (its text and newline, unnumbered; a cut line's marker aside). */
const lineBytes = (line: PageLine): number => Buffer.byteLength(line.text) + 1;

const pageBytes = (window: OpenWindow | undefined): number =>
  window && 'page' in window ? window.page.lines.reduce((sum, line) => sum + lineBytes(line), 0) : 0;

/** The page cut to the lines that take at most `cap` bytes; the rest is read on from the file's artifact. */
function cutPage(entry: OpenedEntry, cap: number): OpenedEntry {
  const window = entry.window;
  if (!window || !('page' in window)) return entry;
  const page = window.page;
  let used = 0;
  let kept = 0;
  for (const line of page.lines) {
    if (used + lineBytes(line) > cap) break;
    used += lineBytes(line);
    kept++;
  }
  if (kept === page.lines.length) return entry;
  const cut: ArtifactPage = {
    ...page,
    lines: page.lines.slice(0, kept),
    endLine: page.startLine + kept - 1,
    truncated: true,
    nextOffset: page.startLine + kept,
  };
  return { ...entry, window: { page: cut, cutToShare: true } };
}

/** The largest per-page cap whose pages together take at most `available` bytes. */
function waterLevel(sizes: readonly number[], available: number): number {
  let lo = 0;
  let hi = Math.max(0, ...sizes);
  while (lo < hi) {
    const mid = Math.ceil((lo + hi) / 2);
    if (sizes.reduce((sum, size) => sum + Math.min(size, mid), 0) <= available) lo = mid;
    else hi = mid - 1;
  }
  return lo;
}

/**
 * The batch's pages within one result page (50 KiB, or the model's token budget): when they do not
 * fit together, each is cut to a fair share (a small page whole, the large ones to the same size),
 * and says where its file's artifact reads on. Nothing is copied elsewhere: the rest of each file is
 * in its own artifact, read under that file's own rules.
 */
export async function shareOnePage(files: readonly OpenedEntry[], budget: PageBudget): Promise<OpenedFiles> {
  if (await fits(renderOpenFiles({ files }), budget)) return { files };
  const shared = { bytes: budget.bytes };
  const sizes = files.map((f) => pageBytes(f.window));
  const frame = Buffer.byteLength(renderOpenFiles({ files: files.map((f) => cutPage(f, 0)), shared }));
  let available = Math.max(0, budget.bytes - frame);
  for (let tries = 0; tries < 12 && available > 0; tries++) {
    const cap = waterLevel(sizes, available);
    const cut = { files: files.map((f) => cutPage(f, cap)), shared };
    const text = renderOpenFiles(cut);
    if (await fits(text, budget)) return cut;
    const over = Buffer.byteLength(text) - budget.bytes;
    // Over in bytes: take off what is over; within bytes but over in tokens: shrink by a part.
    available = over > 0 ? available - over : Math.floor(available * 0.75);
  }
  return { files: files.map((f) => cutPage(f, 0)), shared };
}
