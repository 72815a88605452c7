import { cancelled, fromFsError } from '../errors.ts';
import { isWithin } from '../paths.ts';
import type { DirEntry, EntryType, WorkspaceFs } from '../ports.ts';
import type { DirectoryLister, ListFrame, ListQuery } from './port.ts';

const typeOrder: Record<EntryType, number> = { directory: 0, file: 1, symlink: 1, other: 1 };

/** Lists through the WorkspaceFs port: lstat sizes, symlinks shown and never followed. */
export function fsLister(fs: WorkspaceFs): DirectoryLister {
  return {
    name: 'workspace filesystem',
    async *list({ folder, maxDepth, hidden, signal }: ListQuery): AsyncIterable<ListFrame> {
      async function* walk(address: string, relFromRoot: string, relFromTarget: string, depth: number): AsyncIterable<ListFrame> {
        if (signal.aborted) throw cancelled();
        const entries = await fs.readDirectory(address).catch((e: unknown) => { throw fromFsError(e, relFromTarget || folder.display, 'list'); });
        const named = entries
          .map((entry) => ({ entry, rel: relFromRoot ? `${relFromRoot}/${entry.name}` : entry.name }))
          .filter(({ rel }) => !hidden(rel));
        const leadsToHidden = await Promise.all(named.map(({ entry }) => entry.type === 'symlink' && linkLeadsToHidden(fs.join(address, entry.name))));
        const visible = named
          .filter((_, i) => !leadsToHidden[i])
          .sort((a, b) => typeOrder[a.entry.type] - typeOrder[b.entry.type] || (a.entry.name < b.entry.name ? -1 : a.entry.name > b.entry.name ? 1 : 0));
        const sizes = await sizesOf(address, visible.map(({ entry }) => entry));
        for (const [i, { entry, rel }] of visible.entries()) {
          const path = relFromTarget ? `${relFromTarget}/${entry.name}` : entry.name;
          const size = sizes[i];
          yield { kind: 'entry', entry: { path, type: entry.type, depth, ...(size !== undefined ? { size } : {}) } };
          if (entry.type === 'directory' && (maxDepth === undefined || depth < maxDepth)) {
            yield* walk(fs.join(address, entry.name), rel, path, depth + 1);
          }
        }
      }
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
      // Entries are named from where the folder really is (it may be reached through a link).
      yield* walk(folder.address, folder.realRel, '', 1);
      yield { kind: 'done', complete: true };
    },
  };
}
