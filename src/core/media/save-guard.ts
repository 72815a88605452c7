import type { ModelPath } from '../paths.ts';
import { pathKey } from './types.ts';
import { checkWriteRoots, type WriteRoots } from './write-roots.ts';

/** What save_media and undo_save check before they touch a file: the write roots, and one save of a file at a time. */
export class SaveGuard {
  /** Where saves may write, read on every save. Absent or undefined: anywhere in the workspace folders. */
  private readonly writeRoots: (() => WriteRoots) | undefined;
  /** The save in progress per file, so two saves of one file never interleave their check and write. */
  private readonly saving = new Map<string, Promise<unknown>>();

  constructor(writeRoots?: () => WriteRoots) {
    this.writeRoots = writeRoots;
  }

  /** The write roots in force now (undefined: every workspace folder). */
  current(): WriteRoots {
    return this.writeRoots?.();
  }

  /** Refuses a save target outside the host's write roots (narrated E_SANDBOX_REFUSED); pure. */
  checkWriteRoot(target: ModelPath): void {
    checkWriteRoots(target, this.writeRoots?.());
  }

  /**
   * Runs `fn` once every earlier `exclusive` call for the same file has settled. Security: without
   * it, two saves could both pass the conflict check and the second would silently drop the first.
   */
  async exclusive<T>(path: ModelPath, fn: () => Promise<T>): Promise<T> {
    const key = pathKey(path);
    const before = this.saving.get(key) ?? Promise.resolve();
    const run = before.then(fn, fn);
    const settled = run.then(
      () => undefined,
      () => undefined,
    );
    this.saving.set(key, settled);
    try {
      return await run;
    } finally {
      if (this.saving.get(key) === settled) this.saving.delete(key);
    }
  }
}
