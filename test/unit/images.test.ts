import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session, type TestSession } from './harness.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import { sniffImage } from '../../src/core/images/sniff.ts';
import { frameExtent } from '../../src/core/images/frames.ts';
import { decodeInWorker } from '../../src/core/images/decode.ts';
import diagnostics from 'node:diagnostics_channel';
import type { Worker } from 'node:worker_threads';
import { anmf, gif, jpeg as jpegFrames, png, simpleWebp, vp8, vp8l, webp as webpFrames } from './image-files.ts';

const PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** A JPEG's frame header (SOF0) saying `width`×`height`: what a reader of its size sees. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([
    0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00,
  ]);
  const sof = Buffer.from([
    0xff,
    0xc0,
    0x00,
    0x11,
    0x08,
    height >> 8,
    height & 0xff,
    width >> 8,
    width & 0xff,
    0x03,
    0x01,
    0x22,
    0x00,
    0x02,
    0x11,
    0x01,
    0x03,
    0x11,
    0x01,
  ]);
  return Buffer.concat([Buffer.from([0xff, 0xd8]), app0, sof, Buffer.from([0xff, 0xd9])]);
}

/** An extended WebP (VP8X) header saying `width`×`height`. */
function webp(width: number, height: number): Buffer {
  const chunk = Buffer.alloc(10);
  chunk.writeUIntLE(width - 1, 4, 3);
  chunk.writeUIntLE(height - 1, 7, 3);
  const body = Buffer.concat([Buffer.from('WEBP'), Buffer.from('VP8X'), Buffer.from([10, 0, 0, 0]), chunk]);
  const size = Buffer.alloc(4);
  size.writeUInt32LE(body.length);
  return Buffer.concat([Buffer.from('RIFF'), size, body]);
}

function write(s: TestSession, rel: string, bytes: Uint8Array | string): void {
  writeFileSync(nodePath.join(s.root, rel), bytes);
}

describe('images', () => {
  it('a PNG, JPEG, GIF or WebP is recognised from its bytes, with its size in pixels', () => {
    assert.deepEqual(sniffImage(PNG, PNG.length), { mime: 'image/png', width: 1, height: 1, bytes: PNG.length });
    assert.deepEqual(sniffImage(GIF, GIF.length), { mime: 'image/gif', width: 1, height: 1, bytes: GIF.length });
    assert.deepEqual(sniffImage(jpeg(3, 2), 40), { mime: 'image/jpeg', width: 3, height: 2, bytes: 40 });
    assert.deepEqual(sniffImage(webp(640, 480), 30), { mime: 'image/webp', width: 640, height: 480, bytes: 30 });
    assert.equal(sniffImage(Buffer.from('not an image at all'), 19), undefined);
    assert.equal(
      sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 60),
      undefined,
      'SVG is text, not an image part',
    );
  });

  it('open_file of an image returns its metadata and the image itself, its bytes as they are on disk', async (t) => {
    const s = session(t);
    write(s, 'logo.png', PNG);
    const outcome = await s.invoke('open_file', { path: 'logo.png' });
    const result = oneFile(outcome.result);
    assert.deepEqual(result.image, { mime: 'image/png', width: 1, height: 1, bytes: PNG.length });
    assert.match(
      outcome.text,
      /^artifact \S+: logo\.png, binary, 70 bytes, modified [^\n]+\nImage: image\/png, 1×1 px\.\nNo text lines \(binary\)/,
    );
    assert.equal(outcome.images?.length, 1);
    assert.equal(outcome.images![0]!.mime, 'image/png');
    assert.deepEqual(Buffer.from(outcome.images![0]!.data), PNG);
  });

  it('the bytes decide, not the name: a PNG named .dat is an image, a text file named .png is binary with a narrated note', async (t) => {
    const s = session(t);
    write(s, 'picture.dat', PNG);
    const named = await s.invoke('open_file', { path: 'picture.dat' });
    assert.equal(oneFile(named.result).image?.mime, 'image/png');
    write(s, 'fake.png', 'this is text pretending to be a picture\n');
    const fake = await s.invoke('open_file', { path: 'fake.png' });
    const result = oneFile(fake.result);
    assert.equal(result.image, undefined);
    assert.equal(result.binary, true);
    assert.equal(
      result.imageNote,
      '"fake.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary.',
    );
    assert.match(
      fake.text,
      /\n"fake\.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary\.\n/,
    );
    assert.equal(fake.images, undefined);
  });

  it('an image too large to decode is described, not sent', async (t) => {
    const s = session(t);
    write(s, 'huge.jpg', jpeg(9000, 4000));
    const outcome = await s.invoke('open_file', { path: 'huge.jpg' });
    assert.deepEqual(oneFile(outcome.result).image, {
      mime: 'image/jpeg',
      width: 9000,
      height: 4000,
      bytes: jpeg(9000, 4000).length,
    });
    assert.match(
      outcome.text,
      /\nNot shown as an image: at 9000×4000 px and \d+ bytes it is over what is decoded to downscale it \(25 megapixels, 32\.0 MiB\)\. Ask the user for a smaller copy\./,
    );
    assert.equal(outcome.images, undefined);
    write(s, 'wide.webp', webp(9000, 100));
    const webpOutcome = await s.invoke('open_file', { path: 'wide.webp' });
    assert.match(
      webpOutcome.text,
      /\nNot shown as an image: a WebP over 5\.0 MiB or 8000 px a side is not downscaled here\./,
    );
    assert.equal(webpOutcome.images, undefined);
  });

  it('a large PNG reaches the model downscaled to 1568 px on its longest side, still a PNG; the file is unchanged', async (t) => {
    const s = session(t);
    const { Jimp } = await import('../../src/core/images/codecs.ts');
    const source = await new Jimp({ width: 3000, height: 2000, color: 0x3366ccff }).getBuffer('image/png');
    write(s, 'wide.png', source);
    const outcome = await s.invoke('open_file', { path: 'wide.png' });
    assert.match(
      outcome.text,
      /\nImage: image\/png, 3000×2000 px\.\nShown to you downscaled to 1568×1045 px; the file is unchanged\.\n/,
    );
    assert.equal(outcome.images?.length, 1);
    const shown = outcome.images![0]!;
    assert.equal(shown.mime, 'image/png');
    assert.deepEqual(sniffImage(shown.data, shown.data.byteLength), {
      mime: 'image/png',
      width: 1568,
      height: 1045,
      bytes: shown.data.byteLength,
    });
    assert.deepEqual(readFileSync(nodePath.join(s.root, 'wide.png')), source);
  });

  it('a large image whose pixels cannot be decoded says so and sends nothing; the call still returns the handle', async (t) => {
    const s = session(t);
    // A PNG signature and header saying 3000×2000, then no image data.
    const header = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAC7gAAAfQCAYAAAA', 'base64');
    write(s, 'broken.png', Buffer.concat([header, Buffer.alloc(64)]));
    const outcome = await s.invoke('open_file', { path: 'broken.png' });
    assert.match(
      outcome.text,
      /\nImage: image\/png, 3000×2000 px\.\nShown to you downscaled to 1568×1045 px; the file is unchanged\.\n[\s\S]*\nNot shown after all: its header says image\/png, but its pixels could not be decoded \([^)]+\), so nothing was sent\.$/,
    );
    assert.equal(outcome.images, undefined);
    assert.ok(oneFile(outcome.result).callId);
  });

  it('a large JPEG reaches the model as a smaller JPEG; a tall GIF as a PNG of its first frame', async (t) => {
    const s = session(t);
    const { Jimp } = await import('../../src/core/images/codecs.ts');
    write(s, 'photo.jpg', await new Jimp({ width: 4000, height: 3000, color: 0x996633ff }).getBuffer('image/jpeg'));
    const photo = await s.invoke('open_file', { path: 'photo.jpg' });
    const jpegShown = photo.images![0]!;
    assert.deepEqual(sniffImage(jpegShown.data, 1), { mime: 'image/jpeg', width: 1568, height: 1176, bytes: 1 });
    write(s, 'tall.gif', await new Jimp({ width: 200, height: 2000, color: 0x000000ff }).getBuffer('image/gif'));
    const tall = await s.invoke('open_file', { path: 'tall.gif' });
    assert.match(tall.text, /Shown to you downscaled to 157×1568 px/);
    assert.deepEqual(sniffImage(tall.images![0]!.data, 1), { mime: 'image/png', width: 157, height: 1568, bytes: 1 });
  });

  it('attack: an image a rule protects is asked like any read: declined, no image reaches the model; denied, neither', async (t) => {
    const s = session(t, {
      allow: false,
      rules: [
        { glob: 'private/**', read: 'deny' },
        { glob: 'scans/**', read: 'ask' },
      ],
    });
    for (const dir of ['private', 'scans']) {
      mkdirSync(nodePath.join(s.root, dir));
      write(s, `${dir}/id.png`, PNG);
    }
    await assert.rejects(s.invoke('open_file', { path: 'scans/id.png' }), { code: 'E_SANDBOX_REFUSED' });
    assert.equal(s.gate.calls.at(-1)?.secret, true);
    await assert.rejects(s.invoke('open_file', { path: 'private/id.png' }), {
      code: 'E_SANDBOX_REFUSED',
      message: /refused by the rule "private\/\*\*"/,
    });
  });

  it('a batch returns no image parts (open an image alone to see it)', async (t) => {
    const s = session(t);
    write(s, 'a.png', PNG);
    const outcome = await s.invoke('open_file', { files: [{ path: 'a.png' }] });
    assert.equal(outcome.images, undefined);
  });
});

/** The worker threads started from now on, seen through node's `worker_threads` diagnostics channel (no hook in the code under test). */
function watchWorkers(): { readonly started: Worker[]; next(): Promise<Worker>; stop(): void } {
  const started: Worker[] = [];
  let waiting: ((worker: Worker) => void) | undefined;
  const listener = (message: unknown): void => {
    const { worker } = message as { worker: Worker };
    started.push(worker);
    waiting?.(worker);
  };
  diagnostics.subscribe('worker_threads', listener);
  return {
    started,
    next: () =>
      new Promise<Worker>((resolve) => {
        waiting = resolve;
      }),
    stop: () => {
      diagnostics.unsubscribe('worker_threads', listener);
    },
  };
}

/** Resolves when `worker` has exited (at once if it already has). */
function exited(worker: Worker): Promise<void> {
  return new Promise((resolve) => {
    if (worker.threadId === -1) resolve();
    else worker.once('exit', () => resolve());
  });
}

describe('images: every frame within the bound, decoded where it can be stopped (issue 44)', () => {
  it("each format's frames are read from its structure: GIF image descriptors, APNG fcTL, every JPEG SOF, WebP VP8/VP8L/VP8X/ANMF", () => {
    assert.deepEqual(frameExtent(gif(1600, 1600, [{ width: 65535, height: 65535 }]), 'image/gif', 1600, 1600), {
      width: 65535,
      height: 65535,
      frames: 1,
      beyond: { x: 0, y: 0, width: 65535, height: 65535, index: 1 },
    });
    assert.deepEqual(
      frameExtent(
        gif(100, 100, [
          { width: 100, height: 100 },
          { x: 10, y: 20, width: 50, height: 50 },
        ]),
        'image/gif',
        100,
        100,
      ),
      { width: 100, height: 100, frames: 2 },
    );
    assert.deepEqual(
      frameExtent(
        png(10, 10, [
          { width: 10, height: 10 },
          { x: 5, y: 0, width: 40000, height: 3 },
        ]),
        'image/png',
        10,
        10,
      ),
      { width: 40005, height: 10, frames: 3, beyond: { x: 5, y: 0, width: 40000, height: 3, index: 3 } },
    );
    assert.deepEqual(
      frameExtent(
        jpegFrames([
          { width: 640, height: 480 },
          { width: 60000, height: 60000 },
        ]),
        'image/jpeg',
        640,
        480,
      ),
      { width: 60000, height: 60000, frames: 2, beyond: { x: 0, y: 0, width: 60000, height: 60000, index: 2 } },
    );
    assert.deepEqual(frameExtent(simpleWebp(vp8(320, 200)), 'image/webp', 320, 200), {
      width: 320,
      height: 200,
      frames: 1,
    });
    assert.deepEqual(frameExtent(simpleWebp(vp8l(320, 200)), 'image/webp', 320, 200), {
      width: 320,
      height: 200,
      frames: 1,
    });
    assert.deepEqual(
      frameExtent(
        webpFrames(100, 100, [
          anmf({ x: 10, y: 10, width: 90, height: 90 }, vp8l(90, 90)),
          anmf({ x: 0, y: 0, width: 100, height: 100 }, vp8(16383, 16383)),
        ]),
        'image/webp',
        100,
        100,
      ),
      { width: 16383, height: 16383, frames: 5, beyond: { x: 0, y: 0, width: 16383, height: 16383, index: 5 } },
    );
  });

  it('a truncated file gives the frames read before its end, and no fault', () => {
    const whole = gif(100, 100, [
      { width: 100, height: 100 },
      { width: 100, height: 100 },
    ]);
    for (let cut = 0; cut < whole.length; cut++)
      assert.ok(frameExtent(whole.subarray(0, cut), 'image/gif', 100, 100).frames <= 2);
    const jpg = jpegFrames([
      { width: 10, height: 10 },
      { width: 20, height: 20 },
    ]);
    for (let cut = 0; cut < jpg.length; cut++)
      assert.ok(frameExtent(jpg.subarray(0, cut), 'image/jpeg', 10, 10).frames <= 2);
  });

  for (const [format, file, expected] of [
    [
      'GIF',
      gif(1600, 1600, [{ width: 65535, height: 65535 }]),
      /its header says 1600×1600 px, but frame 1 is 65535×65535 px at \(0, 0\), so its frames cover 65535×65535 px; that is over what is decoded to downscale it \(25 megapixels, 32\.0 MiB\)\. Ask the user for a smaller copy\./,
    ],
    [
      'PNG',
      png(2000, 2000, [
        { width: 2000, height: 2000 },
        { width: 65535, height: 65535 },
      ]),
      /its header says 2000×2000 px, but frame 3 is 65535×65535 px at \(0, 0\), so its frames cover 65535×65535 px; that is over what is decoded/,
    ],
    [
      'JPEG',
      jpegFrames([
        { width: 2000, height: 2000 },
        { width: 65535, height: 65535 },
      ]),
      /its header says 2000×2000 px, but frame 2 is 65535×65535 px at \(0, 0\), so its frames cover 65535×65535 px; that is over what is decoded/,
    ],
    [
      'WebP',
      webpFrames(1000, 1000, [anmf({ width: 1000, height: 1000 }, vp8(16383, 16383))]),
      /its header says 1000×1000 px, but frame 3 is 16383×16383 px at \(0, 0\), so its frames cover 16383×16383 px; a WebP over 5\.0 MiB or 8000 px a side is not downscaled here/,
    ],
  ] as const) {
    it(`attack: a ${format} whose frame says 65535×65535 (or 16383×16383) under a smaller header is described, and nothing decodes it`, async (t) => {
      const s = session(t);
      const name = `lying.${format.toLowerCase()}`;
      write(s, name, file);
      const workers = watchWorkers();
      t.after(() => workers.stop());
      const outcome = await s.invoke('open_file', { path: name });
      assert.match(outcome.text, new RegExp(`\\nNot shown as an image: ${expected.source}`));
      assert.equal(outcome.images, undefined);
      assert.equal(workers.started.length, 0, 'no decoding worker was started');
    });
  }

  it('attack: a lying frame placed past the first 5 MiB of a GIF is read too', async (t) => {
    const s = session(t);
    const honest = gif(1600, 1600, [
      { width: 1600, height: 1600 },
      { width: 65535, height: 65535 },
    ]);
    // 6 MiB of comment blocks between the honest frame and the lying one.
    const comment = Buffer.concat([
      Buffer.from([0x21, 0xfe]),
      Buffer.concat(Array.from({ length: 24_700 }, () => Buffer.concat([Buffer.from([255]), Buffer.alloc(255, 0x61)]))),
      Buffer.from([0]),
    ]);
    const first = 13 + 6 + 15;
    write(s, 'late.gif', Buffer.concat([honest.subarray(0, first), comment, honest.subarray(first)]));
    const workers = watchWorkers();
    t.after(() => workers.stop());
    const outcome = await s.invoke('open_file', { path: 'late.gif' });
    assert.match(
      outcome.text,
      /\nNot shown as an image: its header says 1600×1600 px, but frame 2 is 65535×65535 px at \(0, 0\)/,
    );
    assert.equal(workers.started.length, 0);
  });

  it('attack: a 34-byte GIF (screen 1600×1600, frame 65535×65535) no longer freezes the host: described from its header, nothing allocated', async (t) => {
    const s = session(t);
    // Header, screen 1600×1600 with a 2-colour table, one image descriptor of 65535×65535 and a few bytes of data.
    const bomb = Buffer.concat([
      Buffer.from('GIF89a'),
      Buffer.from([0x40, 0x06, 0x40, 0x06, 0x80, 0, 0, 0, 0, 0, 255, 255, 255]),
      Buffer.from([0x2c, 0, 0, 0, 0, 0xff, 0xff, 0xff, 0xff, 0, 2, 2, 0x44, 0x01, 0]),
    ]);
    assert.equal(bomb.length, 34);
    write(s, 'bomb.gif', bomb);
    const before = process.memoryUsage().arrayBuffers;
    const outcome = await s.invoke('open_file', { path: 'bomb.gif' });
    assert.match(
      outcome.text,
      /\nImage: image\/gif, 1600×1600 px\.\nNot shown as an image: its header says 1600×1600 px, but frame 1 is 65535×65535 px at \(0, 0\)/,
    );
    assert.ok(process.memoryUsage().arrayBuffers - before < 64 * 1024 * 1024, 'no large buffer was allocated');
  });

  it(
    'attack: while one image decodes in its worker, another call of the same session completes; cancelling the decode ends the worker',
    { timeout: 120_000 },
    async (t) => {
      const s = session(t);
      write(s, 'big.png', png(5000, 5000));
      write(s, 'notes.txt', 'still answering\n');
      const workers = watchWorkers();
      t.after(() => workers.stop());
      const abort = new AbortController();
      t.after(() => abort.abort());
      let settled = false;
      const decoding = s.invoke('open_file', { path: 'big.png' }, { signal: abort.signal }).finally(() => {
        settled = true;
      });
      decoding.catch(() => undefined);
      // A decode on the calling thread never starts a worker: the image call settles first, and that fails the test.
      const worker = await Promise.race([
        workers.next(),
        decoding.then(() => assert.fail('the image was decoded without a worker thread')),
      ]);
      const other = await s.invoke('open_file', { path: 'notes.txt', limit: 5 });
      assert.match(other.text, /still answering/);
      assert.equal(settled, false, 'the other call completed while the image was still decoding');
      abort.abort();
      await assert.rejects(decoding, { code: 'E_SANDBOX_CANCELLED' });
      await exited(worker);
      assert.equal(worker.threadId, -1, 'the decoding worker has ended');
    },
  );

  it('a decode that runs past its time limit is stopped, its worker ended, and the model told why', async (t) => {
    const workers = watchWorkers();
    t.after(() => workers.stop());
    const shown = await decodeInWorker(
      { bytes: png(3000, 3000), mime: 'image/png', width: 1568, height: 1568 },
      { signal: new AbortController().signal, timeMs: 0 },
    );
    assert.deepEqual(shown, {
      unshown: 'Not shown after all: decoding it took longer than 0 s and was stopped, so nothing was sent.',
    });
    assert.equal(workers.started.length, 1);
    await exited(workers.started[0]!);
  });
});
