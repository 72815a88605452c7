import type { Clock, Log, WorkspaceFs } from '../ports.ts';
import type { WorkspaceRoot } from '../paths.ts';
import { LinkIndex, NO_LINKS, slashed, type FoundLink } from './link-index.ts';

/** Entries one walk reads per workspace folder at most; beyond it the index is incomplete (and says so once). */
export const MAX_WALK_ENTRIES = 100_000;
/** Folders read at once. */
const CONCURRENCY = 16;

/** `fn` over `items`, `CONCURRENCY` at a time. */
async function eachLimited<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => { while (next < items.length) await fn(items[next++]!); };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

interface FolderWalk {
  readonly real: string | undefined;
  readonly links: FoundLink[];
  readonly complete: boolean;
}

/**
 * The links in one workspace folder: breadth-first, one directory listing per folder and no stat
 * per file (the listing's types say which entries are links), never entering a link; then one
 * realpath per link. Breadth-first, so when a huge folder stops the walk at `maxEntries`, the
 * shallow links (the `.vscode`, `.git` and `.env` that VS Code and git follow) are all seen.
 */
async function walkFolder(fs: WorkspaceFs, root: WorkspaceRoot & { readonly localPath: string }, maxEntries: number): Promise<FolderWalk> {
  let real: string;
  try { real = slashed(await fs.realpath(root.address)); } catch { return { real: undefined, links: [], complete: true }; }
  const found: string[] = [];
  let entries = 0;
  let complete = true;
  let level: string[] = [''];
  while (level.length > 0 && complete) {
    const below: string[] = [];
    await eachLimited(level, async (rel) => {
      if (!complete) return;
      let listed;
      try { listed = await fs.readDirectory(rel === '' ? root.address : fs.join(root.address, ...rel.split('/'))); } catch { return; }
      for (const entry of listed) {
        if (++entries > maxEntries) { complete = false; return; }
        const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
        if (entry.type === 'symlink') found.push(path); else if (entry.type === 'directory') below.push(path);
      }
    });
    level = below;
  }
  const links: FoundLink[] = [];
  await eachLimited(found, async (rel) => {
    // A dangling link or a loop leads nowhere a path of ours could be.
    const target = await fs.realpath(fs.join(root.address, ...rel.split('/'))).catch(() => undefined);
    if (target !== undefined) links.push({ folder: root.localPath, rel, at: `${real}/${rel}`, target: slashed(target) });
  });
  return { real, links, complete };
}

/** The links of every workspace folder with a local path; none where the backend has no links. */
export async function findLinks(fs: WorkspaceFs, roots: readonly WorkspaceRoot[], maxEntries = MAX_WALK_ENTRIES): Promise<{ index: LinkIndex; incomplete: readonly string[] }> {
  if (!fs.capabilities.symlinks || !fs.capabilities.localPaths) return { index: NO_LINKS, incomplete: [] };
  const local = roots.filter((r): r is WorkspaceRoot & { readonly localPath: string } => r.localPath !== undefined);
  const walks = await Promise.all(local.map((root) => walkFolder(fs, root, maxEntries)));
  const reals = new Map<string, string>();
  local.forEach((root, i) => { const real = walks[i]!.real; if (real !== undefined) reals.set(root.localPath, real); });
  const incomplete = local.filter((_, i) => !walks[i]!.complete).map((root) => root.name);
  return { index: new LinkIndex(reals, walks.flatMap((w) => w.links), incomplete.length === 0), incomplete };
}

/**
 * The session's link index, walked again when it is older than a call allows. Security: a call
 * that writes to disk asks for one walked after it was approved (no link made before is missed);
 * other calls take one a few seconds old at most, so a search or a read mostly costs no walk of its
 * own, and search and list filter every result against that one index without walking.
 */
export class LinkCache {
  private latest: { readonly key: string; readonly started: number; readonly index: LinkIndex } | undefined;
  private building: { readonly key: string; readonly started: number; readonly done: Promise<LinkIndex> } | undefined;
  private readonly warned = new Set<string>();

  private readonly fs: WorkspaceFs;
  private readonly clock: Clock;
  private readonly log: Log;

  constructor(fs: WorkspaceFs, clock: Clock, log: Log) {
    this.fs = fs;
    this.clock = clock;
    this.log = log;
  }

  /** The latest index, whatever its age (for a call prepared without I/O). */
  get current(): LinkIndex { return this.latest?.index ?? NO_LINKS; }

  /** An index of `roots` walked no earlier than `maxAgeMs` ago (0: walked after this call). */
  async refresh(roots: readonly WorkspaceRoot[], maxAgeMs: number): Promise<LinkIndex> {
    const key = roots.map((r) => `${r.name}\u0000${r.localPath ?? ''}`).join('\u0001');
    const now = this.clock.now();
    const fresh = (entry: { readonly key: string; readonly started: number } | undefined): boolean => maxAgeMs > 0 && entry !== undefined && entry.key === key && now - entry.started <= maxAgeMs;
    if (fresh(this.latest)) return this.latest!.index;
    if (fresh(this.building)) return this.building!.done;
    const started = now;
    const done = findLinks(this.fs, roots).then(({ index, incomplete }) => {
      for (const name of incomplete.filter((n) => !this.warned.has(n))) {
        this.warned.add(name);
        this.log.warn(`The workspace folder "${name}" has more than ${MAX_WALK_ENTRIES} entries: links below the first ${MAX_WALK_ENTRIES} are not checked for protected or secret names.`);
      }
      const latest = this.latest;
      // Unchanged links keep the same index (and so the same policy view), the newer walk's time.
      const kept = latest !== undefined && latest.key === key && latest.index.sameAs(index) ? latest.index : index;
      if (latest === undefined || latest.started <= started) this.latest = { key, started, index: kept };
      return kept;
    });
    this.building = { key, started, done };
    return done;
  }
}
