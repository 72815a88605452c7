import * as assert from 'node:assert/strict';
import { after, describe, it } from 'mocha';
import { crc32, deflateSync } from 'node:zlib';
import * as vscode from 'vscode';
import { invoke, workspaceUri } from './api.ts';

const PNG = Uint8Array.from(
  Buffer.from(
    'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
    'base64',
  ),
);

/** A part of a tool result that carries bytes (LanguageModelDataPart), as invokeTool hands it back. */
interface DataPartLike {
  readonly mimeType: string;
  readonly data: Uint8Array;
}

const isDataPart = (part: unknown): part is DataPartLike =>
  typeof part === 'object' &&
  part !== null &&
  typeof (part as { mimeType?: unknown }).mimeType === 'string' &&
  (part as { data?: unknown }).data instanceof Uint8Array;

/** A black RGB PNG of `width`×`height` px, encoded by hand (rows of a filter byte and zeros). */
function blackPng(width: number, height: number): Uint8Array {
  const chunk = (type: string, data: Buffer): Buffer => {
    const body = Buffer.concat([Buffer.from(type, 'latin1'), data]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(data.length);
    const crc = Buffer.alloc(4);
    crc.writeUInt32BE(crc32(body));
    return Buffer.concat([length, body, crc]);
  };
  const header = Buffer.alloc(13);
  header.writeUInt32BE(width, 0);
  header.writeUInt32BE(height, 4);
  header.set([8, 2, 0, 0, 0], 8); // 8-bit RGB, deflate, no filter, not interlaced
  const rows = Buffer.alloc((width * 3 + 1) * height);
  const signature = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a]);
  return Uint8Array.from(
    Buffer.concat([signature, chunk('IHDR', header), chunk('IDAT', deflateSync(rows)), chunk('IEND', Buffer.alloc(0))]),
  );
}

describe('images in VS Code', () => {
  const image = workspaceUri('data', 'pixel.png');
  const fake = workspaceUri('data', 'fake.png');
  const wide = workspaceUri('data', 'wide.png');
  after(async () => {
    for (const uri of [image, fake, wide]) await vscode.workspace.fs.delete(uri).then(undefined, () => undefined);
  });

  it('open_file of a PNG in the workspace gives the model the image as an image part; a .png that is not an image is binary, narrated', async () => {
    await vscode.workspace.fs.writeFile(image, PNG);
    const result = await vscode.lm.invokeTool('open_file', {
      input: { path: 'data/pixel.png' },
      toolInvocationToken: undefined,
    });
    const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    assert.match(text, /^artifact \S+: data\/pixel\.png, binary, 70 bytes, [^\n]+\nImage: image\/png, 1×1 px\./);
    const parts = result.content.filter(isDataPart);
    const api = (vscode as unknown as { LanguageModelDataPart?: unknown }).LanguageModelDataPart;
    if (api === undefined) {
      assert.match(text, /This VS Code cannot pass images to the model/);
      console.log('image part: this VS Code has no LanguageModelDataPart');
    } else {
      assert.equal(parts.length, 1, `content: ${JSON.stringify(result.content.map((p) => Object.keys(p as object)))}`);
      console.log(`image part: ${parts[0]!.mimeType}, ${parts[0]!.data.byteLength} bytes`);
      assert.equal(parts[0]!.mimeType, 'image/png');
      assert.deepEqual(Buffer.from(parts[0]!.data), Buffer.from(PNG));
    }
    await vscode.workspace.fs.writeFile(fake, new TextEncoder().encode('not a picture\n'));
    const described = await invoke('open_file', { path: 'data/fake.png' });
    assert.match(
      described,
      /, binary, 14 bytes, [^\n]+\n"data\/fake\.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary\./,
    );
  });

  it('a 3000×2000 PNG reaches the model downscaled to 1568×1045, still a PNG (the bundled codecs, loaded on first use)', async () => {
    await vscode.workspace.fs.writeFile(wide, blackPng(3000, 2000));
    const result = await vscode.lm.invokeTool('open_file', {
      input: { path: 'data/wide.png' },
      toolInvocationToken: undefined,
    });
    const text = result.content.map((p) => (p instanceof vscode.LanguageModelTextPart ? p.value : '')).join('');
    assert.match(
      text,
      /\nImage: image\/png, 3000×2000 px\.\nShown to you downscaled to 1568×1045 px; the file is unchanged\.\n/,
    );
    const parts = result.content.filter(isDataPart);
    assert.equal(parts.length, 1, text);
    const shown = Buffer.from(parts[0]!.data);
    console.log(
      `downscaled image part: ${parts[0]!.mimeType}, ${shown.byteLength} bytes, ${shown.readUInt32BE(16)}×${shown.readUInt32BE(20)} px`,
    );
    assert.equal(parts[0]!.mimeType, 'image/png');
    assert.deepEqual([shown.readUInt32BE(16), shown.readUInt32BE(20)], [1568, 1045]);
  });
});
