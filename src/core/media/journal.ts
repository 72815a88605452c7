import { randomBytes } from 'node:crypto';
import * as z from 'zod';
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock } from '../ports.ts';
import { processAlive } from '../run-folders.ts';
import type { FileMeta } from './file-meta.ts';
import { hashKept } from './hash.ts';
import { privateStateDir } from '../state-dir.ts';

/*
 * The on-disk journal of change sets, so that a set is all or nothing even when the process dies
 * midway (kill -9, a crash, a window reloaded). Before its first write a set writes, in the
 * workspace's state folder (the host's, never beside the user's files), what every path held and
 * will hold, with the bytes it replaces; the folder appears whole (made under a temporary name,
 * then renamed), named after the process applying it. A set that ends removes it. The next start
 * of any host on the workspace finds those of dead processes (recover-sets.ts) and finishes or
 * rolls them back. Saves of sets and undos of sets both go through it.
 */

/**
 * What one path holds before or after a set: a file (its SHA-256, mode and owner) or nothing; `kept`:
 * where its bytes are in the journal's one bytes file (always for `before`; for `after` where the set asks).
 */
const journalSide = z.strictObject({
  exists: z.boolean(),
  hash: z
    .string()
    .regex(/^[0-9a-f]{64}$/)
    .optional(),
  meta: z
    .strictObject({
      mode: z.number().int().optional(),
      uid: z.number().int().optional(),
      gid: z.number().int().optional(),
    })
    .optional(),
  kept: z.strictObject({ offset: z.number().int().min(0), length: z.number().int().min(0) }).optional(),
});

/** One path of a set: the workspace folder's backend address and the path below it; `kind`, what the set does there (bytes written, or the file removed). */
const journalStep = z.strictObject({
  root: z.string(),
  /** The file's real local path, where the folder has one: found again when the folder is open under another address (an MCP client's root inside --root, a folder opened through a link). */
  local: z.string().optional(),
  rel: z.string().min(1),
  display: z.string(),
  kind: z.enum(['write', 'delete']),
  before: journalSide,
  after: journalSide,
});

/** `save`: save_media's set, or a command's change set; `undo`: undo_save of a set. */
const journalEntry = z.strictObject({
  version: z.literal(1),
  kind: z.enum(['save', 'undo']),
  at: z.number(),
  steps: z.array(journalStep).min(1),
});

export type JournalSide = z.infer<typeof journalSide>;
export type JournalStep = z.infer<typeof journalStep>;
export type JournalEntry = z.infer<typeof journalEntry>;
export type JournalKind = JournalEntry['kind'];

/** One path of a set about to be applied, with its bytes. */
export interface PlannedStep {
  readonly path: ModelPath;
  readonly kind: 'write' | 'delete';
  readonly before: { readonly bytes: Uint8Array; readonly meta: FileMeta | undefined } | undefined;
  readonly after: Uint8Array | undefined;
  /** The mode and owner `after` gives the file, where the set knows them (an undo's). */
  readonly afterMeta?: FileMeta | undefined;
  /** Keep `after`'s bytes too (an undo, so that an interrupted one can be kept as the save it took back). */
  readonly keepAfter?: boolean;
}

export interface SetJournalOptions {
  /** The workspace's state folder (created 0700 when the first set is journaled; never for a look). */
  readonly dir: () => Promise<string>;
  readonly clock: Clock;
}

const ENTRY = 'journal.json';
/** Every kept file's bytes, one after another: one file to flush, however many files the set has. */
const BYTES = 'bytes';
const OWNED = /^(\d+-[0-9a-f]{12})@(\d+)$/;
const UNFINISHED = /^\.(\d+-[0-9a-f]{12})@(\d+)\.tmp$/;

/** A set's journal on disk: read its kept bytes; `close` when the set ended (applied, or rolled back). */
export class JournalRecord {
  readonly folder: string;
  readonly entry: JournalEntry;
  private readonly ended: () => void;

  constructor(folder: string, entry: JournalEntry, ended: () => void = () => {}) {
    this.folder = folder;
    this.entry = entry;
    this.ended = ended;
  }

  /** The bytes `steps[index]` held before the set (undefined: no file), or after it when kept. */
  async bytes(index: number, side: 'before' | 'after'): Promise<Uint8Array | undefined> {
    const kept = this.entry.steps[index]?.[side];
    if (kept?.exists !== true || kept.kept === undefined) return undefined;
    const { offset, length } = kept.kept;
    const handle = await fsp.open(nodePath.join(this.folder, BYTES), 'r');
    try {
      const bytes = Buffer.alloc(length);
      const { bytesRead } = await handle.read(bytes, 0, length, offset);
      if (bytesRead !== length)
        throw new Error(
          `the journal's bytes end at ${offset + bytesRead}, before the ${length} bytes kept at ${offset}`,
        );
      return bytes;
    } finally {
      await handle.close();
    }
  }

  /** The set ended: its journal is removed (best effort: one left behind is found complete at the next start, and kept as such). */
  async close(): Promise<void> {
    await fsp.rm(this.folder, { recursive: true, force: true }).catch(() => undefined);
    this.ended();
  }
}

/** The journal of one workspace's change sets. */
export class SetJournal {
  private readonly options: SetJournalOptions;
  private folder: Promise<string> | undefined;
  /** The journals of sets this process is applying (or failed to roll back): never recovered while it lives. */
  private readonly own = new Set<string>();

  constructor(options: SetJournalOptions) {
    this.options = options;
  }

  /**
   * Writes the set's journal, complete and flushed, before the set's first write; resolves to the
   * record to close when the set ends. Security: it holds copies of workspace files: 0700 and 0600.
   */
  async begin(kind: JournalKind, planned: readonly PlannedStep[]): Promise<JournalRecord> {
    const sets = await this.sets();
    const id = `${this.options.clock.now()}-${randomBytes(6).toString('hex')}`;
    const temp = nodePath.join(sets, `.${id}@${process.pid}.tmp`);
    await fsp.mkdir(temp, { mode: 0o700 });
    try {
      const steps: JournalStep[] = [];
      const bytes = await fsp.open(nodePath.join(temp, BYTES), 'wx', 0o600);
      try {
        let offset = 0;
        const keep = async (data: Uint8Array): Promise<{ offset: number; length: number }> => {
          const at = offset;
          for (let done = 0; done < data.byteLength;)
            done += (await bytes.write(data, done, data.byteLength - done, at + done)).bytesWritten;
          offset += data.byteLength;
          return { offset: at, length: data.byteLength };
        };
        for (const step of planned) {
          steps.push({
            root: step.path.root.address,
            ...(await realLocal(step.path)),
            rel: step.path.rel,
            display: step.path.display,
            kind: step.kind,
            before: step.before
              ? {
                  exists: true,
                  hash: hashKept(step.before.bytes),
                  ...(step.before.meta ? { meta: step.before.meta } : {}),
                  kept: await keep(step.before.bytes),
                }
              : { exists: false },
            after: step.after
              ? {
                  exists: true,
                  hash: hashKept(step.after),
                  ...(step.afterMeta ? { meta: step.afterMeta } : {}),
                  ...(step.keepAfter ? { kept: await keep(step.after) } : {}),
                }
              : { exists: false },
          });
        }
        await bytes.sync();
      } finally {
        await bytes.close();
      }
      const entry: JournalEntry = { version: 1, kind, at: this.options.clock.now(), steps };
      await fsp.writeFile(nodePath.join(temp, ENTRY), JSON.stringify(entry), { mode: 0o600, flush: true });
      const folder = nodePath.join(sets, `${id}@${process.pid}`);
      await fsp.rename(temp, folder);
      this.own.add(folder);
      await syncFolder(sets);
      return new JournalRecord(folder, entry, () => this.own.delete(folder));
    } catch (e) {
      await fsp.rm(temp, { recursive: true, force: true });
      throw e;
    }
  }

  /**
   * The journals of sets whose process died before they ended, each claimed for this process (so
   * two hosts starting at once never both recover one). Journals left half-written (the process
   * died before the set's first write) are removed. Unreadable journals are reported, not touched.
   */
  async interrupted(): Promise<{ readonly records: JournalRecord[]; readonly unreadable: string[] }> {
    const sets = await this.existingSets();
    const records: JournalRecord[] = [];
    const unreadable: string[] = [];
    if (sets === undefined) return { records, unreadable };
    for (const name of await fsp.readdir(sets)) {
      const unfinished = UNFINISHED.exec(name);
      if (unfinished && !live(Number(unfinished[2]))) {
        await fsp.rm(nodePath.join(sets, name), { recursive: true, force: true });
        continue;
      }
      const owned = OWNED.exec(name);
      if (!owned || live(Number(owned[2])) || this.own.has(nodePath.join(sets, name))) continue;
      const folder = nodePath.join(sets, `${owned[1]}@${process.pid}`);
      try {
        await fsp.rename(nodePath.join(sets, name), folder);
      } catch (e) {
        if (errnoCode(e) === 'ENOENT') continue; // another host claimed it first
        throw e;
      }
      try {
        records.push(new JournalRecord(folder, parseEntry(await fsp.readFile(nodePath.join(folder, ENTRY), 'utf8'))));
      } catch (e) {
        unreadable.push(`${folder} (${e instanceof Error ? e.message : String(e)})`);
      }
    }
    return { records, unreadable };
  }

  /** The folder of the journals, made when missing, and checked private. */
  private async sets(): Promise<string> {
    // A folder refused now (a link in its place) is looked at again by the next set, once the person has fixed it.
    this.folder ??= this.options
      .dir()
      .then(async (dir) => {
        await privateStateDir(dir);
        return privateStateDir(nodePath.join(dir, 'sets'));
      })
      .catch((e: unknown) => {
        this.folder = undefined;
        throw e;
      });
    return this.folder;
  }

  /** The folder of the journals, checked private, when one was ever made (a look never makes it). */
  private async existingSets(): Promise<string | undefined> {
    if (this.folder) return this.folder;
    const sets = nodePath.join(await this.options.dir(), 'sets');
    return (await fsp.lstat(sets).then(
      () => true,
      () => false,
    ))
      ? this.sets()
      : undefined;
  }
}

/** `{ local }`: a path's real local path, where its folder has a local path. */
async function realLocal(path: ModelPath): Promise<{ readonly local?: string }> {
  const folder = path.root.localPath;
  if (folder === undefined) return {};
  return { local: nodePath.join(await fsp.realpath(folder).catch(() => folder), ...path.rel.split('/')) };
}

/** Whether the process that owns a journal may still be applying it (this process's own id: a process before it, whose id was reused). */
function live(pid: number): boolean {
  return pid !== process.pid && processAlive(pid);
}

/** Flushes a folder's entries (the journal's rename) where the platform can. */
async function syncFolder(path: string): Promise<void> {
  if (process.platform === 'win32') return;
  const handle = await fsp.open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

function parseEntry(text: string): JournalEntry {
  const parsed = journalEntry.safeParse(JSON.parse(text));
  if (!parsed.success)
    throw new Error(
      `not a journal of this version: ${parsed.error.issues.map((i) => `${i.path.join('.')}: ${i.message}`).join('; ')}`,
    );
  return parsed.data;
}
