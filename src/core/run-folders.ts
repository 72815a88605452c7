import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { errnoCode } from './errors.ts';

/** Whether a process with this id exists (a run folder named after a dead one is stale). */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    // EPERM: it exists but belongs to someone else.
    return errnoCode(e) === 'EPERM';
  }
}

/**
 * Crash cleanup: removes the folders in `dir` named `<prefix><pid>-…` that this user owns and whose
 * process no longer exists (it was killed, or crashed, before it could remove its own). A folder
 * whose process id was reused waits for a later sweep. Resolves to the number of folders removed.
 */
export async function removeDeadRunFolders(dir: string, prefix: string): Promise<number> {
  const uid = process.getuid?.();
  let removed = 0;
  for (const name of await fsp.readdir(dir)) {
    if (!name.startsWith(prefix)) continue;
    const pid = /^(\d+)-/.exec(name.slice(prefix.length))?.[1];
    if (pid === undefined || Number(pid) === process.pid || processAlive(Number(pid))) continue;
    const path = nodePath.join(dir, name);
    const stat = await fsp.lstat(path).catch(() => undefined);
    if (!stat?.isDirectory() || (uid !== undefined && stat.uid !== uid)) continue;
    await fsp.rm(path, { recursive: true, force: true });
    removed++;
  }
  return removed;
}

/**
 * A folder for this process alone under `parent` (the system temp folder): `<prefix><pid>-XXXXXX`,
 * made by mkdtemp (a fresh random name, mode 0700), after removing those of processes that died.
 * Security: never a fixed shared name such as /tmp/artifacts, which another local user can create
 * first (then own it and read, swap or plant what is spooled there), or read when it is ours.
 */
export async function privateRunFolder(parent: string, prefix: string): Promise<string> {
  await removeDeadRunFolders(parent, prefix);
  return fsp.mkdtemp(nodePath.join(parent, `${prefix}${process.pid}-`));
}
