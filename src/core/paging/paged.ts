import { formatBytes } from '../text/format.ts';

/** The result artifact that holds a whole result, as the model is told about it. */
export interface ResultArtifactRef {
  readonly callId: string;
  /** Lines and bytes of the whole result (so far, while it is still being written). */
  readonly lines: number;
  readonly bytes: number;
  /** The artifact line that follows the page shown. */
  readonly nextOffset: number;
  /** False while the rest of the result is still being written to it. */
  readonly complete: boolean;
}

/** A result larger than one page: its first page of items, and the artifact that holds all of it. */
export interface Paged<T> {
  /** What the result holds, e.g. "5626 matching lines in 1170 files" (or "… so far"). */
  readonly summary: string;
  readonly artifact: ResultArtifactRef;
  readonly page: readonly T[];
}

/** The lines of one item (joined by "\n"); `previous` is the item rendered before it, if any. */
export type ItemRenderer<T> = (item: T, previous: T | undefined) => string;

export function isPaged<T>(result: unknown): result is Paged<T> {
  return typeof result === 'object' && result !== null && 'artifact' in result && 'page' in result;
}

/** How many lines a rendered item takes. */
export function linesIn(text: string): number {
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return n;
}

/** Each item's lines, rendered after the item before it. */
export function renderItems<T>(items: readonly T[], render: ItemRenderer<T>): string[] {
  return items.map((item, i) => render(item, i > 0 ? items[i - 1] : undefined));
}

/** The line that names the artifact and says what follows. */
export function header(r: Pick<Paged<unknown>, 'summary' | 'artifact'>): string {
  const { callId, lines, bytes, complete, nextOffset } = r.artifact;
  const shown = nextOffset - 1;
  const where =
    shown > 0 ? `Lines 1-${shown} of it follow.` : 'Its first line does not fit the page given, so none follow.';
  return complete
    ? `${r.summary}: more than one page, so the whole result is artifact ${callId} (${lines} lines, ${formatBytes(bytes)}; its last line says whether it is complete). ${where}`
    : `${r.summary}: more than one page, so the whole result goes to artifact ${callId}, which is still being written (artifact_read waits for lines not written yet; its last line, which artifact_read offset -1 waits for, will say whether it is complete). ${where}`;
}

/** The line that says where to go on. */
export function footer(r: Pick<Paged<unknown>, 'artifact'>): string {
  const { callId, nextOffset } = r.artifact;
  return `(more: artifact_read {callId: "${callId}", offset: ${nextOffset}}; artifact_grep {callId: "${callId}", pattern} searches all of it)`;
}

/** The model's text for a paged result: a header naming the artifact, the first page's lines, where to go on. */
export function renderPaged<T>(r: Paged<T>, render: ItemRenderer<T>): string {
  return [header(r), ...renderItems(r.page, render), footer(r)].join('\n');
}
