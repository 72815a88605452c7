import { promises as fsp } from 'node:fs';
import { SandboxError } from '../errors.ts';
import { SpoolReader } from './reader.ts';
import { formatBytes } from '../text/format.ts';
import type { LeasedArtifact } from './entry.ts';

/* What the artifact_* contracts share about a leased artifact: refusing binary, reading it whole, paging it. */

/** Largest JSON artifact that is parsed (shape, queries) or read whole by `readArtifactText`. */
export const STRUCTURE_MAX_BYTES = 32 * 1024 * 1024;

export function refuseBinary(artifact: LeasedArtifact, verb: string): void {
  if (!artifact.info.binary) return;
  throw new SandboxError(
    'E_SANDBOX_BINARY',
    `"${artifact.info.path}" is binary (${formatBytes(artifact.info.bytes)}), so there are no text lines to ${verb}. Search its bytes with artifact_grep and literal: true (matches show byte offsets); to read text, open a text file instead.`,
    '',
  );
}

/** The whole spool as text, refused (narrated) over `maxBytes`. */
export async function readWhole(artifact: LeasedArtifact, maxBytes: number): Promise<string> {
  if (artifact.index.bytes > maxBytes) {
    throw new SandboxError(
      'E_SANDBOX_TOO_LARGE',
      `"${artifact.info.path}" is ${formatBytes(artifact.index.bytes)}, more than the ${formatBytes(maxBytes)} that can be parsed or shown as a whole. It is open as artifact ${artifact.info.callId}: find what you need with artifact_grep and page it with artifact_read.`,
      '',
    );
  }
  const bytes = await fsp.readFile(artifact.spoolPath);
  return new TextDecoder('utf-8').decode(bytes);
}

/** Runs `use` with a line reader open on the artifact's spool. */
export function withReader<T>(artifact: LeasedArtifact, use: (reader: SpoolReader) => Promise<T>): Promise<T> {
  return SpoolReader.with(artifact.spoolPath, artifact.index, artifact.info.encoding === 'utf8bom', use);
}
