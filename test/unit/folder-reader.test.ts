import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { FolderReader } from '../../src/core/fs/folder-reader.ts';
import { packFolder, unpackFolder } from '../../src/core/fs/packed-folder.ts';
import type { SizedDirEntry } from '../../src/core/ports.ts';

function folder(t: { after(fn: () => void): void }): string {
  const dir = mkdtempSync(nodePath.join(tmpdir(), 'wt-folder-reader-'));
  t.after(() => rmSync(dir, { recursive: true, force: true }));
  mkdirSync(nodePath.join(dir, 'sub'));
  writeFileSync(nodePath.join(dir, 'empty.txt'), '');
  writeFileSync(nodePath.join(dir, 'ten.bin'), Buffer.alloc(10));
  writeFileSync(nodePath.join(dir, 'ünï cödé name with spaces'), 'abc');
  symlinkSync('ten.bin', nodePath.join(dir, 'link'));
  execFileSync('mkfifo', [nodePath.join(dir, 'fifo')]);
  return dir;
}

/** Plain copies of the entries (unpacked ones are class instances), sorted by name. */
const byName = (entries: SizedDirEntry[]): SizedDirEntry[] => plain(entries).sort((a, b) => (a.name < b.name ? -1 : 1));
const plain = (entries: SizedDirEntry[]): SizedDirEntry[] => entries.map((e) => ({ ...e }));

/** Waits for the reader's worker to be up: each turn of the event loop, not a fixed time. */
async function workerUp(reader: FolderReader, dir: string): Promise<void> {
  while (!reader.onWorker) {
    await reader.read(dir);
    await new Promise<void>((resolve) => {
      setImmediate(resolve);
    });
  }
}

const EXPECTED: SizedDirEntry[] = [
  { name: 'empty.txt', type: 'file', size: 0 },
  { name: 'fifo', type: 'other', size: 0 },
  { name: 'link', type: 'symlink', size: 'ten.bin'.length },
  { name: 'sub', type: 'directory' },
  { name: 'ten.bin', type: 'file', size: 10 },
  { name: 'ünï cödé name with spaces', type: 'file', size: 3 },
];

test('a folder reads the same on the calling thread and on the worker: types, lstat sizes (a link its own), no size for a folder', async (t) => {
  const dir = folder(t);
  const inline = new FolderReader({ entriesBeforeWorker: Number.MAX_SAFE_INTEGER });
  assert.deepEqual(byName(unpackFolder(await inline.read(dir))), EXPECTED);
  assert.equal(inline.onWorker, false);
  const threaded = new FolderReader({ entriesBeforeWorker: 0 });
  t.after(() => threaded.stopWorker());
  await workerUp(threaded, dir);
  assert.deepEqual(byName(unpackFolder(await threaded.read(dir))), EXPECTED);
  assert.deepEqual(plain(unpackFolder(await threaded.read(nodePath.join(dir, 'sub')))), []);
});

test('a folder that cannot be read fails with its system code, on either thread', async (t) => {
  const dir = folder(t);
  const threaded = new FolderReader({ entriesBeforeWorker: 0 });
  t.after(() => threaded.stopWorker());
  await workerUp(threaded, dir);
  for (const reader of [threaded, new FolderReader()]) {
    await assert.rejects(
      reader.read(nodePath.join(dir, 'missing')),
      (e: unknown) => (e as { code?: string }).code === 'ENOENT',
    );
    await assert.rejects(
      reader.read(nodePath.join(dir, 'ten.bin')),
      (e: unknown) => (e as { code?: string }).code === 'ENOTDIR',
    );
  }
});

test('a worker stopped with reads in flight: each is answered all the same, and the next big listing starts another', async (t) => {
  const dir = folder(t);
  const reader = new FolderReader({ entriesBeforeWorker: 0 });
  t.after(() => reader.stopWorker());
  await workerUp(reader, dir);
  const reads = Array.from({ length: 20 }, () => reader.read(dir));
  await reader.stopWorker();
  for (const read of await Promise.all(reads)) assert.deepEqual(byName(unpackFolder(read)), EXPECTED);
  assert.equal(reader.onWorker, false);
  await workerUp(reader, dir);
  assert.deepEqual(byName(unpackFolder(await reader.read(dir))), EXPECTED);
});

test('packing keeps every name as it is: spaces, non-ASCII, digits and leading digits', () => {
  const entries: SizedDirEntry[] = [
    { name: '123', type: 'file', size: 45 },
    { name: '0', type: 'directory' },
    { name: ' lead and trail ', type: 'symlink', size: 7 },
    { name: 'ß\u0301x', type: 'other' },
    { name: 'big', type: 'file', size: 2 ** 40 },
  ];
  assert.deepEqual(plain(unpackFolder(packFolder(entries))), entries);
  assert.deepEqual(plain(unpackFolder(packFolder([]))), []);
});
