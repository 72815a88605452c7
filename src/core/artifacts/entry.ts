import type { LineIndex } from './line-index.ts';
import type { Outline } from './markdown.ts';
import type { LiveResult } from './live.ts';
import type { ArtifactHandle, ArtifactInfo, SymbolOutline } from './types.ts';

/** One artifact as the store keeps it: what it is, where its spool file is, and who reads it. */
export interface Entry {
  info: Omit<ArtifactInfo, 'lastUsedAt'>;
  readonly spoolPath: string;
  index: LineIndex;
  /** Set while a result artifact is still being written. */
  live?: LiveResult | undefined;
  /** A Markdown artifact's outline, parsed once. */
  outline?: Outline;
  /** A source file's symbols, as the host's document symbol provider reported them when it was opened. */
  symbols?: SymbolOutline;
  lastUsedAt: number;
  /** Calls currently reading the spool file; an evicted entry's file is deleted when this drops to 0. */
  leases: number;
  gone: boolean;
}

/** An artifact while a call holds it (see `ArtifactStore.lease`): what the artifact_* contracts read. */
export type LeasedArtifact = Readonly<Pick<Entry, 'info' | 'spoolPath' | 'index' | 'live'>> &
  Pick<Entry, 'outline' | 'symbols'>;

/** What a tool returns of an artifact: its handle, no content. */
export function handleOf(entry: Entry): ArtifactHandle {
  const { callId, path, bytes, lines, encoding, eol, binary, mtime, links } = entry.info;
  return { callId, path, bytes, lines, encoding, eol, binary, mtime, ...(links ? { links } : {}) };
}
