import { lstatSync } from 'node:fs';
import { sep } from 'node:path';
import type { EntryType, PackedFolder, SizedDirEntry } from '../ports.ts';

const TYPES: readonly EntryType[] = ['directory', 'file', 'symlink', 'other'];
const CODES: Readonly<Record<EntryType, string>> = { directory: '0', file: '1', symlink: '2', other: '3' };

/** What an entry (a Dirent, or the Stats of an lstat) is; a link is never followed. */
export function entryTypeOf(entry: {
  isFile(): boolean;
  isDirectory(): boolean;
  isSymbolicLink(): boolean;
}): EntryType {
  if (entry.isSymbolicLink()) return 'symlink';
  if (entry.isFile()) return 'file';
  if (entry.isDirectory()) return 'directory';
  return 'other';
}

/** The lstat size of a path, undefined if it cannot be stat'ed. */
function lstatSizeOf(path: string): number | undefined {
  try {
    return lstatSync(path, { throwIfNoEntry: false })?.size;
  } catch {
    return undefined;
  }
}

/** One entry as PackedFolder holds it: its type's code, its size if it has one, a slash, its name (a name holds no slash). */
function packEntry(type: EntryType, size: number | undefined, name: string): string {
  return `${CODES[type]}${size ?? ''}/${name}`;
}

/** A directory entry just read in the folder `prefix` (its path and a slash), packed with its lstat size. */
export function packDirent(
  prefix: string,
  dirent: { readonly name: string; isFile(): boolean; isDirectory(): boolean; isSymbolicLink(): boolean },
): string {
  const type = entryTypeOf(dirent);
  return packEntry(type, type === 'directory' ? undefined : lstatSizeOf(prefix + dirent.name), dirent.name);
}

/** The folder's path with a slash after it, for `packDirent`: the folder is one the listing resolved, so a name is appended, never normalized. */
export function folderPrefix(folder: string): string {
  return folder.endsWith('/') || folder.endsWith(sep) ? folder : `${folder}${sep}`;
}

/** Packs a folder's entries (see PackedFolder); a folder's size is not kept. */
export function packFolder(entries: readonly SizedDirEntry[]): PackedFolder {
  return {
    text: entries.map((e) => packEntry(e.type, e.type === 'directory' ? undefined : e.size, e.name)).join('\0'),
  };
}

/*
 * An unpacked entry is made by a constructor, not an object literal: a literal's allocation site can
 * be pretenured by V8 once the folders held around a listing survive a few GCs (a links walk just
 * before it was enough), and every entry of the listing was then made in old space with its name
 * (`list_directory` of 300,000 files grew ~110 MiB instead of ~20). A constructor has no allocation site.
 */
class Unpacked implements SizedDirEntry {
  readonly name: string;
  readonly type: EntryType;
  constructor(name: string, type: EntryType) {
    this.name = name;
    this.type = type;
  }
}

class UnpackedSized implements SizedDirEntry {
  readonly name: string;
  readonly type: EntryType;
  readonly size: number;
  constructor(name: string, type: EntryType, size: number) {
    this.name = name;
    this.type = type;
    this.size = size;
  }
}

export function unpackFolder({ text }: PackedFolder): SizedDirEntry[] {
  const entries: SizedDirEntry[] = [];
  // Read in place (no string per packed entry): a listing unpacks every entry of a tree.
  for (let start = 0; start < text.length;) {
    const nul = text.indexOf('\0', start);
    const end = nul === -1 ? text.length : nul;
    const type = TYPES[text.charCodeAt(start) - 48]!;
    const slash = text.indexOf('/', start);
    const name = text.slice(slash + 1, end);
    entries.push(
      slash > start + 1
        ? new UnpackedSized(name, type, Number(text.slice(start + 1, slash)))
        : new Unpacked(name, type),
    );
    start = end + 1;
  }
  return entries;
}

/** A folder a worker thread is asked to read, and what it answers: the folder packed, or why it could not be read. */
export interface FolderRequest {
  readonly id: number;
  readonly folder: string;
}
export type FolderReply =
  | { readonly id: number; readonly folder: PackedFolder }
  | { readonly id: number; readonly error: { readonly code?: string; readonly message: string } };
