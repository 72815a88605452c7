import * as assert from 'node:assert/strict';
import { after, describe, it } from 'mocha';
import * as vscode from 'vscode';
import { invoke, workspaceUri } from './api.ts';

const PNG = Uint8Array.from(Buffer.from('iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==', 'base64'));

/** A part of a tool result that carries bytes (LanguageModelDataPart), as invokeTool hands it back. */
interface DataPartLike {
  readonly mimeType: string;
  readonly data: Uint8Array;
}

const isDataPart = (part: unknown): part is DataPartLike =>
  typeof part === 'object' && part !== null && typeof (part as { mimeType?: unknown }).mimeType === 'string' && (part as { data?: unknown }).data instanceof Uint8Array;

describe('images in VS Code', () => {
  const image = workspaceUri('data', 'pixel.png');
  const fake = workspaceUri('data', 'fake.png');
  after(async () => {
    for (const uri of [image, fake]) await vscode.workspace.fs.delete(uri).then(undefined, () => undefined);
  });

  it('open_file of a PNG in the workspace gives the model the image as an image part; a .png that is not an image is binary, narrated', async () => {
    await vscode.workspace.fs.writeFile(image, PNG);
    const result = await vscode.lm.invokeTool('open_file', { input: { path: 'data/pixel.png' }, toolInvocationToken: undefined });
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
    assert.match(described, /, binary, 14 bytes, [^\n]+\n"data\/fake\.png" is named like an image, but its bytes are not a PNG, JPEG, GIF or WebP image, so it is treated as binary\./);
  });
});
