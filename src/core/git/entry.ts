import { lstatSync, type Stats } from 'node:fs';
import { lstat } from 'node:fs/promises';

/** The entry at `path` itself (a link is not followed); undefined when there is none or it cannot be looked at. */
export const entryAt = (path: string): Promise<Stats | undefined> => lstat(path).catch(() => undefined);

/** `entryAt`, at once: for a watch's callback, where a throw would end the process, and walks that must not yield. */
export function entryNow(path: string): Stats | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false });
  } catch {
    return undefined;
  }
}
