import type { Clock, FileStat, Log, WorkspaceFs } from '../ports.ts';
import type { WorkspaceRoot } from '../paths.ts';
import { LinkIndex, NO_LINKS, slashed, type FoundLink } from './link-index.ts';

/** Entries one walk reads per workspace folder at most; beyond it the index is incomplete (and says so once). */
export const MAX_WALK_ENTRIES = 100_000;
/** Folders read at once. */
const CONCURRENCY = 16;

/** `fn` over `items`, `CONCURRENCY` at a time. */
async function eachLimited<T>(items: readonly T[], fn: (item: T) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) await fn(items[next++]!);
  };
  await Promise.all(Array.from({ length: Math.min(CONCURRENCY, items.length) }, worker));
}

/**
 * What a walk saw of one folder, kept so that the next walk lists again only the folders that
 * changed. Security: a folder's ctime changes whenever an entry is added, removed or renamed in it,
 * and unlike its mtime nobody can set it back; a folder is reused only while its ctime and identity
 * are the ones read just before it was listed.
 */
interface SeenFolder {
  readonly ctimeMs: number;
  /** Compared too, for a file system that keeps no real ctime (some FUSE ones give 0 or a constant). */
  readonly mtimeMs: number;
  readonly dev: number | undefined;
  readonly ino: number | undefined;
  /** How many entries it had, and its folders and links (paths relative to the workspace folder). */
  readonly entries: number;
  readonly folders: readonly string[];
  readonly links: readonly string[];
}

/** The folders one walk of a workspace folder saw, by path relative to it ("" is the folder itself). */
export type SeenFolders = ReadonlyMap<string, SeenFolder>;

/**
 * A folder changed this recently is listed again by the next walk: a change in the same tick of a
 * coarse file-system clock (FAT: 2 s) leaves its ctime as it was.
 */
export const RECENT_CHANGE_MS = 2_000;

interface FolderWalk {
  readonly real: string | undefined;
  readonly links: FoundLink[];
  readonly complete: boolean;
  readonly seen: SeenFolders;
}

/**
 * The links in one workspace folder: breadth-first, one directory listing per folder and no stat
 * per file (the listing's types say which entries are links), never entering a link; then one
 * realpath per link. Breadth-first, so when a huge folder stops the walk at `maxEntries`, the
 * shallow links (the `.vscode`, `.git` and `.env` that VS Code and git follow) are all seen.
 * Given what the previous walk saw (`before`), each folder is first stat'ed, and listed again only
 * when it changed since: a walk of an unchanged tree costs one stat a folder.
 */
async function walkFolder(
  fs: WorkspaceFs,
  root: WorkspaceRoot & { readonly localPath: string },
  maxEntries: number,
  before: SeenFolders | undefined,
  recentMs: number,
): Promise<FolderWalk> {
  let real: string;
  try {
    real = slashed(await fs.realpath(root.address));
  } catch {
    return { real: undefined, links: [], complete: true, seen: new Map() };
  }
  const found: string[] = [];
  const seen = new Map<string, SeenFolder>();
  // File-system times are wall-clock times, whatever clock the session is given.
  const settled = Date.now() - recentMs;
  let entries = 0;
  let complete = true;
  let level: string[] = [''];
  // Each folder's address is made where it is used, not held for the whole level (see unpackFolder: what survives a walk can make V8 pretenure).
  const addressOf = (rel: string): string => (rel === '' ? root.address : fs.join(root.address, ...rel.split('/')));
  while (level.length > 0 && complete) {
    const below: string[] = [];
    // Stat'ed before they are listed: a change after the stat shows as a newer ctime to the next walk.
    const stats = before === undefined ? undefined : await statFolders(fs, level, addressOf);
    await eachLimited(
      level.map((_, k) => k),
      async (k) => {
        if (!complete) return;
        const rel = level[k]!;
        const stat = stats?.[k];
        if (stats !== undefined && stat?.type !== 'directory') return;
        const known = before?.get(rel);
        if (
          known !== undefined &&
          stat?.ctimeMs === known.ctimeMs &&
          stat.mtimeMs === known.mtimeMs &&
          stat.dev === known.dev &&
          stat.ino === known.ino &&
          entries + known.entries <= maxEntries
        ) {
          entries += known.entries;
          append(found, known.links);
          append(below, known.folders);
          seen.set(rel, known);
          return;
        }
        let listed;
        try {
          listed = await fs.readDirectory(addressOf(rel));
        } catch {
          return;
        }
        const folders: string[] = [];
        const links: string[] = [];
        for (const entry of listed) {
          if (++entries > maxEntries) {
            complete = false;
            return;
          }
          const path = rel === '' ? entry.name : `${rel}/${entry.name}`;
          if (entry.type === 'symlink') links.push(path);
          else if (entry.type === 'directory') folders.push(path);
        }
        append(found, links);
        append(below, folders);
        if (stat?.ctimeMs !== undefined && stat.ctimeMs > 0 && stat.ctimeMs < settled && stat.mtimeMs < settled) {
          seen.set(rel, {
            ctimeMs: stat.ctimeMs,
            mtimeMs: stat.mtimeMs,
            dev: stat.dev,
            ino: stat.ino,
            entries: listed.length,
            folders,
            links,
          });
        }
      },
    );
    level = below;
  }
  const links: FoundLink[] = [];
  await eachLimited(found, async (rel) => {
    // A dangling link or a loop leads nowhere a path of ours could be.
    const target = await fs.realpath(addressOf(rel)).catch(() => undefined);
    if (target !== undefined)
      links.push({ folder: root.localPath, rel, at: `${real}/${rel}`, target: slashed(target) });
  });
  return { real, links, complete, seen };
}

/**
 * The folders of one level of the walk, stat'ed (undefined: gone): the workspace folder itself
 * through a link it may be opened by, every other one as itself (a walk never enters a link).
 */
async function statFolders(
  fs: WorkspaceFs,
  level: readonly string[],
  addressOf: (rel: string) => string,
): Promise<readonly (FileStat | undefined)[]> {
  if (level.length === 1 && level[0] === '') return [await fs.stat(addressOf('')).catch(() => undefined)];
  const stats: (FileStat | undefined)[] = [];
  for (let from = 0; from < level.length; from += STAT_BATCH) {
    const batch = level.slice(from, from + STAT_BATCH);
    if (fs.lstatMany) append(stats, await fs.lstatMany(batch.map(addressOf)));
    else
      await eachLimited(
        batch.map((_, k) => k),
        async (k) => {
          stats[from + k] = await fs.lstat(addressOf(batch[k]!)).catch(() => undefined);
        },
      );
  }
  return stats;
}

/** Appends `items` one by one: a folder may hold up to the walk's bound of them, past what a spread into `push` takes. */
function append<T>(to: T[], items: readonly T[]): void {
  for (const item of items) to.push(item);
}

/** Folders stat'ed at once: their addresses live only as long as one batch. */
const STAT_BATCH = 256;

/**
 * The links of every workspace folder with a local path; none where the backend has no links.
 * `before`: what the previous walk saw, by workspace folder address (see `walkFolder`); the walk
 * returns what it saw, for the next one, leaving out folders changed in the last `recentMs`.
 */
export async function findLinks(
  fs: WorkspaceFs,
  roots: readonly WorkspaceRoot[],
  maxEntries = MAX_WALK_ENTRIES,
  before?: ReadonlyMap<string, SeenFolders>,
  recentMs = RECENT_CHANGE_MS,
): Promise<{ index: LinkIndex; incomplete: readonly string[]; seen: ReadonlyMap<string, SeenFolders> }> {
  if (!fs.capabilities.symlinks || !fs.capabilities.localPaths)
    return { index: NO_LINKS, incomplete: [], seen: new Map() };
  const local = roots.filter((r): r is WorkspaceRoot & { readonly localPath: string } => r.localPath !== undefined);
  const walks = await Promise.all(
    local.map((root) => walkFolder(fs, root, maxEntries, before?.get(root.address), recentMs)),
  );
  const reals = new Map<string, string>();
  local.forEach((root, i) => {
    const real = walks[i]!.real;
    if (real !== undefined) reals.set(root.localPath, real);
  });
  const incomplete = local.filter((_, i) => !walks[i]!.complete).map((root) => root.name);
  const seen = new Map(local.map((root, i) => [root.address, walks[i]!.seen]));
  return {
    index: new LinkIndex(
      reals,
      walks.flatMap((w) => w.links),
      incomplete.length === 0,
    ),
    incomplete,
    seen,
  };
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
  /** What the latest walk saw of each folder (none before the first walk): the next walk lists again only what changed. */
  private seen: ReadonlyMap<string, SeenFolders> | undefined;

  private readonly fs: WorkspaceFs;
  private readonly clock: Clock;
  private readonly log: Log;

  constructor(fs: WorkspaceFs, clock: Clock, log: Log) {
    this.fs = fs;
    this.clock = clock;
    this.log = log;
  }

  /** The latest index, whatever its age (for a call prepared without I/O). */
  get current(): LinkIndex {
    return this.latest?.index ?? NO_LINKS;
  }

  /** An index of `roots` walked no earlier than `maxAgeMs` ago (0: walked after this call). */
  async refresh(roots: readonly WorkspaceRoot[], maxAgeMs: number): Promise<LinkIndex> {
    const key = roots.map((r) => `${r.name}\u0000${r.localPath ?? ''}`).join('\u0001');
    const now = this.clock.now();
    const fresh = (entry: { readonly key: string; readonly started: number } | undefined): boolean =>
      maxAgeMs > 0 && entry !== undefined && entry.key === key && now - entry.started <= maxAgeMs;
    if (fresh(this.latest)) return this.latest!.index;
    if (fresh(this.building)) return this.building!.done;
    const started = now;
    const done = findLinks(this.fs, roots, MAX_WALK_ENTRIES, this.seen).then(({ index, incomplete, seen }) => {
      this.seen = seen;
      for (const name of incomplete.filter((n) => !this.warned.has(n))) {
        this.warned.add(name);
        this.log.warn(
          `The workspace folder "${name}" has more than ${MAX_WALK_ENTRIES} entries: links below the first ${MAX_WALK_ENTRIES} are not checked for protected or secret names.`,
        );
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
