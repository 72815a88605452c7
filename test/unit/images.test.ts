import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync, writeFileSync } from 'node:fs';
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

  it('an image over the bound is described, not sent', async (t) => {
    const s = session(t);
    write(s, 'huge.jpg', jpeg(9000, 100));
    const outcome = await s.invoke('open_file', { path: 'huge.jpg' });
    assert.deepEqual(oneFile(outcome.result).image, { mime: 'image/jpeg', width: 9000, height: 100, bytes: jpeg(9000, 100).length });
    assert.match(outcome.text, /\nNot shown as an image: it is over the bound of 5\.0 MiB and 8000 px a side \(images are not downscaled\)\./);
    assert.equal(outcome.images, undefined);
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
