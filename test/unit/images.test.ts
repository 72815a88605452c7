import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { session, type TestSession } from './harness.ts';
import { oneFile } from '../../src/core/tools/open_file.ts';
import { sniffImage } from '../../src/core/images/sniff.ts';

const PNG = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64');
const GIF = Buffer.from('R0lGODlhAQABAIAAAAAAAP///yH5BAEAAAAALAAAAAABAAEAAAIBRAA7', 'base64');

/** A JPEG's frame header (SOF0) saying `width`×`height`: what a reader of its size sees. */
function jpeg(width: number, height: number): Buffer {
  const app0 = Buffer.from([0xff, 0xe0, 0x00, 0x10, 0x4a, 0x46, 0x49, 0x46, 0x00, 0x01, 0x01, 0x00, 0x00, 0x01, 0x00, 0x01, 0x00, 0x00]);
  const sof = Buffer.from([0xff, 0xc0, 0x00, 0x11, 0x08, height >> 8, height & 0xff, width >> 8, width & 0xff, 0x03, 0x01, 0x22, 0x00, 0x02, 0x11, 0x01, 0x03, 0x11, 0x01]);
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
    assert.equal(sniffImage(Buffer.from('<svg xmlns="http://www.w3.org/2000/svg" width="10" height="10"/>'), 60), undefined, 'SVG is text, not an image part');
  });

  it('open_file of an image returns its metadata and the image itself, its bytes as they are on disk', async (t) => {
    const s = session(t);
    write(s, 'logo.png', PNG);
    const outcome = await s.invoke('open_file', { path: 'logo.png' });
    const result = oneFile(outcome.result);
    assert.deepEqual(result.image, { mime: 'image/png', width: 1, height: 1, bytes: PNG.length });
    assert.match(outcome.text, /^artifact \S+: logo\.png, binary, 70 bytes, modified [^\n]+\nImage: image\/png, 1×1 px\.\nNo text lines \(binary\)/);
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
    assert.equal(result.imageNote, '"fake.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary.');
    assert.match(fake.text, /\n"fake\.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary\.\n/);
    assert.equal(fake.images, undefined);
  });

  it('an image too large to decode is described, not sent', async (t) => {
    const s = session(t);
    write(s, 'huge.jpg', jpeg(9000, 4000));
    const outcome = await s.invoke('open_file', { path: 'huge.jpg' });
    assert.deepEqual(oneFile(outcome.result).image, { mime: 'image/jpeg', width: 9000, height: 4000, bytes: jpeg(9000, 4000).length });
    assert.match(outcome.text, /\nNot shown as an image: at 9000×4000 px and \d+ bytes it is over what is decoded to downscale it \(25 megapixels, 32\.0 MiB\)\. Ask the user for a smaller copy\./);
    assert.equal(outcome.images, undefined);
    write(s, 'wide.webp', webp(9000, 100));
    const webpOutcome = await s.invoke('open_file', { path: 'wide.webp' });
    assert.match(webpOutcome.text, /\nNot shown as an image: a WebP over 5\.0 MiB or 8000 px a side is not downscaled here\./);
    assert.equal(webpOutcome.images, undefined);
  });

  it('a large PNG reaches the model downscaled to 1568 px on its longest side, still a PNG; the file is unchanged', async (t) => {
    const s = session(t);
    const { Jimp } = await import('../../src/core/images/codecs.ts');
    const source = await new Jimp({ width: 3000, height: 2000, color: 0x3366ccff }).getBuffer('image/png');
    write(s, 'wide.png', source);
    const outcome = await s.invoke('open_file', { path: 'wide.png' });
    assert.match(outcome.text, /\nImage: image\/png, 3000×2000 px\.\nShown to you downscaled to 1568×1045 px; the file is unchanged\.\n/);
    assert.equal(outcome.images?.length, 1);
    const shown = outcome.images![0]!;
    assert.equal(shown.mime, 'image/png');
    assert.deepEqual(sniffImage(shown.data, shown.data.byteLength), { mime: 'image/png', width: 1568, height: 1045, bytes: shown.data.byteLength });
    assert.deepEqual(readFileSync(nodePath.join(s.root, 'wide.png')), source);
  });

  it('a large image whose pixels cannot be decoded says so and sends nothing; the call still returns the handle', async (t) => {
    const s = session(t);
    // A PNG signature and header saying 3000×2000, then no image data.
    const header = Buffer.from('iVBORw0KGgoAAAANSUhEUgAAC7gAAAfQCAYAAAA', 'base64');
    write(s, 'broken.png', Buffer.concat([header, Buffer.alloc(64)]));
    const outcome = await s.invoke('open_file', { path: 'broken.png' });
    assert.match(outcome.text, /\nImage: image\/png, 3000×2000 px\.\nShown to you downscaled to 1568×1045 px; the file is unchanged\.\n[\s\S]*\nNot shown after all: its header says image\/png, but its pixels could not be decoded \([^)]+\), so nothing was sent\.$/);
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
    const s = session(t, { allow: false, rules: [{ glob: 'private/**', read: 'deny' }, { glob: 'scans/**', read: 'ask' }] });
    for (const dir of ['private', 'scans']) { mkdirSync(nodePath.join(s.root, dir)); write(s, `${dir}/id.png`, PNG); }
    await assert.rejects(s.invoke('open_file', { path: 'scans/id.png' }), { code: 'E_SANDBOX_REFUSED' });
    assert.equal(s.gate.calls.at(-1)?.secret, true);
    await assert.rejects(s.invoke('open_file', { path: 'private/id.png' }), { code: 'E_SANDBOX_REFUSED', message: /refused by the rule "private\/\*\*"/ });
  });

  it('a batch returns no image parts (open an image alone to see it)', async (t) => {
    const s = session(t);
    write(s, 'a.png', PNG);
    const outcome = await s.invoke('open_file', { files: [{ path: 'a.png' }] });
    assert.equal(outcome.images, undefined);
  });
});
