import { promises as fsp, constants as fsConstants } from 'node:fs';
import { SandboxError, cancelled, fromFsError } from '../errors.ts';
import type { WorkspaceFs } from '../ports.ts';
import {
  BINARY_SAMPLE_BYTES,
  BOM_SNIFF_BYTES,
  LEGACY_ENCODING,
  LEGACY_FALLBACK,
  bomEncoding,
  detectBinary,
  imposed,
  isUtf16,
  streamDecoder,
  type FileEncoding,
  type StreamDecoder,
  type TextEncoding,
} from '../text/encoding.ts';
import { formatBytes } from '../text/format.ts';
import { Utf8Validator } from '../text/utf8.ts';
import { LineIndexBuilder, type LineIndex } from './line-index.ts';
import { SCRATCH_BYTES, createNewlineCounter } from './newlines.ts';

/** What spooling produced: the spool file's index and what the source turned out to be. */
export interface SpoolResult {
  readonly index: LineIndex;
  readonly encoding: FileEncoding;
  readonly binary: boolean;
  /** Bytes read from the source (differs from `index.bytes` for text spooled transcoded to UTF-8). */
  readonly sourceBytes: number;
  readonly mtimeMs: number;
  /** How the bytes were captured, for logs and benchmarks. */
  readonly method: 'clone' | 'stream' | 'read';
}

export interface SpoolSource {
  readonly fs: WorkspaceFs;
  readonly address: string;
  /** As the model sees it, for messages. */
  readonly display: string;
  /** The file name (its extension feeds binary detection). */
  readonly fileName: string;
  /** Cap for backends that cannot stream. */
  readonly nonStreamingMaxBytes: number;
  /** The encoding the user's files.encoding gives the file, if any. */
  readonly configured?: TextEncoding | undefined;
}

function notAFile(display: string, type: string): SandboxError {
  return type === 'directory'
    ? new SandboxError(
        'E_SANDBOX_INVALID_INPUT',
        `"${display}" is a directory, not a file.`,
        `Use list_directory to see what it holds.`,
      )
    : new SandboxError(
        'E_SANDBOX_INVALID_INPUT',
        `"${display}" is a ${type === 'other' ? 'special file (device, socket or pipe)' : type}, not a regular file, so it cannot be opened as an artifact.`,
        `Open a regular file instead.`,
      );
}

/**
 * Captures the source's bytes into `spoolPath` and indexes them. Local files are copied with
 * copy-on-write cloning where the filesystem has it (else the kernel's copy_file_range) while the
 * source is indexed alongside; other backends are streamed, or read whole under a size cap.
 */
export async function spoolFile(source: SpoolSource, spoolPath: string, signal: AbortSignal): Promise<SpoolResult> {
  const { fs, address, display } = source;
  const stat = await fs.stat(address).catch((e: unknown) => {
    throw fromFsError(e, display, 'open');
  });
  if (stat.type !== 'file') throw notAFile(display, stat.type);
  if (signal.aborted) throw cancelled();
  const local = fs.capabilities.localPaths ? fs.localPath(address) : undefined;
  if (local !== undefined) return spoolLocal(source, local, spoolPath, signal);
  if (fs.capabilities.streaming) {
    const result = await transcodeIfNeeded(
      source,
      spoolPath,
      await spoolChunks(source, fs.readStream(address, signal), spoolPath, signal),
      signal,
    );
    return { ...result, mtimeMs: stat.mtimeMs, method: 'stream' };
  }
  const cap = source.nonStreamingMaxBytes;
  const tooLarge = (size: number) =>
    new SandboxError(
      'E_SANDBOX_TOO_LARGE',
      `"${display}" is ${formatBytes(size)}, more than the ${formatBytes(cap)} this workspace's filesystem can open without streaming. Search it with search_files instead, or ask the user to raise the non-streaming size limit setting.`,
      '',
    );
  if (stat.size > cap) throw tooLarge(stat.size);
  const bytes = await fs.readFile(address, signal).catch((e: unknown) => {
    throw signal.aborted ? cancelled() : fromFsError(e, display, 'read');
  });
  if (bytes.length > cap) throw tooLarge(bytes.length);
  const result = await transcodeIfNeeded(
    source,
    spoolPath,
    await spoolChunks(source, [bytes], spoolPath, signal),
    signal,
  );
  return { ...result, mtimeMs: stat.mtimeMs, method: 'read' };
}

interface ChunkResult extends Omit<SpoolResult, 'mtimeMs' | 'method'> {
  /** The bytes were spooled as they are and are valid UTF-8 (or binary, or transcoded). */
  readonly utf8: boolean;
  /** Some bytes had no character in the encoding they were transcoded from. */
  readonly lossy: boolean;
}

/** Collects the first and last BINARY_SAMPLE_BYTES of a byte sequence for the binary detector. */
class Sampler {
  private head: Uint8Array = new Uint8Array(0);
  private tail: Uint8Array = new Uint8Array(0);
  add(bytes: Uint8Array): void {
    if (this.head.length < BINARY_SAMPLE_BYTES) {
      const take = bytes.subarray(0, BINARY_SAMPLE_BYTES - this.head.length);
      this.head = Buffer.concat([this.head, take]);
      bytes = bytes.subarray(take.length);
    }
    if (bytes.length === 0) return;
    this.tail =
      bytes.length >= BINARY_SAMPLE_BYTES
        ? bytes.slice(bytes.length - BINARY_SAMPLE_BYTES)
        : Buffer.concat([this.tail, bytes]).subarray(-BINARY_SAMPLE_BYTES);
  }
  isBinary(fileName: string): boolean {
    return detectBinary(fileName, this.head, this.tail);
  }
}

/**
 * One pass over chunks: sniff the BOM, write the spool (UTF-16, or every byte from `from`, transcoded
 * to UTF-8), index it.
 */
async function spoolChunks(
  source: SpoolSource,
  chunks: AsyncIterable<Uint8Array> | Iterable<Uint8Array>,
  spoolPath: string,
  signal: AbortSignal,
  from?: TextEncoding,
): Promise<ChunkResult> {
  const out = await fsp.open(spoolPath, 'wx');
  try {
    const builder = new LineIndexBuilder(createNewlineCounter());
    const validator = new Utf8Validator();
    const sampler = new Sampler();
    let encoding: TextEncoding | undefined = from;
    let decoder: StreamDecoder | undefined = from === undefined ? undefined : streamDecoder(from);
    let pending: Uint8Array = new Uint8Array(0);
    let sourceBytes = 0;
    const write = async (bytes: Uint8Array): Promise<void> => {
      if (bytes.length === 0) return;
      validator.feed(bytes, builder.bytes);
      sampler.add(bytes);
      builder.feed(bytes);
      await out.write(bytes);
    };
    const accept = async (bytes: Uint8Array, final: boolean): Promise<void> => {
      if (encoding === undefined) {
        pending = pending.length ? Buffer.concat([pending, bytes]) : bytes;
        if (pending.length < BOM_SNIFF_BYTES && !final) return;
        encoding = bomEncoding(pending) ?? utf16Imposed(source) ?? 'utf8';
        if (isUtf16(encoding)) decoder = streamDecoder(encoding);
        bytes = pending;
        pending = new Uint8Array(0);
      }
      if (decoder) {
        await write(Buffer.from(decoder.write(bytes) + (final ? decoder.end() : ''), 'utf8'));
      } else {
        await write(bytes);
      }
    };
    try {
      for await (const chunk of chunks) {
        if (signal.aborted) throw cancelled();
        sourceBytes += chunk.length;
        await accept(chunk, false);
      }
    } catch (e) {
      throw signal.aborted ? cancelled() : fromFsError(e, source.display, 'copy');
    }
    await accept(new Uint8Array(0), true);
    const index = builder.finish();
    const binary = !decoder && sampler.isBinary(source.fileName);
    const utf8 = decoder !== undefined || binary || validator.finish() === undefined;
    return {
      index,
      encoding: binary ? 'binary' : (encoding ?? 'utf8'),
      binary,
      sourceBytes,
      utf8,
      lossy: decoder?.lossy ?? false,
    };
  } finally {
    await out.close();
  }
}

async function* readChunks(handle: fsp.FileHandle): AsyncIterable<Uint8Array> {
  for (let position = 0; ;) {
    const buffer = Buffer.allocUnsafe(SCRATCH_BYTES);
    const { bytesRead } = await handle.read(buffer, 0, buffer.length, position);
    if (bytesRead === 0) return;
    position += bytesRead;
    yield buffer.subarray(0, bytesRead);
  }
}

/** Indexes a local file by reading it straight into the counter's scratch area (no copies in JS). */
async function indexLocal(handle: fsp.FileHandle, fileName: string, signal: AbortSignal): Promise<ChunkResult> {
  const builder = new LineIndexBuilder(createNewlineCounter());
  const validator = new Utf8Validator();
  const scratch = builder.scratch;
  let head: Uint8Array = new Uint8Array(0);
  for (let position = 0; ;) {
    if (signal.aborted) throw cancelled();
    const { bytesRead } = await handle.read(scratch, 0, scratch.length, position);
    if (bytesRead === 0) break;
    if (position === 0) head = scratch.slice(0, Math.min(bytesRead, BINARY_SAMPLE_BYTES));
    validator.feed(scratch.subarray(0, bytesRead), position);
    builder.countScratch(0, bytesRead);
    position += bytesRead;
  }
  const index = builder.finish();
  const tailStart = Math.max(head.length, index.bytes - BINARY_SAMPLE_BYTES);
  const tail = Buffer.alloc(index.bytes - tailStart);
  if (tail.length) await handle.read(tail, 0, tail.length, tailStart);
  const binary = detectBinary(fileName, head, tail);
  const utf8 = binary || validator.finish() === undefined;
  return {
    index,
    encoding: binary ? 'binary' : (bomEncoding(head) ?? 'utf8'),
    binary,
    sourceBytes: index.bytes,
    utf8,
    lossy: false,
  };
}

async function spoolLocal(
  source: SpoolSource,
  localPath: string,
  spoolPath: string,
  signal: AbortSignal,
): Promise<SpoolResult> {
  const { display, fileName } = source;
  // O_NONBLOCK: if the path was swapped for a FIFO after the stat, open returns instead of hanging.
  const handle = await fsp.open(localPath, fsConstants.O_RDONLY | fsConstants.O_NONBLOCK).catch((e: unknown) => {
    throw fromFsError(e, display, 'open');
  });
  try {
    const before = await handle.stat();
    if (!before.isFile()) throw notAFile(display, before.isDirectory() ? 'directory' : 'other');
    const head = Buffer.alloc(BOM_SNIFF_BYTES);
    const { bytesRead } = await handle.read(head, 0, head.length, 0);
    const bom = bomEncoding(head.subarray(0, bytesRead)) ?? utf16Imposed(source);
    if (bom !== undefined && isUtf16(bom)) {
      const result = await spoolChunks(source, readChunks(handle), spoolPath, signal);
      return { ...result, mtimeMs: before.mtimeMs, method: 'stream' };
    }
    // The clone and the index run side by side; if the source changed meanwhile, the spool is re-indexed below.
    const copying = fsp.copyFile(localPath, spoolPath, fsConstants.COPYFILE_FICLONE | fsConstants.COPYFILE_EXCL);
    // Awaited only after the index; a copy that fails first (ENOSPC) must not be an unhandled rejection meanwhile.
    copying.catch(() => undefined);
    let indexed: ChunkResult;
    try {
      indexed = await indexLocal(handle, fileName, signal);
    } catch (e) {
      await copying.catch(() => undefined);
      throw signal.aborted ? cancelled() : fromFsError(e, display, 'read');
    }
    await copying.catch((e: unknown) => {
      throw fromFsError(e, display, 'copy');
    });
    if (signal.aborted) throw cancelled();
    const [after, spooled] = await Promise.all([fsp.stat(localPath).catch(() => undefined), fsp.stat(spoolPath)]);
    const unchanged =
      after !== undefined &&
      after.ino === before.ino &&
      after.size === before.size &&
      after.mtimeMs === before.mtimeMs &&
      after.ctimeMs === before.ctimeMs;
    if (unchanged && spooled.size === indexed.index.bytes)
      return {
        ...(await transcodeIfNeeded(source, spoolPath, indexed, signal)),
        mtimeMs: before.mtimeMs,
        method: 'clone',
      };
    // The file changed while it was copied: the spool is the snapshot, so index the spool itself.
    const spool = await fsp.open(spoolPath, 'r');
    try {
      const result = await indexLocal(spool, fileName, signal);
      if (isUtf16(result.encoding)) {
        throw new SandboxError(
          'E_SANDBOX_CONFLICT',
          `"${display}" changed into a UTF-16 file while it was being opened.`,
          `Call open_file again.`,
        );
      }
      await spool.close();
      return {
        ...(await transcodeIfNeeded(source, spoolPath, result, signal)),
        mtimeMs: after?.mtimeMs ?? before.mtimeMs,
        method: 'clone',
      };
    } finally {
      await spool.close().catch(() => undefined);
    }
  } finally {
    await handle.close();
  }
}

/** UTF-16 without a BOM, when files.encoding says the file is UTF-16. */
function utf16Imposed(source: SpoolSource): 'utf16le' | 'utf16be' | undefined {
  const forced = imposed(source.configured);
  return forced !== undefined && isUtf16(forced) ? forced : undefined;
}

/**
 * Text that is not UTF-8, or that files.encoding says is in another encoding, is spooled transcoded
 * to UTF-8 (as UTF-16 is), so pages and grep see its characters. The candidates are tried in order
 * until one maps every byte: files.encoding's, then (bytes that are not UTF-8) windows-1252 and
 * latin-1, which maps every byte. When files.encoding's does not fit UTF-8 bytes, they stay as they are.
 */
async function transcodeIfNeeded(
  source: SpoolSource,
  spoolPath: string,
  raw: ChunkResult,
  signal: AbortSignal,
): Promise<ChunkResult> {
  if (raw.binary || isUtf16(raw.encoding)) return raw;
  // A BOM decides before files.encoding does.
  const forced = raw.encoding === 'utf8bom' ? undefined : imposed(source.configured);
  const candidates: TextEncoding[] = forced !== undefined && !isUtf16(forced) ? [forced] : [];
  if (!raw.utf8) candidates.push(LEGACY_ENCODING, LEGACY_FALLBACK);
  if (candidates.length === 0) return raw;
  const rawPath = `${spoolPath}.raw`;
  await fsp.rename(spoolPath, rawPath);
  try {
    for (const encoding of candidates) {
      const handle = await fsp.open(rawPath, 'r');
      let result: ChunkResult;
      try {
        result = await spoolChunks(source, readChunks(handle), spoolPath, signal, encoding);
      } finally {
        await handle.close();
      }
      if (!result.lossy || encoding === LEGACY_FALLBACK) return result;
      await fsp.rm(spoolPath, { force: true });
    }
    await fsp.rename(rawPath, spoolPath);
    return raw;
  } finally {
    await fsp.rm(rawPath, { force: true });
  }
}
