import { promises as fsp } from 'node:fs';
import { cancelled, invalidInput } from '../errors.ts';
import type { SpoolLine, SpoolReader } from './reader.ts';
import { PAGE_MAX_BYTES } from '../paging/budget.ts';
import { STRUCTURE_MAX_BYTES, readWhole, refuseBinary, withReader } from './leased.ts';
import type { ArtifactStore } from './store.ts';
import type { LeasedArtifact } from './entry.ts';
import type { ArtifactPage, PageLine } from './types.ts';

/** Default and cap of artifact_read's `limit`. */
export const PAGE_MAX_LINES = 2000;

/** A page of lines: the artifact_read contract. A negative offset counts from the end (-1 is the last line). */
export function readArtifact(
  store: ArtifactStore,
  callId: string,
  request: { readonly offset?: number; readonly limit?: number } = {},
  signal?: AbortSignal,
): Promise<ArtifactPage> {
  return store.lease(callId, async (artifact) => {
    refuseBinary(artifact, 'read');
    const limit = Math.min(request.limit ?? PAGE_MAX_LINES, PAGE_MAX_LINES);
    const requested = request.offset ?? 1;
    if (requested < 0) {
      // Counted from the end: a result still being written has no end yet, so wait for it.
      await artifact.live?.finished(signal);
      if (signal?.aborted) throw cancelled();
    }
    const offset = requested < 0 ? Math.max(artifact.index.lines + requested + 1, 1) : requested;
    // A result still being written: wait until the page's lines are there, or the result ended short of them.
    while (artifact.live && artifact.index.lines < offset + limit - 1) {
      await artifact.live.changed(signal);
      if (signal?.aborted) throw cancelled();
    }
    const total = artifact.index.lines;
    if (offset > Math.max(total, 1)) {
      if (total === 0)
        throw invalidInput(
          `offset ${offset} is past the end: "${artifact.info.path}" is empty (0 lines). There is nothing to read.`,
          '',
        );
      throw invalidInput(
        `offset ${offset} is past the end: "${artifact.info.path}" has ${total} line${total === 1 ? '' : 's'}; lines are 1-based.`,
        `Call artifact_read with an offset from 1 to ${total}.`,
      );
    }
    return withReader(artifact, (reader) => readPage(artifact, reader, offset, offset + limit - 1, signal));
  });
}

/**
 * The artifact's whole text (UTF-8 decoded, BOM left out), for a host's read-only document.
 * Refuses a binary artifact and one over `maxBytes`.
 */
export function readArtifactText(
  store: ArtifactStore,
  callId: string,
  maxBytes: number = STRUCTURE_MAX_BYTES,
): Promise<string> {
  return store.lease(callId, async (artifact) => {
    refuseBinary(artifact, 'read');
    await artifact.live?.finished();
    return readWhole(artifact, maxBytes);
  });
}

/** The first `maxBytes` of a binary artifact's bytes (its file's bytes as they were opened). */
export function readArtifactBytes(store: ArtifactStore, callId: string, maxBytes: number): Promise<Uint8Array> {
  return store.lease(callId, async (artifact) => {
    const file = await fsp.open(artifact.spoolPath, 'r');
    try {
      const buffer = Buffer.alloc(Math.min(maxBytes, artifact.index.bytes));
      const { bytesRead } = await file.read(buffer, 0, buffer.length, 0);
      return buffer.subarray(0, bytesRead);
    } finally {
      await file.close();
    }
  });
}

export function pageLine(line: SpoolLine): PageLine {
  return { n: line.n, text: line.text, ...(line.cut ? { cutBytes: line.end - line.start } : {}) };
}

const lineBytes = (line: PageLine): number => Buffer.byteLength(line.text) + 1;

/** Lines `from`..`to` capped at PAGE_MAX_BYTES; `last` is where the text being paged ends (the file, or a section). */
export async function readPage(
  artifact: LeasedArtifact,
  reader: SpoolReader,
  from: number,
  to: number,
  signal: AbortSignal | undefined,
  last = reader.index.lines,
): Promise<ArtifactPage> {
  const lines: PageLine[] = [];
  let used = 0;
  let truncated = false;
  for await (const line of reader.lines(from, to)) {
    if (signal?.aborted) throw cancelled();
    const page = pageLine(line);
    if (lines.length > 0 && used + lineBytes(page) > PAGE_MAX_BYTES) {
      truncated = true;
      break;
    }
    used += lineBytes(page);
    lines.push(page);
  }
  const endLine = from + lines.length - 1;
  // A result still being written has more lines coming after the last one written so far.
  const spooling = artifact.live !== undefined;
  return {
    callId: artifact.info.callId,
    path: artifact.info.path,
    totalLines: reader.index.lines,
    startLine: from,
    endLine,
    lines,
    truncated,
    ...(endLine < last || spooling ? { nextOffset: endLine + 1 } : {}),
    ...(spooling ? { spooling: true as const } : {}),
  };
}
