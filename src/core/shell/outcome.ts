import { constants } from 'node:fs';
import { open, readFile } from 'node:fs/promises';
import * as nodePath from 'node:path';
import type { GatedPath, ModelPath } from '../paths.ts';
import type { SaveContext } from '../media/save.ts';
import { mediaTaint } from '../media/types.ts';
import type { Policy } from '../policy/policy.ts';
import type { LayerEntry } from './upper.ts';

/* What becomes of a change of a command's change set that is not applied: staged for review, or held. */

/** What became of one change of a command's change set, as the result shows it. */
export interface ChangeOutcome {
  /** As displayed. */
  readonly path: string;
  readonly kind: 'write' | 'delete' | 'link' | 'folder' | 'special';
  readonly action: 'applied' | 'staged' | 'held';
  /** The staged media (action `staged`). */
  readonly mediaId?: string;
  /** Why it was staged or held, or why applying it failed. */
  readonly why?: string;
}

export const kindOf = (entry: LayerEntry): ChangeOutcome['kind'] =>
  entry.kind === 'file'
    ? 'write'
    : entry.kind === 'delete'
      ? 'delete'
      : entry.kind === 'link'
        ? 'link'
        : entry.kind === 'special'
          ? 'special'
          : 'folder';

/** Stages a write or delete as a media (its bytes from the upper layer), tainted where a read rule protects its name. */
export async function stage(
  ctx: SaveContext & { readonly policy: Policy },
  entry: LayerEntry,
  path: GatedPath,
  why: string,
): Promise<ChangeOutcome> {
  const base = { path: path.display, kind: kindOf(entry) };
  if (entry.kind !== 'file' && entry.kind !== 'delete') return { ...base, action: 'held', why };
  try {
    // Read as it is, not through the call's resolve: that would ask the person about a file they are about to review.
    const disk = await diskBytes(path, (size) => ctx.media.ensureRoom(path.display, size));
    const read = ctx.policy.decide(path.rel, 'read', path.root.localPath);
    const taint = mediaTaint(
      path.display,
      read.action === 'ask' || read.action === 'deny' ? { rule: read.rule ?? '', action: read.action } : undefined,
    );
    let media;
    if (entry.kind === 'file') {
      ctx.media.ensureRoom(path.display, entry.size);
      media = ctx.media.stage(path, disk, await readFile(entry.from), taint);
    } else {
      media = ctx.media.stage(path, disk, undefined, taint, 'model', { kind: 'delete' });
    }
    return { ...base, action: 'staged', mediaId: media.id, why };
  } catch (e) {
    return {
      ...base,
      action: 'held',
      why: `${why}; it could not be staged either (${e instanceof Error ? e.message : String(e)}), so nothing of it reached the workspace`,
    };
  }
}

/** A workspace file's bytes as they are on disk: never through a link at its place, nor waiting on a pipe; undefined when there is no file. */
async function diskBytes(path: ModelPath, ensureRoom: (size: number) => void): Promise<Uint8Array | undefined> {
  if (path.root.localPath === undefined) return undefined;
  let file;
  try {
    file = await open(
      nodePath.join(path.root.localPath, ...path.rel.split('/')),
      constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK,
    );
  } catch {
    return undefined;
  }
  try {
    const stat = await file.stat();
    if (!stat.isFile()) return undefined;
    ensureRoom(stat.size);
    return new Uint8Array(await file.readFile());
  } finally {
    await file.close();
  }
}
