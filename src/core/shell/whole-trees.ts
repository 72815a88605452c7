import { lstat } from 'node:fs/promises';
import type { ModelPath, GatedPath } from '../paths.ts';
import type { SaveContext } from '../media/save.ts';
import { inPinned } from '../media/file-ops.ts';
import { moveTree, treeChange, treeStampOf, type TreeManifest, type TreeStamp } from '../media/tree.ts';
import type { JudgedChange } from './judge.ts';

/** A new folder with at least this many files is moved in whole. */
const WHOLE_TREE_FILES = 100;

/** A folder the command made where nothing was, with everything in it (indices of `changes`, the folder first). */
export interface WholeTree {
  readonly top: number;
  readonly members: readonly number[];
  readonly manifest: TreeManifest;
}

const keyOf = (path: ModelPath): string => `${path.root.address}\0${path.rel}`;

/**
 * The new folders (outermost first) that can be moved in by one rename: every change in them is
 * applied as it is (no file staged or held, no set-id or setgid bit, nothing made unreadable to
 * its owner), they hold at least `WHOLE_TREE_FILES` files, and their upper layer lies on the
 * workspace folder's filesystem.
 */
export async function wholeTrees(changes: readonly JudgedChange[]): Promise<WholeTree[]> {
  const keyed = changes.map((c, i) => ({ i, key: keyOf(c.path) })).sort((a, b) => (a.key < b.key ? -1 : 1));
  const order = keyed.map((k) => k.i);
  const keys = keyed.map((k) => k.key);
  const removed = new Set(
    changes.filter((c) => c.entry.kind === 'delete' || c.entry.kind === 'rmdir').map((c) => keyOf(c.path)),
  );
  const trees: WholeTree[] = [];
  let within: string | undefined;
  for (const [at, i] of order.entries()) {
    const { entry, path, verdict } = changes[i]!;
    if (within !== undefined && keys[at]!.startsWith(within)) continue;
    if (
      entry.kind !== 'mkdir' ||
      verdict.action !== 'apply' ||
      removed.has(keys[at]!) ||
      path.root.localPath === undefined
    )
      continue;
    const prefix = `${keys[at]}/`;
    const members = [i];
    const entries = new Map<string, TreeStamp>([['', { type: 'folder', ...entry.stamp }]]);
    let files = 0;
    let bytes = 0;
    let whole = true;
    for (let j = lowerBound(keys, prefix); whole && j < keys.length && keys[j]!.startsWith(prefix); j++) {
      const member = changes[order[j]!]!;
      const inner = member.entry;
      whole =
        member.verdict.action === 'apply' &&
        (inner.kind === 'link' ||
          ((inner.kind === 'file' || inner.kind === 'mkdir') && movable(inner.kind, inner.mode)));
      if (!whole || (inner.kind !== 'file' && inner.kind !== 'mkdir' && inner.kind !== 'link')) break;
      entries.set(keys[j]!.slice(prefix.length), {
        type: inner.kind === 'mkdir' ? 'folder' : inner.kind,
        ...inner.stamp,
      });
      if (inner.kind === 'file') {
        files++;
        bytes += inner.size;
      }
      members.push(order[j]!);
    }
    if (!whole || files < WHOLE_TREE_FILES || !(await sameDevice(entry.from, path.root.localPath))) continue;
    trees.push({ top: i, members: members.sort((a, b) => a - b), manifest: { files, bytes, entries } });
    within = prefix;
  }
  return trees;
}

const movable = (kind: 'file' | 'mkdir', mode: number): boolean =>
  (mode & 0o7000) === 0 && (mode & (kind === 'mkdir' ? 0o700 : 0o600)) === (kind === 'mkdir' ? 0o700 : 0o600);

function lowerBound(sorted: readonly string[], key: string): number {
  let [lo, hi] = [0, sorted.length];
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (sorted[mid]! < key) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

async function sameDevice(a: string, b: string): Promise<boolean> {
  const [sa, sb] = await Promise.all([lstat(a), lstat(b)]).catch(() => [undefined, undefined]);
  return sa !== undefined && sb !== undefined && sa.dev === sb.dev;
}

/**
 * Moves a folder the command made to its place by one rename, its parent pinned (made where
 * missing; never through a link): the manifest of what it holds there, or undefined when it could
 * not be moved so (and nothing moved). Security: only what was judged moves: anything else in the
 * upper folder (a whiteout, an entry the walk did not judge) keeps it from moving whole.
 */
export async function moveTreeIn(
  ctx: SaveContext,
  path: GatedPath,
  from: string,
  manifest: TreeManifest,
): Promise<TreeManifest | undefined> {
  if ((await treeChange(from, manifest, false)) !== undefined) return undefined;
  return inPinned(ctx, path, true, async (address) => {
    if (!(await moveTree(from, address))) return undefined;
    // The rename gave the folder a new parent: its own times are taken again.
    const top = treeStampOf(await lstat(address));
    return top === undefined ? undefined : { ...manifest, entries: new Map(manifest.entries).set('', top) };
  });
}
