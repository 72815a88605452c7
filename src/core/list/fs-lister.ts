import { cancelled, fromFsError } from '../errors.ts';
import { isWithin } from '../paths.ts';
import type { EntryType, PackedFolder, SizedDirEntry, WorkspaceFs } from '../ports.ts';
import { packFolder, unpackFolder } from '../fs/packed-folder.ts';
import type { DirectoryLister, ListedEntry, ListFrame, ListQuery } from './port.ts';

const typeOrder: Record<EntryType, number> = { directory: 0, file: 1, symlink: 1, other: 1 };

/**
 * Folders read ahead of the listing at most, per folder level and in all. Enough to keep the folder
 * reader's worker busy; more only lengthens what survives each young-generation GC (measured at
 * 300k files: 8 held, ~36 MiB peak growth; 64 held, 50-64 MiB; the same time).
 */
const READ_AHEAD = 4;
const READ_AHEAD_HELD = 8;

/** Folder listings started before they are needed; `take` hands over the one started (or reads now). */
class ReadAhead {
  // A few at most: an array (a Map's table, rebuilt as entries come and go, outlives young-generation GCs).
  private readonly started: { readonly address: string; readonly reading: Promise<PackedFolder> }[] = [];
  private readonly read: (address: string) => Promise<PackedFolder>;

  constructor(read: (address: string) => Promise<PackedFolder>) {
    this.read = read;
  }

  get hasRoom(): boolean {
    return this.started.length < READ_AHEAD_HELD;
  }

  start(address: string): void {
    if (!this.hasRoom || this.started.some((s) => s.address === address)) return;
    const reading = this.read(address);
    // Its failure is reported when it is taken; unread, it must not be an unhandled rejection.
    reading.catch(() => undefined);
    this.started.push({ address, reading });
  }

  take(address: string): Promise<PackedFolder> {
    const at = this.started.findIndex((s) => s.address === address);
    if (at === -1) return this.read(address);
    const { reading } = this.started[at]!;
    this.started.splice(at, 1);
    return reading;
  }
}

/**
 * A listed entry, made by a constructor and not an object literal: V8 pretenures a literal's
 * allocation site once most of its objects survive young GCs, as a listing's first page (held for the
 * model) and its top folders do at the start. Every later entry would then be made in old space,
 * keeping its young path string alive until a full GC: a 1,000,000-file listing grew its memory by
 * ~150 MiB instead of ~30 (`--no-allocation-site-pretenuring` gives the same ~30). A constructed
 * object has no such site.
 */
class Listed implements ListedEntry {
  readonly path: string;
  readonly type: EntryType;
  readonly depth: number;
  declare readonly size?: number;

  constructor(path: string, type: EntryType, depth: number, size: number | undefined) {
    this.path = path;
    this.type = type;
    this.depth = depth;
    if (size !== undefined) this.size = size;
  }
}

/** A folder being listed: where it is (named from where the folder really is; it may be reached through a link), its entries, the next to yield and the next to read ahead. */
interface FolderListing {
  readonly address: string;
  /** Relative to the workspace folder's real root. */
  readonly rel: string;
  /** Relative to the listed folder ("" for itself). */
  readonly path: string;
  readonly depth: number;
  readonly entries: readonly SizedDirEntry[];
  next: number;
  aheadFrom: number;
}

/**
 * Lists through the WorkspaceFs port: lstat sizes, symlinks shown and never followed. A denied
 * folder is never entered and a link to a denied path never yielded; other entries are judged by
 * the listing (list_directory judges every entry a backend yields), not twice.
 */
export function fsLister(fs: WorkspaceFs): DirectoryLister {
  return {
    name: 'workspace filesystem',
    async *list({ folder, maxDepth, hidden, signal }: ListQuery): AsyncIterable<ListFrame> {
      /** One folder's entries in display order, each with its size and its path, but for denied folders and links to denied paths. */
      async function listFolder(
        address: string,
        relFromRoot: string,
        relFromTarget: string,
        depth: number,
      ): Promise<FolderListing> {
        if (signal.aborted) throw cancelled();
        const read = await readAhead.take(address).catch((e: unknown) => {
          throw fromFsError(e, relFromTarget || folder.display, 'list');
        });
        let visible = unpackFolder(read).filter(
          (entry) => entry.type !== 'directory' || !hidden(relFromRoot ? `${relFromRoot}/${entry.name}` : entry.name),
        );
        const links = visible.filter((entry) => entry.type === 'symlink');
        if (links.length > 0) {
          const leadsToHidden = await Promise.all(
            links.map((entry) => linkLeadsToHidden(fs.join(address, entry.name))),
          );
          const dropped = new Set(links.filter((_, i) => leadsToHidden[i]));
          visible = visible.filter((entry) => !dropped.has(entry));
        }
        visible.sort(
          (a, b) => typeOrder[a.type] - typeOrder[b.type] || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0),
        );
        return { address, rel: relFromRoot, path: relFromTarget, depth, entries: visible, next: 0, aheadFrom: 0 };
      }
      const readAhead = new ReadAhead(fs.readDirectorySized ? (address) => fs.readDirectorySized!(address) : readSized);
      const descends = (listing: FolderListing, i: number): boolean =>
        listing.entries[i]?.type === 'directory' && (maxDepth === undefined || listing.depth < maxDepth);
      // The next few folders to be listed are read while this one is: a listing waits on the disk less.
      const readAheadFrom = (listing: FolderListing, from: number): void => {
        const end = Math.min(listing.entries.length, from + READ_AHEAD);
        for (let i = Math.max(from, listing.aheadFrom); i < end && readAhead.hasRoom; i++) {
          listing.aheadFrom = i + 1;
          if (descends(listing, i)) readAhead.start(fs.join(listing.address, listing.entries[i]!.name));
        }
      };
      // Depth first, a folder's entries right after it, with an explicit stack: one generator for
      // the whole tree (a generator per folder level would pass every entry through each level).
      const stack: FolderListing[] = [await listFolder(folder.address, folder.realRel, '', 1)];
      readAheadFrom(stack[0]!, 0);
      while (stack.length > 0) {
        // The top folder's entries up to the next folder to descend into, as one frame.
        const top = stack[stack.length - 1]!;
        const run: ListedEntry[] = [];
        let child: ListedEntry | undefined;
        while (child === undefined && top.next < top.entries.length) {
          const i = top.next++;
          const { name, type, size } = top.entries[i]!;
          const path = top.path ? `${top.path}/${name}` : name;
          const listed = new Listed(path, type, top.depth, size);
          run.push(listed);
          if (descends(top, i)) {
            child = listed;
            readAheadFrom(top, i + 1);
          }
        }
        if (run.length > 0) yield { kind: 'entries', entries: run };
        if (child === undefined) {
          stack.pop();
          continue;
        }
        const name = top.entries[top.next - 1]!.name;
        const listing = await listFolder(
          fs.join(top.address, name),
          top.rel ? `${top.rel}/${name}` : name,
          child.path,
          top.depth + 1,
        );
        readAheadFrom(listing, 0);
        stack.push(listing);
      }
      yield { kind: 'done', complete: true };

      // Files' and links' own sizes (lstat: a link is never followed), where the backend has no cheaper way; folders have none.
      async function readSized(address: string): Promise<PackedFolder> {
        const entries = await fs.readDirectory(address);
        return packFolder(
          await Promise.all(
            entries.map((e) =>
              e.type === 'directory'
                ? e
                : fs.lstat(fs.join(address, e.name)).then(
                    (s) => ({ ...e, size: s.size }),
                    () => e,
                  ),
            ),
          ),
        );
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
