import { createHash } from 'node:crypto';
import { promises as fsp } from 'node:fs';
import * as nodePath from 'node:path';
import { isWithin, type WorkspaceRoot } from './paths.ts';
import type { Log } from './ports.ts';

/* The workspace's own state folder: kept across sessions, shared by every host opened on the same folders. */

export interface StateHome {
  readonly home: string;
  /** XDG_STATE_HOME, where set (POSIX); LOCALAPPDATA on Windows. */
  readonly xdgStateHome?: string | undefined;
  readonly localAppData?: string | undefined;
  readonly platform: NodeJS.Platform;
}

/**
 * Where a workspace's state lives (the journal of its change sets): one folder per set of workspace
 * folders, under the user's state home (`$XDG_STATE_HOME`, else `~/.local/state`; `%LOCALAPPDATA%` on
 * Windows), so the CLI, the MCP server and VS Code opened on the same folders find each other's
 * interrupted sets. Never beside the user's files.
 */
export function workspaceStateDir(where: StateHome, folders: readonly string[]): string {
  const base =
    where.platform === 'win32'
      ? nodePath.join(where.localAppData ?? nodePath.join(where.home, 'AppData', 'Local'), 'workspace-tools')
      : nodePath.join(
          where.xdgStateHome && nodePath.isAbsolute(where.xdgStateHome)
            ? where.xdgStateHome
            : nodePath.join(where.home, '.local', 'state'),
          'workspace-tools',
        );
  const key = createHash('sha256')
    .update([...folders].sort().join('\u0000'))
    .digest('hex')
    .slice(0, 16);
  return nodePath.join(base, 'workspaces', key);
}

/**
 * Creates the state folder (0700) and checks it is this user's own real folder. Security: it holds
 * copies of workspace files, and what it holds is written back into the workspace at the next start:
 * a folder another user made (or a link planted in its place) is refused, never read or written.
 */
export async function privateStateDir(dir: string): Promise<string> {
  await fsp.mkdir(dir, { recursive: true, mode: 0o700 });
  const stat = await fsp.lstat(dir);
  const uid = process.geteuid?.();
  if (!stat.isDirectory()) throw new Error(`${dir} is not a folder (a link or a file is in its place)`);
  if (uid !== undefined && stat.uid !== uid) throw new Error(`${dir} belongs to another user (uid ${stat.uid})`);
  if (process.platform !== 'win32' && (stat.mode & 0o077) !== 0) await fsp.chmod(dir, 0o700);
  return dir;
}

/**
 * The folder a session's journal uses: the host's state folder, unless it lies inside a workspace
 * folder (or holds one); then, and without one, `fallback` (a folder of the spool, which ends with the
 * session). Security: what a journal holds is written back into the workspace at the next start
 * without asking anyone, so it must never be a place the gated tools (or a command) can write: a
 * journal planted there would be a write nobody approved.
 */
export async function journalFolder(
  dir: string | undefined,
  roots: readonly WorkspaceRoot[],
  log: Log,
  fallback: () => Promise<string>,
): Promise<string> {
  const inside =
    dir === undefined
      ? undefined
      : roots.find((r) => r.localPath !== undefined && (isWithin(r.localPath, dir) || isWithin(dir, r.localPath)));
  if (dir !== undefined && inside === undefined) return dir;
  if (inside !== undefined)
    log.warn(
      `The workspace's state folder ${dir ?? ''} is inside (or holds) the workspace folder "${inside.name}", which the tools can write, so it is not used: a change set interrupted by this process's end will not be recovered at the next start.`,
    );
  return fallback();
}
