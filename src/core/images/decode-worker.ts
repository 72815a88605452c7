/**
 * The image decoder's worker thread (see decode.ts): decodes one image and downscales it, then
 * replies and is ended. It runs where it can be stopped: the calling thread ends it on a time
 * limit or the call's cancellation, and its heap is bounded.
 */
import { parentPort } from 'node:worker_threads';
import { downscale, type DownscaleRequest } from './downscale.ts';
import type { DecodeReply } from './decode-reply.ts';

parentPort?.once('message', (request: DownscaleRequest) => {
  downscale(request).then(
    (part) => {
      // A copy with a buffer of its own to hand over (a small Buffer is a slice of a shared pool).
      const data = new Uint8Array(part.data);
      parentPort?.postMessage({ part: { mime: part.mime, data } } satisfies DecodeReply, [data.buffer]);
    },
    (e: unknown) => {
      parentPort?.postMessage({ failed: e instanceof Error ? e.message : String(e) } satisfies DecodeReply);
    },
  );
});
