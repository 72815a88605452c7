import { SandboxError, fromFsError, refused, errnoCode } from '../errors.ts';
import type { ResolvedPath } from '../paths.ts';
import type { FileStat, WorkspaceFs } from '../ports.ts';

/** A checked file, open for reading. */
export interface OpenedFile {
  /** Where to read its bytes: the pinned file, or (where the backend cannot pin) its path. */
  readonly address: string;
  /** Its stat when it was opened, when pinned. */
  readonly stat: FileStat | undefined;
  release(): Promise<void>;
}

/**
 * Security: the path was checked (policy, links) by name; opening it again by name lets a process
 * that swaps it for a link meanwhile make the read return another file. So the file is opened where
 * the check found it (the real path, one component at a time, no link followed), and must be the
 * very file the check saw (same device and inode); the bytes are then read from that open file.
 */
export async function openChecked(fs: WorkspaceFs, resolved: ResolvedPath): Promise<OpenedFile> {
  const unpinned: OpenedFile = { address: resolved.address, stat: undefined, release: async () => {} };
  if (!fs.openPinned || resolved.realRoot === undefined || resolved.realRel === '') return unpinned;
  let pinned;
  try {
    pinned = await fs.openPinned(resolved.realRoot, resolved.realRel.split('/'));
  } catch (e) {
    const code = errnoCode(e);
    if (code === 'ELOOP' || code === 'ENOTDIR') {
      throw refused(
        `"${resolved.display}" was refused: it, or a folder on its path, became a symbolic link while it was being opened, so what was checked is not what would be read.`,
        `Call again; if it keeps changing, tell the user.`,
      );
    }
    throw fromFsError(e, resolved.display, 'open');
  }
  if (!pinned) return unpinned;
  const checked = resolved.checked;
  if (
    checked?.ino !== undefined &&
    checked.dev !== undefined &&
    (pinned.stat.ino !== checked.ino || pinned.stat.dev !== checked.dev)
  ) {
    await pinned.release();
    throw new SandboxError(
      'E_SANDBOX_CONFLICT',
      `"${resolved.display}" was replaced by another file while it was being opened, so what was checked is not what would be read; nothing was read.`,
      `Call again.`,
    );
  }
  return pinned;
}
