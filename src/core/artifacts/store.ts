import { randomBytes } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError, cancelled } from '../errors.ts';
import type { ModelPath, ResolvedPath } from '../paths.ts';
import type { Clock, WorkspaceFs } from '../ports.ts';
import { locateRipgrep } from '../search/ripgrep-binary.ts';
import type { FileEncoding, TextEncoding } from '../text/encoding.ts';
import type { Eol } from '../text/eol.ts';
import { formatBytes } from '../text/format.ts';
import { runRipgrep } from './grep.ts';
import { missError, parsePointer, renderJson, selectJson, type JsonSummary, type JsonType } from './json.ts';
import type { LineIndex } from './line-index.ts';
import { findSection, nearHeadings, parseOutline, type Heading, type Outline } from './markdown.ts';
import { PAGE_MAX_BYTES, SpoolReader, type SpoolLine } from './reader.ts';
import { spoolFile } from './spool.ts';
import { openChecked, type OpenedFile } from '../fs/open-checked.ts';
import { LiveResult } from './live.ts';

export { MAX_LINE_CHARS, PAGE_MAX_BYTES } from './reader.ts';
export type { Heading, Outline } from './markdown.ts';
export type { JsonSummary, JsonType } from './json.ts';

export interface ArtifactStoreOptions {
  readonly fs: WorkspaceFs;
  /** Private folder for spool files. */
  readonly dir: string;
  readonly clock: Clock;
  readonly budgetBytes: () => number;
  readonly nonStreamingMaxBytes: () => number;
  /** The ripgrep binary for artifact_grep (default: `locateRipgrep()`). */
  readonly ripgrepPath?: () => string | undefined;
  /** The encoding the user's settings give a file (VS Code's files.encoding), if any. */
  readonly encodingOf?: (path: ModelPath) => TextEncoding | undefined;
}

/** `result`: a tool's result too large for one page (see results/pager.ts), not a file. */
export type ArtifactKind = 'text' | 'json' | 'markdown' | 'result';

/** What open_file returns: a handle, never content. */
export interface ArtifactHandle {
  readonly callId: string;
  /** The file as the model addresses it. */
  readonly path: string;
  /** Bytes of the file when it was opened. */
  readonly bytes: number;
  readonly lines: number;
  readonly encoding: FileEncoding;
  readonly eol: Eol;
  readonly binary: boolean;
  /** The file's modification time when it was opened (ISO 8601). */
  readonly mtime: string;
  /** Set when the file has more than one name (hard links): how many. */
  readonly links?: number;
}

/** An open artifact as a host lists it. */
export interface ArtifactInfo extends ArtifactHandle {
  readonly kind: ArtifactKind;
  readonly source: ModelPath;
  /** Clock times. */
  readonly openedAt: number;
  readonly lastUsedAt: number;
  /** Disk space the snapshot takes. */
  readonly spoolBytes: number;
  /** A result artifact: the most of the result held in memory at once while it was written. */
  readonly heldBytes?: number;
}

export interface PageLine {
  /** 1-based line number. */
  readonly n: number;
  /** At most MAX_LINE_CHARS characters, without the line terminator. */
  readonly text: string;
  /** Set when the line was cut: the whole line's length in bytes. */
  readonly cutBytes?: number;
}

export interface ArtifactPage {
  readonly callId: string;
  readonly path: string;
  readonly totalLines: number;
  /** First line in `lines` (the requested offset). */
  readonly startLine: number;
  /** Last line in `lines` (startLine - 1 when the page is empty). */
  readonly endLine: number;
  readonly lines: readonly PageLine[];
  /** The page stopped at the PAGE_MAX_BYTES cap before `limit` lines. */
  readonly truncated: boolean;
  /** The offset to read next, when lines follow. */
  readonly nextOffset?: number;
  /** A result artifact still being written: `totalLines` are the lines so far. */
  readonly spooling?: true;
}

export interface GrepOptions {
  readonly pattern: string;
  readonly literal?: boolean;
  readonly ignoreCase?: boolean;
  readonly maxResults?: number;
  readonly context?: number;
}

export interface GrepLine extends PageLine {
  /** A matching line, or a context line around one. */
  readonly match: boolean;
  /** Binary artifacts: the byte offset of the first match on the line. */
  readonly byteOffset?: number;
}

export interface ArtifactGrepResult {
  readonly callId: string;
  readonly path: string;
  readonly pattern: string;
  readonly literal: boolean;
  readonly binary: boolean;
  /** Matching lines found (at most maxResults). */
  readonly matchCount: number;
  /** Matching and context lines in file order; a gap between groups is a jump in `n`. */
  readonly lines: readonly GrepLine[];
  readonly maxResults: number;
  /** Set when the maxResults asked for was over GREP_MAX_RESULTS (and so capped to it): what was asked. */
  readonly maxResultsAsked?: number;
  /** More matching lines exist beyond maxResults. */
  readonly limited: boolean;
  /** Context lines were asked for a binary artifact and left out. */
  readonly contextOmitted: boolean;
}

export type ArtifactQueryResult =
  | { readonly kind: 'json'; readonly callId: string; readonly path: string; readonly pointer: string; readonly node: JsonSummary; readonly text: string; readonly truncated: boolean }
  | { readonly kind: 'markdown'; readonly callId: string; readonly path: string; readonly heading: Heading; readonly page: ArtifactPage };

export interface JsonShape {
  readonly type: JsonType;
  readonly size?: number;
  readonly startLine: number;
  readonly endLine: number;
  /** Members (object) or the first items (array) with their types and sizes. */
  readonly members: ReadonlyArray<{ readonly key: string | number; readonly type: JsonType; readonly size?: number; readonly line: number }>;
  /** Members not listed. */
  readonly omitted: number;
  /** For an array: how many items of each type. */
  readonly itemTypes?: Partial<Record<JsonType, number>>;
}

export type ArtifactChange = { readonly type: 'opened' | 'evicted' | 'closed'; readonly callId: string };

export interface Disposable { dispose(): void }

/** The writer's side of a result artifact (from `openResult`). */
export interface ResultArtifactWriter {
  readonly callId: string;
  readonly spoolPath: string;
  /** More lines are in the spool file, up to `index`. */
  grow(index: LineIndex): void;
  /** The spool file is complete; `heldBytes` is the most of the result that was held in memory at once. */
  end(index: LineIndex, heldBytes: number): Promise<void>;
  /** The result failed before anyone was told of it: the artifact goes. */
  remove(): Promise<void>;
}

/** Default and cap of artifact_read's `limit`. */
export const PAGE_MAX_LINES = 2000;
/** Matching lines artifact_grep returns when `maxResults` is not given. */
export const GREP_DEFAULT_MAX_RESULTS = 100;
/** The most matching lines one artifact_grep collects, whatever `maxResults` asks (each is held in memory). */
export const GREP_MAX_RESULTS = 10_000;
/** Largest JSON artifact that is parsed (shape, queries) or read whole by `readText`. */
export const STRUCTURE_MAX_BYTES = 32 * 1024 * 1024;
/** Largest Markdown artifact whose outline is parsed: markdown-it takes ~30x the text in memory. */
export const MARKDOWN_MAX_BYTES = 4 * 1024 * 1024;
const SHAPE_MAX_MEMBERS = 200;
const QUERY_DEPTH = 3;
const QUERY_MAX_CHILDREN = 50;
const QUERY_MAX_NODES = 500;
const QUERY_MAX_STRING = 200;
const EVICTED_REMEMBERED = 1000;
const RUN_PREFIX = 'wt-run-';

interface Entry {
  info: Omit<ArtifactInfo, 'lastUsedAt'>;
  lastUsedAt: number;
  readonly spoolPath: string;
  index: LineIndex;
  /** Set while a result artifact is still being written. */
  live?: LiveResult;
  /** Calls currently reading the spool file; an evicted entry's file is deleted when this drops to 0. */
  leases: number;
  gone: boolean;
  /** A Markdown artifact's outline, parsed once. */
  outline?: Outline;
}

/** Whether a process with this id exists (a run folder named after a dead one is stale). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
}

const fileNameOf = (path: ModelPath): string => path.rel.slice(path.rel.lastIndexOf('/') + 1);

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
  private readonly listeners = new Set<(change: ArtifactChange) => void>();
  private readonly tag = randomBytes(3).toString('hex');
  private readonly runDir: string;
  private counter = 0;
  private reserved = 0;
  private started: Promise<number> | undefined;
  private disposed = false;
  private ripgrep: string | undefined;

  constructor(options: ArtifactStoreOptions) {
    this.options = options;
    this.runDir = nodePath.join(options.dir, `${RUN_PREFIX}${process.pid}-${this.tag}`);
  }

  /**
   * Removes spool folders left by runs that are no longer alive (their process id is gone; a folder
   * whose id was reused waits for a later start), and creates this run's folder. Idempotent; `open`
   * calls it too, but a host should call it at activation. Resolves to the number of folders removed.
   */
  start(): Promise<number> {
    this.started ??= (async () => {
      await fsp.mkdir(this.options.dir, { recursive: true });
      let removed = 0;
      for (const name of await fsp.readdir(this.options.dir)) {
        const match = new RegExp(`^${RUN_PREFIX}(\\d+)-[0-9a-f]+$`).exec(name);
        if (!match) continue;
        const pid = Number(match[1]);
        if (pid === process.pid || processAlive(pid)) continue;
        await fsp.rm(nodePath.join(this.options.dir, name), { recursive: true, force: true });
        removed++;
      }
      // Security: spool files are copies of workspace files (secrets included, once approved): only this user may read them.
      await fsp.mkdir(this.runDir, { recursive: true, mode: 0o700 });
      return removed;
    })();
    return this.started;
  }

  /** The folder holding this run's spool files. */
  get spoolDir(): string { return this.runDir; }

  /** Fires when an artifact is opened, evicted, or closed by `dispose()`. */
  onDidChange(listener: (change: ArtifactChange) => void): Disposable {
    this.listeners.add(listener);
    return { dispose: () => { this.listeners.delete(listener); } };
  }

  private fire(change: ArtifactChange): void {
    for (const listener of [...this.listeners]) {
      // A listener's failure (a host's view) must not fail the tool call that caused the change.
      try { listener(change); } catch { /* ignored */ }
    }
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
      throw new SandboxError('E_SANDBOX_NOT_FOUND', `Artifact "${callId}" (${was.path}) was evicted to keep artifacts within their disk budget; it is gone. Make the call again for a fresh result.`);
    }
    if (was !== undefined) {
      throw new SandboxError('E_SANDBOX_NOT_FOUND', `Artifact "${callId}" (${was.path}) was evicted to keep artifacts within their disk budget; its snapshot is gone. Open "${was.path}" again with open_file (it will show the file as it is now).`);
    }
    throw new SandboxError('E_SANDBOX_NOT_FOUND', `No artifact has callId "${callId}": artifacts live only as long as the editor session and this id is not one of them. Open the file again with open_file and use the callId it returns.`);
  }

  /** Runs `use` with the entry's spool file kept on disk even if the entry is evicted meanwhile. */
  private async lease<T>(callId: string, use: (entry: Entry) => Promise<T>): Promise<T> {
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

  private async withReader<T>(entry: Entry, use: (reader: SpoolReader) => Promise<T>): Promise<T> {
    const reader = await SpoolReader.open(entry.spoolPath, entry.index, entry.info.encoding === 'utf8bom');
    try {
      return await use(reader);
    } finally {
      await reader.close();
    }
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
    this.fire({ type: reason, callId });
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
    if (this.disposed) throw new SandboxError('E_SANDBOX_UNSUPPORTED', 'The artifact store is shutting down; nothing can be opened now. Try again after the editor reloads.');
    if (!source.exists) throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${source.display}" does not exist. Check the path with find_files or list_directory; paths are relative to the workspace folder.`);
    await this.start();
    if (signal.aborted) throw cancelled();
    const opened = await openChecked(this.options.fs, source);
    try {
      return await this.spool(source, opened, signal, kind);
    } finally {
      await opened.release();
    }
  }

  private async spool(source: ResolvedPath, opened: OpenedFile, signal: AbortSignal, kind: ArtifactKind): Promise<ArtifactHandle> {
    const { fs } = this.options;
    const opening = opened.stat ?? await fs.stat(opened.address).catch(() => undefined);
    const size = opening?.size ?? 0;
    const links = opening?.nlink ?? 1;
    const budget = this.options.budgetBytes();
    if (size > budget) {
      throw new SandboxError('E_SANDBOX_TOO_LARGE', `"${source.display}" is ${formatBytes(size)}, more than the whole artifact disk budget (${formatBytes(budget)}), so it cannot be opened as an artifact. Search it with search_files instead, or ask the user to raise the artifact budget setting.`);
    }
    const n = ++this.counter;
    const callId = `art-${this.tag}-${n}`;
    const spoolPath = nodePath.join(this.runDir, `${n}.spool`);
    this.reserved += size;
    let entry: Entry;
    try {
      await this.makeRoom();
      const configured = this.options.encodingOf?.(source);
      const result = await spoolFile({ fs, address: opened.address, display: source.display, fileName: fileNameOf(source), nonStreamingMaxBytes: this.options.nonStreamingMaxBytes(), configured }, spoolPath, signal);
      const now = this.options.clock.now();
      entry = {
        info: {
          callId, path: source.display, bytes: result.sourceBytes, lines: result.index.lines, encoding: result.encoding, eol: result.index.eol,
          binary: result.binary, mtime: new Date(result.mtimeMs).toISOString(), ...(links > 1 ? { links } : {}),
          kind, source: { root: source.root, rel: source.rel, display: source.display }, openedAt: now, spoolBytes: result.index.bytes,
        },
        lastUsedAt: now, spoolPath, index: result.index, leases: 0, gone: false,
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
    this.fire({ type: 'opened', callId });
    return handleOf(entry);
  }

  /**
   * Registers a result artifact whose spool file is about to be written (see results/pager.ts). It
   * is readable at once: artifact_read waits for lines not written yet, everything else for the end.
   * `stop` ends the writing when the store is disposed.
   */
  async openResult(spec: { readonly label: string; readonly source: ModelPath; readonly stop: () => void }): Promise<ResultArtifactWriter> {
    if (this.disposed) throw new SandboxError('E_SANDBOX_UNSUPPORTED', 'The artifact store is shutting down; no result can be kept now. Try again after the editor reloads.');
    await this.start();
    const n = ++this.counter;
    const callId = `art-${this.tag}-${n}`;
    const spoolPath = nodePath.join(this.runDir, `${n}.spool`);
    const now = this.options.clock.now();
    const live = new LiveResult(spec.stop);
    const { source } = spec;
    const entry: Entry = {
      info: {
        callId, path: spec.label, bytes: 0, lines: 0, encoding: 'utf8', eol: 'none', binary: false, mtime: new Date(now).toISOString(),
        kind: 'result', source: { root: source.root, rel: source.rel, display: source.display }, openedAt: now, spoolBytes: 0,
      },
      lastUsedAt: now, spoolPath, index: { bytes: 0, newlines: 0, crlf: 0, blockCounts: Float64Array.of(0), lines: 0, eol: 'none' }, live, leases: 0, gone: false,
    };
    this.entries.set(callId, entry);
    this.fire({ type: 'opened', callId });
    const grow = (index: LineIndex): void => {
      entry.index = index;
      entry.info = { ...entry.info, bytes: index.bytes, lines: index.lines, eol: index.eol, spoolBytes: index.bytes };
    };
    return {
      callId,
      spoolPath,
      grow: (index) => { grow(index); live.wake(false); },
      end: async (index, heldBytes) => {
        grow(index);
        entry.info = { ...entry.info, heldBytes };
        entry.live = undefined;
        live.wake(true);
        if (this.entries.get(callId) === entry) await this.makeRoom(callId);
      },
      remove: async () => {
        live.wake(true);
        if (this.entries.get(callId) === entry) await this.evict(entry, 'closed');
        else await fsp.rm(spoolPath, { force: true });
      },
    };
  }

  /** Resolves once an artifact is completely written (at once for a file's snapshot). */
  async settled(callId: string): Promise<void> {
    await this.entry(callId).live?.finished();
  }

  /** A page of lines: the artifact_read contract. */
  async read(callId: string, request: { readonly offset?: number; readonly limit?: number } = {}, signal?: AbortSignal): Promise<ArtifactPage> {
    return this.lease(callId, async (entry) => {
      refuseBinary(entry, 'read');
      const offset = request.offset ?? 1;
      const limit = Math.min(request.limit ?? PAGE_MAX_LINES, PAGE_MAX_LINES);
      // A result still being written: wait until the page's lines are there, or the result ended short of them.
      while (entry.live && entry.index.lines < offset + limit - 1) {
        await entry.live.changed(signal);
        if (signal?.aborted) throw cancelled();
      }
      const total = entry.index.lines;
      if (offset > Math.max(total, 1)) {
        throw new SandboxError('E_SANDBOX_INVALID_INPUT', total === 0
          ? `offset ${offset} is past the end: "${entry.info.path}" is empty (0 lines). There is nothing to read.`
          : `offset ${offset} is past the end: "${entry.info.path}" has ${total} line${total === 1 ? '' : 's'}; lines are 1-based. Call artifact_read with an offset from 1 to ${total}.`);
      }
      return this.withReader(entry, (reader) => readPage(entry, reader, offset, offset + limit - 1, signal));
    });
  }

  /**
   * The artifact's whole text (UTF-8 decoded, BOM left out), for a host's read-only document.
   * Refuses a binary artifact and one over `maxBytes`.
   */
  async readText(callId: string, maxBytes: number = STRUCTURE_MAX_BYTES): Promise<string> {
    return this.lease(callId, async (entry) => {
      refuseBinary(entry, 'read');
      await entry.live?.finished();
      return readWhole(entry, maxBytes);
    });
  }

  /** Searches one artifact with ripgrep: the artifact_grep contract. */
  async grep(callId: string, options: GrepOptions, signal: AbortSignal): Promise<ArtifactGrepResult> {
    return this.lease(callId, async (entry) => {
      const rgPath = this.ripgrepPath();
      // ripgrep searches the whole spool: a result still being written is searched once complete.
      await entry.live?.finished(signal);
      if (signal.aborted) throw cancelled();
      const asked = options.maxResults ?? GREP_DEFAULT_MAX_RESULTS;
      // Security: every hit is held until the result is built; a maxResults of 1e12 on a file of 20
      // million matching lines held them all (3.5 GB).
      const maxResults = Math.min(asked, GREP_MAX_RESULTS);
      const context = entry.info.binary ? 0 : options.context ?? 0;
      const { hits, more } = await runRipgrep({
        rgPath, file: entry.spoolPath, pattern: options.pattern, literal: options.literal ?? false, ignoreCase: options.ignoreCase ?? false,
        maxLines: maxResults, raw: entry.info.binary, crlf: entry.index.crlf > 0,
        offsetShift: entry.info.encoding === 'utf8bom' ? 3 : 0, signal,
      });
      const lines = await this.withReader(entry, (reader) => entry.info.binary ? binaryHits(reader, hits) : textHits(reader, hits, context, signal));
      return {
        callId, path: entry.info.path, pattern: options.pattern, literal: options.literal ?? false, binary: entry.info.binary,
        matchCount: hits.length, lines: lines.lines, maxResults, ...(asked > maxResults ? { maxResultsAsked: asked } : {}), limited: more,
        contextOmitted: entry.info.binary && (options.context ?? 0) > 0,
      };
    });
  }

  /** Whether artifact_grep can run: an rg binary was given or can be found. */
  ripgrepAvailable(): boolean {
    this.ripgrep ??= this.options.ripgrepPath?.() ?? locateRipgrep()?.path;
    return this.ripgrep !== undefined;
  }

  private ripgrepPath(): string {
    this.ripgrep ??= this.options.ripgrepPath?.() ?? locateRipgrep()?.path;
    if (!this.ripgrep) throw new SandboxError('E_SANDBOX_UNSUPPORTED', 'ripgrep is not available in this installation, so artifact_grep cannot run. Page the artifact with artifact_read instead.');
    return this.ripgrep;
  }

  /** The top-level shape of a JSON artifact; throws a narrated error with line and column for invalid JSON. */
  async jsonShape(callId: string): Promise<JsonShape> {
    return this.lease(callId, async (entry) => {
      refuseBinary(entry, 'parse as JSON');
      const text = await readWhole(entry, STRUCTURE_MAX_BYTES);
      const selection = selectJson(text, [], { depth: 1, maxChildren: SHAPE_MAX_MEMBERS, maxNodes: SHAPE_MAX_MEMBERS + 1, maxString: 0 }, true);
      if (selection.error) throw invalidJson(entry, selection.error);
      if (!selection.found) throw invalidJson(entry, { error: 'ValueExpected', line: 1, column: 1 });
      const root = selection.node;
      return {
        type: root.type, ...(root.size !== undefined ? { size: root.size } : {}), startLine: root.startLine, endLine: root.endLine,
        members: (root.children ?? []).map(({ key, node }) => ({ key, type: node.type, ...(node.size !== undefined ? { size: node.size } : {}), line: node.startLine })),
        omitted: root.omitted ?? 0,
        ...(root.itemTypes ? { itemTypes: root.itemTypes } : {}),
      };
    });
  }

  /** The heading outline of a Markdown artifact. */
  async markdownOutline(callId: string): Promise<Outline> {
    return this.lease(callId, (entry) => outlineOf(entry));
  }

  /** A JSON Pointer or a Markdown heading path into an artifact: the artifact_query contract. */
  async query(callId: string, select: string, signal?: AbortSignal): Promise<ArtifactQueryResult> {
    return this.lease(callId, async (entry) => {
      refuseBinary(entry, 'query');
      const kind = queryKind(entry);
      const { path } = entry.info;
      if (kind === 'json') {
        const pointer = parsePointer(select);
        const text = await readWhole(entry, STRUCTURE_MAX_BYTES);
        const selection = selectJson(text, pointer, { depth: QUERY_DEPTH, maxChildren: QUERY_MAX_CHILDREN, maxNodes: QUERY_MAX_NODES, maxString: QUERY_MAX_STRING });
        if (!selection.found) throw selection.error ? invalidJson(entry, selection.error) : missError(select, selection.miss);
        const rendered = renderJson(selection.node, PAGE_MAX_BYTES);
        return { kind, callId, path, pointer: select, node: selection.node, text: rendered.text, truncated: selection.truncated || rendered.capped };
      }
      const { headings, stoppedAtLine } = await outlineOf(entry);
      const heading = findSection(headings, select);
      if (!heading) {
        const stopped = stoppedAtLine === undefined ? '' : ` (the outline stops at line ${stoppedAtLine}, after its first ${headings.length} headings: find later ones with artifact_grep "^#")`;
        if (headings.length === 0) throw new SandboxError('E_SANDBOX_NOT_FOUND', `"${path}" has no headings, so heading path ${JSON.stringify(select)} selects nothing. Page it with artifact_read or search it with artifact_grep.`);
        const near = nearHeadings(headings, select, 8).map((p) => JSON.stringify(p));
        throw new SandboxError('E_SANDBOX_NOT_FOUND', `No heading matches the path ${JSON.stringify(select)} in "${path}"${stopped}. Headings near it: ${near.join(', ')}. Call artifact_query with one of those (segments are heading titles separated by "/").`);
      }
      const page = await this.withReader(entry, (reader) => readPage(entry, reader, heading.startLine, Math.min(heading.endLine, heading.startLine + PAGE_MAX_LINES - 1), signal, heading.endLine));
      return { kind, callId, path, heading, page };
    });
  }

  /** Removes every artifact and this run's spool folder. */
  async dispose(): Promise<void> {
    this.disposed = true;
    for (const entry of [...this.entries.values()]) await this.evict(entry, 'closed');
    this.listeners.clear();
    if (this.started) {
      await this.started.catch(() => undefined);
      await fsp.rm(this.runDir, { recursive: true, force: true });
    }
  }
}

function handleOf(entry: Entry): ArtifactHandle {
  const { callId, path, bytes, lines, encoding, eol, binary, mtime, links } = entry.info;
  return { callId, path, bytes, lines, encoding, eol, binary, mtime, ...(links ? { links } : {}) };
}

function refuseBinary(entry: Entry, verb: string): void {
  if (!entry.info.binary) return;
  throw new SandboxError('E_SANDBOX_BINARY', `"${entry.info.path}" is binary (${formatBytes(entry.info.bytes)}), so there are no text lines to ${verb}. Search its bytes with artifact_grep and literal: true (matches show byte offsets); to read text, open a text file instead.`);
}

async function outlineOf(entry: Entry): Promise<Outline> {
  refuseBinary(entry, 'parse as Markdown');
  entry.outline ??= parseOutline(await readWhole(entry, MARKDOWN_MAX_BYTES), entry.index.lines);
  return entry.outline;
}

function queryKind(entry: Entry): 'json' | 'markdown' {
  if (entry.info.kind === 'json' || entry.info.kind === 'markdown') return entry.info.kind;
  if (entry.info.kind === 'result') throw new SandboxError('E_SANDBOX_UNSUPPORTED', `"${entry.info.callId}" holds the result of ${entry.info.path}, which is text lines, not JSON or Markdown. Page it with artifact_read or search it with artifact_grep.`);
  if (/\.(json|jsonc|code-workspace)$/i.test(entry.info.path)) return 'json';
  if (/\.(md|markdown|mdx|mdown|mkd)$/i.test(entry.info.path)) return 'markdown';
  throw new SandboxError('E_SANDBOX_UNSUPPORTED', `artifact_query selects inside JSON or Markdown, and "${entry.info.path}" (${entry.info.callId}) was opened with open_file as plain text. Use artifact_grep or artifact_read on it, or reopen it with open_json_file or open_markdown_file.`);
}

function invalidJson(entry: Entry, error: { error: string; line: number; column: number }): SandboxError {
  return new SandboxError('E_SANDBOX_INVALID_INPUT', `"${entry.info.path}" is not valid JSON (comments and trailing commas are accepted): ${error.error} at line ${error.line}, column ${error.column}. It stays open as artifact ${entry.info.callId}: read around that line with artifact_read (offset ${Math.max(1, error.line - 5)}).`);
}

async function readWhole(entry: Entry, maxBytes: number): Promise<string> {
  if (entry.index.bytes > maxBytes) {
    throw new SandboxError('E_SANDBOX_TOO_LARGE', `"${entry.info.path}" is ${formatBytes(entry.index.bytes)}, more than the ${formatBytes(maxBytes)} that can be parsed or shown as a whole. It is open as artifact ${entry.info.callId}: find what you need with artifact_grep and page it with artifact_read.`);
  }
  const bytes = await fsp.readFile(entry.spoolPath);
  return new TextDecoder('utf-8').decode(bytes);
}

function pageLine(line: SpoolLine): PageLine {
  return { n: line.n, text: line.text, ...(line.cut ? { cutBytes: line.end - line.start } : {}) };
}

const lineBytes = (line: PageLine): number => Buffer.byteLength(line.text) + 1;

/** Lines `from`..`to` capped at PAGE_MAX_BYTES; `last` is where the text being paged ends (the file, or a section). */
async function readPage(entry: Entry, reader: SpoolReader, from: number, to: number, signal: AbortSignal | undefined, last = reader.index.lines): Promise<ArtifactPage> {
  const lines: PageLine[] = [];
  let used = 0;
  let truncated = false;
  for await (const line of reader.lines(from, to)) {
    if (signal?.aborted) throw cancelled();
    const page = pageLine(line);
    if (lines.length > 0 && used + lineBytes(page) > PAGE_MAX_BYTES) { truncated = true; break; }
    used += lineBytes(page);
    lines.push(page);
  }
  const endLine = from + lines.length - 1;
  // A result still being written has more lines coming after the last one written so far.
  const spooling = entry.live !== undefined;
  return {
    callId: entry.info.callId, path: entry.info.path, totalLines: reader.index.lines, startLine: from, endLine, lines, truncated,
    ...(endLine < last || spooling ? { nextOffset: endLine + 1 } : {}), ...(spooling ? { spooling: true as const } : {}),
  };
}

/** Matching lines with their context, grouped and read in file order (the tool pages what is over a page). */
async function textHits(reader: SpoolReader, hits: readonly { line: number; offset: number }[], context: number, signal: AbortSignal): Promise<{ lines: GrepLine[] }> {
  const byLine = new Map(hits.map((h) => [h.line, h.offset]));
  const ranges: Array<[number, number]> = [];
  for (const { line } of hits) {
    const from = Math.max(1, line - context);
    const to = line + context;
    const last = ranges[ranges.length - 1];
    if (last && from <= last[1] + 1) last[1] = Math.max(last[1], to); else ranges.push([from, to]);
  }
  const lines: GrepLine[] = [];
  for (const [from, to] of ranges) {
    const first = byLine.get(from);
    const hint = first !== undefined ? await reader.lineStartNear(from, first) : undefined;
    for await (const line of reader.lines(from, to, hint)) {
      if (signal.aborted) throw cancelled();
      const offset = byLine.get(line.n);
      let page = pageLine(line);
      // A match past the cut of a long line: show the part of the line around it instead.
      if (offset !== undefined && line.cut && offset - line.start > Buffer.byteLength(line.text)) {
        page = { n: line.n, text: '…' + await reader.around(line.start, line.end, offset), cutBytes: line.end - line.start };
      }
      lines.push({ ...page, match: offset !== undefined });
    }
  }
  return { lines };
}

const BINARY_EXCERPT_BYTES = 96;

/** Binary matches as escaped byte excerpts starting a little before each match. */
async function binaryHits(reader: SpoolReader, hits: readonly { line: number; offset: number }[]): Promise<{ lines: GrepLine[] }> {
  const lines: GrepLine[] = [];
  for (const { line, offset } of hits) {
    const from = Math.max(0, offset - 16);
    const bytes = await reader.bytes(from, BINARY_EXCERPT_BYTES);
    let text = '';
    for (const b of bytes) text += b >= 0x20 && b < 0x7f && b !== 0x5c ? String.fromCharCode(b) : b === 0x5c ? '\\\\' : `\\x${b.toString(16).padStart(2, '0')}`;
    lines.push({ n: line, text: (from > 0 ? '…' : '') + text + (from + bytes.length < reader.index.bytes ? '…' : ''), match: true, byteOffset: offset });
  }
  return { lines };
}
