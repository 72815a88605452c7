import type { FSWatcher } from 'node:fs';
import { entryNow } from './entry.ts';
import * as nodePath from 'node:path';
import { watchWhileRunning } from './git-dirs.ts';
import type { NamedByConfig } from './git-named.ts';
import type { WatchGit } from './port.ts';

/**
 * Security: calls `made` as soon as a command makes one of `unheld` (what the sandbox could not hold
 * because it did not exist yet), from the editor's watcher where there is one and from a watch of
 * each one's folder: VS Code's git reads and runs them outside the sandbox about a second after a
 * change. What neither sees is looked at when the command ends. Returns the way to stop.
 */
export function watchUnheld(unheld: readonly NamedByConfig[], watch: WatchGit | undefined, writeFolders: readonly string[], made: (named: NamedByConfig) => void): () => void {
  if (unheld.length === 0) return () => undefined;
  const byPath = new Map(unheld.map((named) => [named.path, named]));
  const seen = (path: string): void => {
    const named = byPath.get(path);
    if (named !== undefined && entryNow(named.path) !== undefined) made(named);
  };
  const watchers: FSWatcher[] = [];
  for (const folder of new Set(unheld.map((named) => nodePath.dirname(named.path)))) {
    const watcher = watchWhileRunning(folder, (name) => { if (name !== null) seen(nodePath.join(folder, name)); });
    if (watcher !== undefined) watchers.push(watcher);
  }
  const subscription = watch?.(writeFolders, seen);
  return () => {
    subscription?.dispose();
    for (const watcher of watchers) watcher.close();
  };
}

/** Those of `unheld` that exist now: made by the command, since they did not exist when it started. */
export const madeUnheld = (unheld: readonly NamedByConfig[]): NamedByConfig[] => unheld.filter((named) => entryNow(named.path) !== undefined);
