import type { FileStat, WriteOptions } from '../ports.ts';

/* A file's mode and owner, as saves, moves, undo and the journal keep them. */

/** A file's permission bits and owner, where the backend has them: what a move, a delete's undo and a rollback give the file back. */
export interface FileMeta {
  readonly mode?: number;
  readonly uid?: number;
  readonly gid?: number;
}

/** The mode and owner of a stat, as a move carries them and an undo restores them. */
export function metaOf(stat: FileStat | undefined): FileMeta | undefined {
  if (stat === undefined || (stat.mode === undefined && stat.uid === undefined)) return undefined;
  return {
    ...(stat.mode !== undefined ? { mode: stat.mode } : {}),
    ...(stat.uid !== undefined && stat.gid !== undefined ? { uid: stat.uid, gid: stat.gid } : {}),
  };
}

/**
 * The write options that give a file `meta`. Security: setuid and setgid are never given back (bytes
 * written by a tool must not run with another's rights); the owner is set only where the process may.
 */
export function metaOptions(meta: FileMeta | undefined): Pick<WriteOptions, 'mode' | 'owner'> {
  if (meta === undefined) return {};
  return {
    ...(meta.mode !== undefined ? { mode: meta.mode & 0o1777 } : {}),
    ...(meta.uid !== undefined && meta.gid !== undefined ? { owner: { uid: meta.uid, gid: meta.gid } } : {}),
  };
}
