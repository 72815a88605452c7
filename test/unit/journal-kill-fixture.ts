import { chmodSync, existsSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';

/* The workspace of journal-kill.test.ts and its child: a set of three rewrites, a delete and a move. */

export const SET_FILES = {
  written: ['a.txt', 'b.txt', 'c.txt'],
  deleted: 'd.sh',
  moved: { from: 'e.txt', to: 'f.txt' },
} as const;

/** Large enough that each write is a real write, small enough for a shared machine. */
const SIZE = 1024 * 1024;

export const OLD = (name: string): string => `old ${name}\n${'o'.repeat(SIZE)}\n`;
export const NEW = (name: string): string => `new ${name}\n${'n'.repeat(SIZE)}\n`;

export function writeOld(root: string): void {
  for (const name of SET_FILES.written) {
    writeFileSync(nodePath.join(root, name), OLD(name));
    chmodSync(nodePath.join(root, name), 0o644);
  }
  writeFileSync(nodePath.join(root, SET_FILES.deleted), OLD(SET_FILES.deleted));
  chmodSync(nodePath.join(root, SET_FILES.deleted), 0o755);
  writeFileSync(nodePath.join(root, SET_FILES.moved.from), OLD(SET_FILES.moved.from));
  chmodSync(nodePath.join(root, SET_FILES.moved.from), 0o600);
}

/** Each path of the set: what it holds (`old`, `new`, `absent`, or `other` for anything else) and its mode. */
export function standing(root: string): Record<string, string> {
  const at = (name: string): string => {
    const path = nodePath.join(root, name);
    if (!existsSync(path)) return 'absent';
    const text = readFileSync(path, 'utf8');
    const mode = (statSync(path).mode & 0o777).toString(8);
    // The moved file is new where it lands, with the source's bytes.
    if (name === SET_FILES.moved.to) return `${text === OLD(SET_FILES.moved.from) ? 'new' : 'other'} ${mode}`;
    return `${text === OLD(name) ? 'old' : text === NEW(name) ? 'new' : 'other'} ${mode}`;
  };
  return Object.fromEntries(
    [...SET_FILES.written, SET_FILES.deleted, SET_FILES.moved.from, SET_FILES.moved.to].map((n) => [n, at(n)]),
  );
}

/** The workspace before the set. */
export const ALL_OLD = {
  'a.txt': 'old 644',
  'b.txt': 'old 644',
  'c.txt': 'old 644',
  'd.sh': 'old 755',
  'e.txt': 'old 600',
  'f.txt': 'absent',
};
/** The workspace after the set (the moved file keeps its mode). */
export const ALL_NEW = {
  'a.txt': 'new 644',
  'b.txt': 'new 644',
  'c.txt': 'new 644',
  'd.sh': 'absent',
  'e.txt': 'absent',
  'f.txt': 'new 600',
};
