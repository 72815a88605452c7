import { readdirSync, watch, type Dirent, type FSWatcher } from 'node:fs';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';
import { SyncSlice } from '../sync-slice.ts';
import { entryNow } from './entry.ts';
import type { WatchGit } from './port.ts';

/** Folders never watched, as VS Code's watcher leaves them out: installed dependencies, and a git directory's objects. */
const unwatched = (path: string, name: string): boolean => name === 'node_modules' || (name === 'objects' && path.split(nodePath.sep).includes('.git'));

/** A `WatchGit` for hosts without an editor's file watcher, and the way to end it with the session. */
export interface FolderWatch {
  readonly watchGit: WatchGit;
  dispose(): void;
}

/**
 * Every folder under the folders asked for, each watched on its own (`fs.watch`, not recursive:
 * Node's recursive watch took 0.2 s to start on 20,000 files here, and 1.5 s and 140 MB on 100,000,
 * each time). Made on first use and kept for the session, so a command pays nothing for it. The
 * folders are walked in slices, the newest first, so the thread is never held long: a folder made
 * later is watched as soon as it shows, then looked through, and what a walk finds that VS Code's git
 * takes as a sign of a repository is reported too, so nothing made before a folder's watch goes unseen. Past the system's limit on
 * watches, the folders left over are looked at only when a command ends, as without a watch.
 */
export function folderWatch(): FolderWatch {
  const watchers = new Map<string, FSWatcher>();
  const listeners = new Set<(path: string) => void>();
  /** Folders to watch and look through, the newest last; whether each is inside a `.git`. */
  const queue: { readonly dir: string; readonly inGit: boolean }[] = [];
  let walking: Promise<void> | undefined;
  /** Folders are still added: not past the system's limit on watches, not disposed. */
  let adding = true;
  const report = (path: string): void => {
    for (const listener of listeners) listener(path);
  };
  const watchFolder = (dir: string): boolean => {
    try {
      const watcher = watch(dir, { persistent: false }, (event, name) => { if (name !== null) changedIn(dir, event, name); });
      watcher.on('error', () => forget(dir));
      watchers.set(dir, watcher);
      return true;
    } catch (e) {
      if (errnoCode(e) === 'ENOSPC') adding = false;
      return false;
    }
  };
  const walk = async (): Promise<void> => {
    const slice = new SyncSlice();
    while (queue.length > 0 && adding) {
      if (slice.over) await slice.next();
      const { dir, inGit } = queue.pop()!;
      if (watchers.has(dir) || !watchFolder(dir)) continue;
      let entries: Dirent[];
      try {
        entries = readdirSync(dir, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        const path = nodePath.join(dir, entry.name);
        // What VS Code's git takes as a sign of a repository (the rest was there before, or is reported as it changes).
        const git = inGit || entry.name === '.git';
        if (git || entry.name.startsWith('.git')) report(path);
        if (entry.isDirectory() && !unwatched(path, entry.name)) queue.push({ dir: path, inGit: git });
      }
    }
    walking = undefined;
  };
  const add = (dir: string): void => {
    if (!adding || watchers.has(dir)) return;
    queue.push({ dir, inGit: dir.split(nodePath.sep).includes('.git') });
    walking ??= walk();
  };
  const changedIn = (dir: string, event: string, name: string): void => {
    const path = nodePath.join(dir, name);
    report(path);
    if (event !== 'rename' || unwatched(path, name)) return;
    const stat = entryNow(path);
    if (stat?.isDirectory() === true) add(path);
    else if (watchers.has(path)) forget(path);
  };
  /** A folder gone: its watch and those below it. */
  const forget = (dir: string): void => {
    for (const [path, watcher] of watchers) {
      if (path === dir || path.startsWith(`${dir}${nodePath.sep}`)) {
        watcher.close();
        watchers.delete(path);
      }
    }
  };
  return {
    watchGit: (folders, changed) => {
      listeners.add(changed);
      for (const folder of folders) add(folder);
      return { dispose: () => listeners.delete(changed) };
    },
    dispose: () => {
      adding = false;
      listeners.clear();
      for (const watcher of watchers.values()) watcher.close();
      watchers.clear();
    },
  };
}
