import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError, cancelled } from '../errors.ts';
import type { ModelPath, ResolvedPath } from '../paths.ts';
import type { Clock, WorkspaceFs } from '../ports.ts';
import { spoolFile } from './spool.ts';
import type { TextEncoding } from '../text/encoding.ts';
import { formatBytes } from '../text/format.ts';
import { openChecked, type OpenedFile } from '../fs/open-checked.ts';
import { LiveResult } from './live.ts';
import type { LineIndex } from './line-index.ts';
import { Emitter, type Disposable, type Listener } from '../events.ts';
import { removeDeadRunFolders } from '../run-folders.ts';
import type { ArtifactChange, ArtifactHandle, ArtifactInfo, ArtifactKind, ResultArtifactWriter } from './types.ts';
import { handleOf, type Entry, type LeasedArtifact } from './entry.ts';

export interface ArtifactStoreOptions {
  readonly fs: WorkspaceFs;
  /** Private folder for spool files. */
  readonly dir: string;
  readonly clock: Clock;
  readonly budgetBytes: () => number;
  readonly nonStreamingMaxBytes: () => number;
  /** How long artifacts live, as the host says it (default: "the editor session"). */
  readonly lifetime?: string;
  /** The encoding the user's settings give a file (VS Code's files.encoding), if any. */
  readonly encodingOf?: (path: ModelPath) => TextEncoding | undefined;
}

const EVICTED_REMEMBERED = 1000;
/** Kept free of a result's lines for its last ones (notes, and the line that says how it ended). */
const RESULT_TRAILER_ROOM = 4096;
const RUN_PREFIX = 'wt-run-';

/**
 * Spooled, line-indexed snapshots of files. Each artifact is a copy of the file's bytes taken when
 * it was opened, in a per-run folder under `dir`; the copies stay within `budgetBytes()` by
 * evicting the least recently used, and go away on `dispose()` (or, after a crash, on the next
 * run's `start()`).
 */
export class ArtifactStore {
  readonly options: ArtifactStoreOptions;
  private readonly entries = new Map<string, Entry>();
  private readonly evicted = new Map<string, { readonly path: string; readonly kind: ArtifactKind }>();
  private readonly changed = new Emitter<ArtifactChange>();
  private readonly tag = randomBytes(3).toString('hex');
  private readonly runDir: string;
  private counter = 0;
  private reserved = 0;
  private started: Promise<number> | undefined;
  private disposed = false;

  constructor(options: ArtifactStoreOptions) {
    this.options = options;
    this.runDir = nodePath.join(options.dir, `${RUN_PREFIX}${process.pid}-${this.tag}`);
  }

  /**
   * Removes the spool folders of runs that died without cleanup (see run-folders.ts) and creates this
   * run's folder. Idempotent; `open` calls it too, but a host should call it at activation.
   */
  start(): Promise<number> {
    this.started ??= (async () => {
      await fsp.mkdir(this.options.dir, { recursive: true });
      const removed = await removeDeadRunFolders(this.options.dir, RUN_PREFIX);
      // Security: spool files are copies of workspace files (secrets included, once approved): only this user may read them.
      await fsp.mkdir(this.runDir, { recursive: true, mode: 0o700 });
      return removed;
    })();
    return this.started;
  }

  /** The folder holding this run's spool files. */
  get spoolDir(): string {
    return this.runDir;
  }

  /** Fires when an artifact is opened, evicted, or closed by `dispose()`; a listener's failure (a host's view) does not fail the call. */
  onDidChange(listener: Listener<ArtifactChange>): Disposable {
    return this.changed.event(listener);
  }

  /** The path an artifact was opened from, for the gate (pure: no disk I/O). */
  target(callId: string): ModelPath {
    return this.entry(callId).info.source;
  }

  /** An open artifact (does not count as a use for eviction). */
  get(callId: string): ArtifactInfo {
    const entry = this.entry(callId);
    return { ...entry.info, lastUsedAt: entry.lastUsedAt };
  }

  /** Open artifacts, most recently used first. */
  list(): ArtifactInfo[] {
    return [...this.entries.values()].reverse().map((e) => ({ ...e.info, lastUsedAt: e.lastUsedAt }));
  }

  /** Disk space the open artifacts take. */
  get usedBytes(): number {
    let used = 0;
    for (const entry of this.entries.values()) used += entry.info.spoolBytes;
    return used;
  }

  private entry(callId: string): Entry {
    const entry = this.entries.get(callId);
    if (entry) return entry;
    const was = this.evicted.get(callId);
    if (was?.kind === 'result') {
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `Artifact "${callId}" (${was.path}) was evicted to keep artifacts within their disk budget; it is gone. Make the call again for a fresh result.`,
        '',
      );
    }
    if (was !== undefined) {
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `Artifact "${callId}" (${was.path}) was evicted to keep artifacts within their disk budget; its snapshot is gone.`,
        `Open "${was.path}" again with open_file (it will show the file as it is now).`,
      );
    }
    throw new SandboxError(
      'E_SANDBOX_NOT_FOUND',
      `No artifact has callId "${callId}": artifacts live only as long as ${this.options.lifetime ?? 'the editor session'} and this id is not one of them.`,
      `Open the file again with open_file and use the callId it returns.`,
    );
  }

  /**
   * Runs `use` with the artifact's spool file kept on disk even if the artifact is evicted meanwhile;
   * counts as a use for eviction. The artifact_* contracts read through it.
   */
  async lease<T>(callId: string, use: (artifact: LeasedArtifact) => Promise<T>): Promise<T> {
    const entry = this.entry(callId);
    entry.leases++;
    entry.lastUsedAt = this.options.clock.now();
    this.entries.delete(callId);
    this.entries.set(callId, entry);
    try {
      return await use(entry);
    } finally {
      entry.leases--;
      if (entry.gone && entry.leases === 0) await fsp.rm(entry.spoolPath, { force: true });
    }
  }

  /** A new artifact's id and spool file. */
  private allot(): { callId: string; spoolPath: string } {
    const n = ++this.counter;
    return { callId: `art-${this.tag}-${n}`, spoolPath: nodePath.join(this.runDir, `${n}.spool`) };
  }

  private evict(entry: Entry, reason: 'evicted' | 'closed'): Promise<void> {
    const { callId, path, kind } = entry.info;
    this.entries.delete(callId);
    entry.gone = true;
    // A result still being written has nowhere to go: stop whatever writes it.
    entry.live?.stop();
    if (reason === 'evicted') {
      this.evicted.set(callId, { path, kind });
      if (this.evicted.size > EVICTED_REMEMBERED) this.evicted.delete(this.evicted.keys().next().value!);
    }
    this.changed.fire({ type: reason, callId });
    return entry.leases === 0 ? fsp.rm(entry.spoolPath, { force: true }) : Promise.resolve();
  }

  /** Evicts least recently used artifacts (never `keep`) until the open ones and the opens in flight fit the budget. */
  private async makeRoom(keep?: string): Promise<void> {
    const budget = this.options.budgetBytes();
    for (const entry of [...this.entries.values()]) {
      if (this.usedBytes + this.reserved <= budget) return;
      if (entry.info.callId !== keep) await this.evict(entry, 'evicted');
    }
  }

  /** Spools the file at `source` (already gated and resolved) into a new artifact. */
  async open(source: ResolvedPath, signal: AbortSignal, kind: ArtifactKind = 'text'): Promise<ArtifactHandle> {
    if (this.disposed)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        'The artifact store is shutting down; nothing can be opened now. Try again after the editor reloads.',
        '',
      );
    if (!source.exists)
      throw new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `"${source.display}" does not exist.`,
        `Check the path with find_files or list_directory; paths are relative to the workspace folder.`,
      );
    await this.start();
    if (signal.aborted) throw cancelled();
    const opened = await openChecked(this.options.fs, source);
    try {
      return await this.spool(source, opened, signal, kind);
    } finally {
      await opened.release();
    }
  }

  private async spool(
    source: ResolvedPath,
    opened: OpenedFile,
    signal: AbortSignal,
    kind: ArtifactKind,
  ): Promise<ArtifactHandle> {
    const { fs } = this.options;
    const opening = opened.stat ?? (await fs.stat(opened.address).catch(() => undefined));
    const size = opening?.size ?? 0;
    const links = opening?.nlink ?? 1;
    const budget = this.options.budgetBytes();
    if (size > budget) {
      throw new SandboxError(
        'E_SANDBOX_TOO_LARGE',
        `"${source.display}" is ${formatBytes(size)}, more than the whole artifact disk budget (${formatBytes(budget)}), so it cannot be opened as an artifact. Search it with search_files instead, or ask the user to raise the artifact budget setting.`,
        '',
      );
    }
    const { callId, spoolPath } = this.allot();
    this.reserved += size;
    let entry: Entry;
    try {
      await this.makeRoom();
      const result = await spoolFile(
        {
          fs,
          address: opened.address,
          display: source.display,
          fileName: nodePath.posix.basename(source.rel),
          nonStreamingMaxBytes: this.options.nonStreamingMaxBytes(),
          configured: this.options.encodingOf?.(source),
        },
        spoolPath,
        signal,
      );
      const now = this.options.clock.now();
      entry = {
        info: {
          callId,
          path: source.display,
          bytes: result.sourceBytes,
          lines: result.index.lines,
          encoding: result.encoding,
          eol: result.index.eol,
          binary: result.binary,
          mtime: new Date(result.mtimeMs).toISOString(),
          ...(links > 1 ? { links } : {}),
          kind,
          source: { root: source.root, rel: source.rel, display: source.display },
          openedAt: now,
          spoolBytes: result.index.bytes,
        },
        lastUsedAt: now,
        spoolPath,
        index: result.index,
        leases: 0,
        gone: false,
      };
    } catch (e) {
      await fsp.rm(spoolPath, { force: true });
      throw e;
    } finally {
      this.reserved -= size;
    }
    if (this.disposed) {
      await fsp.rm(spoolPath, { force: true });
      throw cancelled();
    }
    this.entries.set(callId, entry);
    await this.makeRoom(callId);
    this.changed.fire({ type: 'opened', callId });
    return handleOf(entry);
  }

  /**
   * Registers a result artifact whose spool file is about to be written (see results/pager.ts). It
   * is readable at once: artifact_read waits for lines not written yet, everything else for the end.
   * `stop` ends the writing when the store is disposed.
   */
  async openResult(spec: {
    readonly label: string;
    readonly source: ModelPath;
    readonly stop: () => void;
  }): Promise<ResultArtifactWriter> {
    if (this.disposed)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        'The artifact store is shutting down; no result can be kept now. Try again after the editor reloads.',
        '',
      );
    await this.start();
    const { callId, spoolPath } = this.allot();
    const now = this.options.clock.now();
    const live = new LiveResult(spec.stop);
    const { source } = spec;
    const entry: Entry = {
      info: {
        callId,
        path: spec.label,
        bytes: 0,
        lines: 0,
        encoding: 'utf8',
        eol: 'none',
        binary: false,
        mtime: new Date(now).toISOString(),
        kind: 'result',
        source: { root: source.root, rel: source.rel, display: source.display },
        openedAt: now,
        spoolBytes: 0,
      },
      lastUsedAt: now,
      spoolPath,
      index: { bytes: 0, newlines: 0, crlf: 0, blockCounts: Float64Array.of(0), lines: 0, eol: 'none' },
      live,
      leases: 0,
      gone: false,
    };
    this.entries.set(callId, entry);
    this.changed.fire({ type: 'opened', callId });
    const grow = (index: LineIndex): void => {
      entry.index = index;
      entry.info = { ...entry.info, bytes: index.bytes, lines: index.lines, eol: index.eol, spoolBytes: index.bytes };
    };
    return {
      callId,
      spoolPath,
      grow: (index) => {
        grow(index);
        live.wake(false);
      },
      room: (bytes) => this.roomFor(entry, bytes),
      end: async (index, heldBytes) => {
        grow(index);
        entry.info = { ...entry.info, heldBytes };
        entry.live = undefined;
        live.wake(true);
        if (this.entries.get(callId) === entry) await this.makeRoom(callId);
      },
      remove: async () => {
        entry.live = undefined;
        live.wake(true);
        if (this.entries.get(callId) === entry) await this.evict(entry, 'closed');
        else await fsp.rm(spoolPath, { force: true });
      },
    };
  }

  /**
   * Security: a result keeps being written after its call returned (a search of a big tree spooled
   * 1.6 GB in 30 s, and growing), so every write is within the disk budget: it makes room by evicting
   * the least recently used other artifacts, and is refused once this result alone would pass the
   * budget, or once its artifact is gone (nobody can read it).
   */
  private roomFor(entry: Entry, bytes: number): string | undefined {
    if (this.entries.get(entry.info.callId) !== entry)
      return 'its artifact was evicted or closed, so nobody can read it';
    const budget = this.options.budgetBytes();
    const fits = (): boolean => this.usedBytes + this.reserved + bytes + RESULT_TRAILER_ROOM <= budget;
    for (const other of [...this.entries.values()]) {
      if (fits()) return undefined;
      // Its share of the budget is given back at once; the file goes when no call reads it.
      if (other !== entry) this.evict(other, 'evicted').catch(() => undefined);
    }
    return fits() ? undefined : `the result reached the artifact disk budget (${formatBytes(budget)})`;
  }

  /** Resolves once an artifact is completely written (at once for a file's snapshot). */
  async settled(callId: string): Promise<void> {
    await this.entry(callId).live?.finished();
  }

  /** Removes every artifact and this run's spool folder. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const entry of [...this.entries.values()]) await this.evict(entry, 'closed');
    this.changed.dispose();
    if (this.started) {
      await this.started.catch(() => undefined);
      await fsp.rm(this.runDir, { recursive: true, force: true });
    }
  }
}
