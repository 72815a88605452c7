/**
 * The folder reader's worker thread (see folder-reader.ts): reads a folder and lstats each entry
 * that is not a folder, so the listing's syscalls run on another core beside its own work. It only
 * reads the folders it is asked for; it holds nothing between requests.
 */
import { readdirSync } from 'node:fs';
import { parentPort } from 'node:worker_threads';
import { folderPrefix, packDirent, type FolderReply, type FolderRequest } from './packed-folder.ts';

parentPort?.on('message', ({ id, folder }: FolderRequest) => {
  try {
    const prefix = folderPrefix(folder);
    const packed = readdirSync(folder, { withFileTypes: true }).map((dirent) => packDirent(prefix, dirent));
    // One string: the cheapest message to copy between threads.
    parentPort?.postMessage({ id, folder: { text: packed.join('\0') } } satisfies FolderReply);
  } catch (e) {
    const { code, message } = e as { code?: unknown; message?: unknown };
    parentPort?.postMessage({
      id,
      error: { ...(typeof code === 'string' ? { code } : {}), message: String(message ?? e) },
    } satisfies FolderReply);
  }
});
