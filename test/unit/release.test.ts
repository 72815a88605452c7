import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';

const manifest = JSON.parse(readFileSync('package.json', 'utf8')) as { version: string; icon?: string; galleryBanner?: { color?: string; theme?: string } };

const PNG_SIGNATURE = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);

/** Width and height from a PNG's IHDR chunk, which the format puts first, right after the signature. */
function pngSize(bytes: Buffer): { width: number; height: number } {
  assert.deepEqual(bytes.subarray(0, 8), PNG_SIGNATURE, 'not a PNG: the signature differs');
  assert.equal(bytes.toString('latin1', 12, 16), 'IHDR', 'the first chunk is not IHDR');
  return { width: bytes.readUInt32BE(16), height: bytes.readUInt32BE(20) };
}

test('the Marketplace icon is a 128×128 PNG, rendered from media/icon.svg by scripts/icon.mjs', () => {
  assert.equal(manifest.icon, 'media/icon.png');
  assert.deepEqual(pngSize(readFileSync('media/icon.png')), { width: 128, height: 128 });
  assert.match(readFileSync('media/icon.svg', 'utf8'), /viewBox="0 0 128 128"/);
  assert.match(readFileSync('scripts/icon.mjs', 'utf8'), /media\/icon\.svg/);
});

test('the gallery banner has a colour and a theme its text can be read on', () => {
  assert.match(manifest.galleryBanner?.color ?? '', /^#[0-9a-f]{6}$/i);
  assert.ok(manifest.galleryBanner?.theme === 'dark' || manifest.galleryBanner?.theme === 'light');
});

test('CHANGELOG.md has a section for the version package.json declares, newest first', () => {
  const headings = [...readFileSync('CHANGELOG.md', 'utf8').matchAll(/^## (\S+)/gm)].map((m) => m[1]);
  assert.ok(headings.length > 0, 'CHANGELOG.md has no version section ("## 0.1.0 ...")');
  assert.equal(headings[0], manifest.version, `the newest section of CHANGELOG.md is ${headings[0]}, but package.json's version is ${manifest.version}`);
});
