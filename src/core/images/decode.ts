import { Worker } from 'node:worker_threads';
import { cancelled } from '../errors.ts';
import { workerFile } from '../lazy-module.ts';
import type { DecodeReply } from './decode-reply.ts';
import type { DownscaleRequest } from './downscale.ts';
import type { ImagePart } from './part.ts';

/** How long one image may take to decode and downscale (25 megapixels take about 4 s here). */
export const IMAGE_DECODE_TIME_MS = 30_000;

/**
 * The decoding worker's heap. The pixels themselves are buffers outside it (bounded by frames.ts's
 * check before the worker starts); this bounds what a decoder builds of JavaScript objects.
 */
const WORKER_LIMITS = {
  maxOldGenerationSizeMb: 128,
  maxYoungGenerationSizeMb: 16,
  codeRangeSizeMb: 16,
  stackSizeMb: 4,
};

export interface DecodeOptions {
  /** Aborting ends the worker at once; the call then fails as cancelled. */
  readonly signal: AbortSignal;
  /** The time limit (tests set their own). */
  readonly timeMs?: number;
}

/** Why an image announced to the model was not sent after all. */
export interface Unshown {
  readonly unshown: string;
}

const unshown = (why: string): Unshown => ({ unshown: `Not shown after all: ${why}, so nothing was sent.` });

/**
 * Decodes and downscales an image on a worker thread of its own, ended when it replies, when it
 * runs past the time limit, or when `signal` aborts. Security: decoding is the one step an image
 * file drives (its sizes and its compressed data); off the host's thread and bounded in time and
 * heap, no image can hold the extension host or a CLI or MCP session, and a cancelled call stops it.
 */
export async function decodeInWorker(request: DownscaleRequest, options: DecodeOptions): Promise<ImagePart | Unshown> {
  const { signal } = options;
  if (signal.aborted) throw cancelled();
  const timeMs = options.timeMs ?? IMAGE_DECODE_TIME_MS;
  const worker = new Worker(workerFile('image-worker'), { resourceLimits: WORKER_LIMITS });
  let timer: NodeJS.Timeout | undefined;
  let onAbort: (() => void) | undefined;
  try {
    return await new Promise<ImagePart | Unshown>((resolve, reject) => {
      onAbort = () => reject(cancelled());
      signal.addEventListener('abort', onAbort, { once: true });
      timer = setTimeout(
        () => resolve(unshown(`decoding it took longer than ${timeMs / 1000} s and was stopped`)),
        timeMs,
      );
      worker.once('message', (reply: DecodeReply) =>
        resolve(
          'part' in reply
            ? reply.part
            : unshown(`its header says ${request.mime}, but its pixels could not be decoded (${reply.failed})`),
        ),
      );
      worker.once('error', (e: Error & { code?: string }) => {
        resolve(
          unshown(
            e.code === 'ERR_WORKER_OUT_OF_MEMORY'
              ? `decoding it needed more memory than an image is given (${WORKER_LIMITS.maxOldGenerationSizeMb} MB of heap) and was stopped`
              : `decoding it failed (${e.message})`,
          ),
        );
      });
      worker.once('exit', (code) => resolve(unshown(`the decoder ended (exit code ${code}) before it answered`)));
      // A copy the worker owns: the caller's bytes stay where they are.
      const bytes = new Uint8Array(request.bytes);
      worker.postMessage({ ...request, bytes } satisfies DownscaleRequest, [bytes.buffer]);
    });
  } finally {
    clearTimeout(timer);
    if (onAbort) signal.removeEventListener('abort', onAbort);
    await worker.terminate();
  }
}
