import { promises as fsp } from 'node:fs';
import { Worker } from 'node:worker_threads';
import type { PackedFolder } from '../ports.ts';
import { workerFile } from '../lazy-module.ts';
import { folderPrefix, packDirent, type FolderReply, type FolderRequest } from './packed-folder.ts';

/** Entries stat'ed between two turns of the event loop when read here: about a millisecond. */
const LSTAT_SLICE = 512;
/** Entries read here before the worker is started: a small listing never pays for a thread. */
const ENTRIES_BEFORE_WORKER = 2000;

/** An idle worker is stopped after this long, and its memory freed. */
const WORKER_IDLE_MS = 5000;
/** The worker's heap: what it holds at once is one folder's entries (a worker out of memory fails, and its reads are done here). */
const WORKER_YOUNG_MB = 2;
const WORKER_OLD_MB = 64;

export interface FolderReaderOptions {
  /** The worker's code, where it is not the usual place (lazy-module.ts's workerFile): the bench runs the sources with the built worker. */
  readonly workerFile?: string | URL;
  /** Entries read on the calling thread before the worker starts (tests set 0). */
  readonly entriesBeforeWorker?: number;
  /** Told when the worker fails (its reads, and all after, are then done on the calling thread). */
  readonly warn?: (message: string) => void;
}

interface Pending {
  readonly id: number;
  readonly folder: string;
  readonly resolve: (folder: PackedFolder) => void;
  readonly reject: (e: unknown) => void;
}

/**
 * Reads folders with the lstat size of each entry that is not a folder, for listings. A listing of
 * a big tree spends most of its time in those syscalls (an lstat each), so once a reader has read a
 * few thousand entries it starts a worker thread (folder-worker.ts) that does them on another core
 * while the listing judges, sorts and writes what was read; the worker stops when idle. Reading
 * here is the fallback at every step: before the worker is up, and if it ever fails.
 */
export class FolderReader {
  private readonly options: FolderReaderOptions;
  private readInline = 0;
  private worker: Worker | undefined;
  private online = false;
  private failed = false;
  private nextId = 0;
  // Answered in the order asked (the worker reads one folder at a time), and never more than a
  // listing reads ahead: an array, not a Map (a Map's table, rebuilt as entries come and go, outlives
  // young-generation GCs).
  private pending: Pending[] = [];
  private idle: NodeJS.Timeout | undefined;

  constructor(options: FolderReaderOptions = {}) {
    this.options = options;
  }

  /** True while reads go to the worker thread. */
  get onWorker(): boolean {
    return this.worker !== undefined && this.online;
  }

  /** Stops the worker now (a read it had not answered is done here); a later big listing starts another. */
  async stopWorker(): Promise<void> {
    await this.worker?.terminate();
  }

  read(folder: string): Promise<PackedFolder> {
    if (this.onWorker) return this.viaWorker(folder);
    return this.inline(folder);
  }

  private async inline(folder: string): Promise<PackedFolder> {
    const dirents = await fsp.readdir(folder, { withFileTypes: true });
    this.readInline += dirents.length;
    if (this.readInline >= (this.options.entriesBeforeWorker ?? ENTRIES_BEFORE_WORKER)) this.startWorker();
    const prefix = folderPrefix(folder);
    const packed = new Array<string>(dirents.length);
    // A synchronous lstat of an inode just read is a syscall of a microsecond or two; a promise each
    // costs ten times that. In slices, so a folder of 100,000 files never holds the event loop long.
    for (let i = 0; i < dirents.length; i++) {
      if (i > 0 && i % LSTAT_SLICE === 0)
        await new Promise<void>((resolve) => {
          setImmediate(resolve);
        });
      packed[i] = packDirent(prefix, dirents[i]!);
    }
    return { text: packed.join('\0') };
  }

  private startWorker(): void {
    if (this.worker !== undefined || this.failed) return;
    // Its garbage is short-lived (an entry's name and stat): a small young generation keeps its memory small.
    const worker = new Worker(this.options.workerFile ?? workerFile('folder-worker'), {
      resourceLimits: { maxYoungGenerationSizeMb: WORKER_YOUNG_MB, maxOldGenerationSizeMb: WORKER_OLD_MB },
    });
    this.worker = worker;
    worker.unref();
    worker.on('online', () => {
      if (this.worker !== worker) return;
      this.online = true;
      // Its port is only set up now: an unref before does not hold (a CLI that is done would wait on it).
      this.rest();
    });
    worker.on('message', (reply: FolderReply) => this.answer(reply));
    worker.on('error', (e) => {
      this.options.warn?.(
        `The folder reader's worker thread failed (${e.message}); listings read their folders on the main thread from now on.`,
      );
      this.lose(worker, true);
    });
    worker.on('exit', () => this.lose(worker, false));
  }

  private viaWorker(folder: string): Promise<PackedFolder> {
    const worker = this.worker!;
    clearTimeout(this.idle);
    // While it has work, the worker keeps the process alive (a CLI waiting on a listing must not exit).
    if (this.pending.length === 0) worker.ref();
    const id = this.nextId++;
    return new Promise<PackedFolder>((resolve, reject) => {
      this.pending.push({ id, folder, resolve, reject });
      worker.postMessage({ id, folder } satisfies FolderRequest);
    });
  }

  private answer(reply: FolderReply): void {
    const at = this.pending.findIndex((p) => p.id === reply.id);
    if (at === -1) return;
    const request = this.pending[at]!;
    this.pending.splice(at, 1);
    if ('error' in reply)
      request.reject(
        Object.assign(new Error(reply.error.message), reply.error.code !== undefined ? { code: reply.error.code } : {}),
      );
    else request.resolve(reply.folder);
    if (this.pending.length === 0) this.rest();
  }

  /** Idle: the worker no longer holds the process, and stops if no work comes for a while. */
  private rest(): void {
    const worker = this.worker;
    if (worker === undefined) return;
    worker.unref();
    this.idle = setTimeout(() => {
      void worker.terminate();
    }, WORKER_IDLE_MS);
    this.idle.unref();
  }

  /** The worker stopped (idle, or failed): what it still had to read is read here. */
  private lose(worker: Worker, failed: boolean): void {
    if (this.worker !== worker) return;
    this.worker = undefined;
    this.online = false;
    this.readInline = 0;
    if (failed) this.failed = true;
    clearTimeout(this.idle);
    const unanswered = this.pending;
    this.pending = [];
    for (const { folder, resolve, reject } of unanswered) this.inline(folder).then(resolve, reject);
  }
}
