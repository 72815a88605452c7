import { randomBytes } from 'node:crypto';
import type { ResolvedAddress } from '../paths.ts';
import type { ResolvedFs } from '../fs/resolved-fs.ts';

/* The temp files a save writes beside the file before renaming it into place. */

/** A hidden name next to the target, unguessable so nothing can be planted there in advance. */
export function tempName(name: string): string {
  const tag = randomBytes(6).toString('hex');
  return Buffer.byteLength(name) > 200 ? `.wt-save-${tag}.tmp` : `.${name}.wt-save-${tag}.tmp`;
}

/** Whether `entry` is the temp file of a save of the file `name` (saves of names over 200 bytes use an anonymous temp name, never matched). */
export function isTempOf(name: string, entry: string): boolean {
  const prefix = `.${name}.wt-save-`;
  return (
    Buffer.byteLength(name) <= 200 && entry.startsWith(prefix) && /^[0-9a-f]{12}\.tmp$/.test(entry.slice(prefix.length))
  );
}

/** A save's temp file older than this was left by a save that died between write and rename. */
export const STALE_TEMP_MS = 60_000;

/**
 * Removes the temp files of saves of the file `name` in `folder` that a process left when it died
 * between writing and renaming, as `left` judges them by their mtime (a save's: older than a minute,
 * so another window's save in flight is never touched; a recovery's: made while the dead set ran).
 */
export async function removeStaleTemps(
  fs: ResolvedFs,
  folder: ResolvedAddress,
  name: string,
  left: (mtimeMs: number) => boolean,
): Promise<void> {
  const entries = await fs.readDirectory(folder).catch(() => []);
  for (const entry of entries) {
    if (entry.type !== 'file' || !isTempOf(name, entry.name)) continue;
    const address = fs.join(folder, entry.name);
    const stat = await fs.lstat(address).catch(() => undefined);
    // Best effort: a temp file left has a recognisable name, and the next save of the file removes it.
    if (stat?.type === 'file' && left(stat.mtimeMs)) await fs.delete(address).catch(() => undefined);
  }
}
