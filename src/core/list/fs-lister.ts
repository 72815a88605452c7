import { cancelled, fromFsError } from '../errors.ts';
import { isWithin } from '../paths.ts';
import type { DirEntry, EntryType, WorkspaceFs } from '../ports.ts';
import type { DirectoryLister, ListFrame, ListQuery } from './port.ts';

const typeOrder: Record<EntryType, number> = { directory: 0, file: 1, symlink: 1, other: 1 };

/** Folders read ahead of the listing at most, per folder level and in all. */
const READ_AHEAD = 4;
const READ_AHEAD_HELD = 64;

/** Folder listings started before they are needed; `take` hands over the one started (or reads now). */
class ReadAhead {
  private readonly started = new Map<string, Promise<DirEntry[]>>();
  private readonly fs: WorkspaceFs;

  constructor(fs: WorkspaceFs) {
    this.fs = fs;
  }

  start(address: string): void {
    if (this.started.has(address) || this.started.size >= READ_AHEAD_HELD) return;
    const reading = this.fs.readDirectory(address);
    // Its failure is reported when it is taken; unread, it must not be an unhandled rejection.
    reading.catch(() => undefined);
    this.started.set(address, reading);
  }

  take(address: string): Promise<DirEntry[]> {
    const reading = this.started.get(address);
    if (reading === undefined) return this.fs.readDirectory(address);
    this.started.delete(address);
    return reading;
  }
}

/** A folder being listed: its entries (named from where the folder really is; it may be reached through a link) and the next to yield. */
interface FolderListing {
  readonly address: string;
  readonly depth: number;
  next: number;
  readonly entries: readonly { readonly entry: DirEntry; readonly rel: string; readonly path: string; readonly size: number | undefined }[];
}

/** Lists through the WorkspaceFs port: lstat sizes, symlinks shown and never followed. */
export function fsLister(fs: WorkspaceFs): DirectoryLister {
  return {
    name: 'workspace filesystem',
    async *list({ folder, maxDepth, hidden, signal }: ListQuery): AsyncIterable<ListFrame> {
      /** One folder's visible entries in display order, each with its size and its paths. */
      async function listFolder(address: string, relFromRoot: string, relFromTarget: string, depth: number): Promise<FolderListing> {
        if (signal.aborted) throw cancelled();
        const entries = await readAhead.take(address).catch((e: unknown) => { throw fromFsError(e, relFromTarget || folder.display, 'list'); });
        const named = entries
          .map((entry) => ({ entry, rel: relFromRoot ? `${relFromRoot}/${entry.name}` : entry.name }))
          .filter(({ rel }) => !hidden(rel));
        const leadsToHidden = await Promise.all(named.map(({ entry }) => entry.type === 'symlink' && linkLeadsToHidden(fs.join(address, entry.name))));
        const visible = named
          .filter((_, i) => !leadsToHidden[i])
          .sort((a, b) => typeOrder[a.entry.type] - typeOrder[b.entry.type] || (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0));
        const sizes = await sizesOf(address, visible.map(({ entry }) => entry));
        return { address, depth, next: 0, entries: visible.map(({ entry, rel }, i) => ({ entry, rel, path: relFromTarget ? `${relFromTarget}/${entry.name}` : entry.name, size: sizes[i] })) };
      }
      const readAhead = new ReadAhead(fs);
      const descends = (listing: FolderListing, i: number): boolean => listing.entries[i]?.entry.type === 'directory' && (maxDepth === undefined || listing.depth < maxDepth);
      // The next few folders to be listed are read while this one is: a listing waits on the disk less.
      const readAheadFrom = (listing: FolderListing, from: number): void => {
        for (let i = from; i < Math.min(listing.entries.length, from + READ_AHEAD); i++) {
          if (descends(listing, i)) readAhead.start(fs.join(listing.address, listing.entries[i]!.entry.name));
        }
      };
      // Depth first, a folder's entries right after it, with an explicit stack: one generator for
      // the whole tree (a generator per folder level would pass every entry through each level).
      readAhead.start(folder.address);
      const stack: FolderListing[] = [await listFolder(folder.address, folder.realRel, '', 1)];
      readAheadFrom(stack[0]!, 0);
      while (stack.length > 0) {
        const top = stack[stack.length - 1]!;
        const i = top.next++;
        const item = top.entries[i];
        if (item === undefined) { stack.pop(); continue; }
        const { entry, rel, path, size } = item;
        yield { kind: 'entry', entry: { path, type: entry.type, depth: top.depth, ...(size !== undefined ? { size } : {}) } };
        if (descends(top, i)) {
          readAheadFrom(top, i + 1);
          const child = await listFolder(fs.join(top.address, entry.name), rel, path, top.depth + 1);
          readAheadFrom(child, 0);
          stack.push(child);
        }
      }
      yield { kind: 'done', complete: true };

      // Files' and links' own sizes (lstat: a link is never followed); folders have none.
      async function sizesOf(address: string, entries: readonly DirEntry[]): Promise<(number | undefined)[]> {
        const sized = entries.filter((e) => e.type !== 'directory');
        const found = fs.lstatSizes
          ? await fs.lstatSizes(address, sized.map((e) => e.name))
          : await Promise.all(sized.map((e) => fs.lstat(fs.join(address, e.name)).then((s) => s.size, () => undefined)));
        let next = 0;
        return entries.map((e) => (e.type === 'directory' ? undefined : found[next++]));
      }
      // Security: a link is judged by where it leads, so a link to a denied file is as hidden as the file.
      async function linkLeadsToHidden(address: string): Promise<boolean> {
        if (!fs.capabilities.symlinks || folder.realRoot === undefined) return false;
        const real = await fs.realpath(address).catch(() => undefined);
        if (real === undefined || !isWithin(folder.realRoot, real)) return false;
        return hidden(real === folder.realRoot ? '' : real.slice(folder.realRoot.length + 1));
      }
    },
  };
}
