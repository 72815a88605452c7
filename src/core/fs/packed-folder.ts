import { lstatSync } from 'node:fs';
import type { EntryType, PackedFolder, SizedDirEntry } from '../ports.ts';

const TYPES: readonly EntryType[] = ['directory', 'file', 'symlink', 'other'];
const CODES: Readonly<Record<EntryType, string>> = { directory: '0', file: '1', symlink: '2', other: '3' };

/** What an entry (a Dirent, or the Stats of an lstat) is; a link is never followed. */
export function entryTypeOf(entry: { isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean }): EntryType {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  return 'other';
}

/** The lstat size of a path, undefined if it cannot be stat'ed. */
export function lstatSizeOf(path: string): number | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
}

/** One entry as PackedFolder holds it: its type's code, its size if it has one, a slash, its name (a name holds no slash). */
export function packEntry(type: EntryType, size: number | undefined, name: string): string {
  return `${CODES[type]}${size ?? ''}/${name}`;
}

/** Packs a folder's entries (see PackedFolder); a folder's size is not kept. */
export function packFolder(entries: readonly SizedDirEntry[]): PackedFolder {
  return { text: entries.map((e) => packEntry(e.type, e.type === 'directory' ? undefined : e.size, e.name)).join('\0') };
}

export function unpackFolder({ text }: PackedFolder): SizedDirEntry[] {
  if (text === '') return [];
  return text.split('\0').map((packed) => {
    const type = TYPES[packed.charCodeAt(0) - 48]!;
    const slash = packed.indexOf('/');
    const name = packed.slice(slash + 1);
    return slash > 1 ? { name, type, size: Number(packed.slice(1, slash)) } : { name, type };
  });
}

/** A folder a worker thread is asked to read, and what it answers: the folder packed, or why it could not be read. */
export interface FolderRequest { readonly id: number; readonly folder: string }
export type FolderReply =
  | { readonly id: number; readonly folder: PackedFolder }
  | { readonly id: number; readonly error: { readonly code?: string; readonly message: string } };
