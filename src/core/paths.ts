import { SandboxError, refused, fromFsError, errnoCode, type Narration } from './errors.ts';
import { VSCODE_VOCABULARY } from './vocabulary.ts';
import type { FileStat, WorkspaceFs } from './ports.ts';
import * as nodePath from 'node:path';

export interface WorkspaceRoot {
  /** The folder's name, the first path segment in a multi-root workspace. */
  readonly name: string;
  /** The backend's address of the folder (a path for node fs, a URI string for VS Code). */
  readonly address: string;
  /** The folder's local filesystem path, when it has one (absolute model paths are mapped with it). */
  readonly localPath?: string;
}

/**
 * Security: folder names address the folders (and name them in confirmations), so they must be
 * distinct: two folders named "app" become "app" and "app (2)", and a later "app (2)" becomes "app (2) (2)".
 */
export function withDistinctNames<T extends { readonly name: string }>(roots: readonly T[]): T[] {
  const taken = new Set<string>();
  return roots.map((root) => {
    let name = root.name;
    for (let n = 2; taken.has(name); n++) name = `${root.name} (${n})`;
    taken.add(name);
    return name === root.name ? root : { ...root, name };
  });
}

/** A place in the workspace: the folder that holds it and its path there ('/'-separated, '' for the folder itself). */
export interface RootPlace {
  readonly root: WorkspaceRoot;
  readonly rel: string;
}

/** Separators of absolute paths and addresses here: "/" everywhere, and "\\" where the platform's paths use it. */
const SEPARATORS = nodePath.sep === '\\' ? /[\\/]/ : /\//;

/**
 * The one mapping from an absolute path (or a host's address) to a place in the workspace, shared by
 * the model's absolute paths, the shell's change set and the files a host reports. Nested folders
 * resolve to the deepest folder holding the path, whatever the folders' order: every caller gives
 * one file one model path (one policy decision, one media). `locate` says what a folder is found
 * by: its local path (the default) or its host address. Lexical only: ".." and "." segments are
 * kept for the caller to judge, never resolved.
 */
export function placeOf(
  path: string,
  roots: readonly WorkspaceRoot[],
  locate: (root: WorkspaceRoot) => string | undefined = (root) => root.localPath,
): RootPlace | undefined {
  let best: { readonly root: WorkspaceRoot; readonly base: string } | undefined;
  for (const root of roots) {
    const at = locate(root);
    if (at === undefined) continue;
    let base = at;
    while (base.length > 0 && SEPARATORS.test(base.at(-1)!)) base = base.slice(0, -1);
    if (path !== base && !(path.startsWith(base) && SEPARATORS.test(path.charAt(base.length)))) continue;
    if (best === undefined || base.length > best.base.length) best = { root, base };
  }
  return best && { root: best.root, rel: path.slice(best.base.length).split(SEPARATORS).filter(Boolean).join('/') };
}

/** A model path after the pure, lexical checks: no I/O has happened yet. */
export interface ModelPath {
  readonly root: WorkspaceRoot;
  /** Relative to the root, "/"-separated, no "." or ".." segments; "" is the root itself. */
  readonly rel: string;
  /** How the model and the person see it: `rel`, prefixed with the folder name in multi-root. */
  readonly display: string;
}

declare const gatedBrand: unique symbol;
declare const resolvedBrand: unique symbol;

/** A model path the gate approved for this call. Only the call pipeline makes one (after the gate said yes). */
export type GatedPath = ModelPath & { readonly [gatedBrand]: true };

/**
 * A backend address reached through a gated path resolved on disk, or below one (an entry of a
 * listed folder, a temp file beside a saved one). Only `resolveOnDisk` and `resolvedFs` make one,
 * so a tool cannot hand the filesystem an address of its own making.
 */
export type ResolvedAddress = string & { readonly [resolvedBrand]: true };

/** A gated model path checked on disk. */
export interface ResolvedPath extends ModelPath {
  readonly address: ResolvedAddress;
  readonly exists: boolean;
  /** Where the path really leads, relative to the root's real location (differs from `rel` through symlinks). */
  readonly realRel: string;
  /** The root's real location (symlinks resolved), where the backend has one. */
  readonly realRoot?: string;
  /** What the path led to when it was checked (the link's target for a link), where the backend says. */
  readonly checked?: FileStat;
}

const MAX_PATH_CHARS = 4096;
const MAX_SEGMENT_BYTES = 255;
const MAX_SEGMENTS = 256;
// Security: characters that render like "." "/" or "\" and would let a path read as something else to the person.
const LOOKALIKES =
  /[\u2024\u2025\u2026\uFE52\uFF0E\u2215\u2044\u2571\uFF0F\u29F8\uFF3C\u29F5\u2216\uFE68\u3002\uFF61]/u;
// Security: invisible, bidi-control and blank characters make a path display differently from what it
// opens: every default-ignorable code point (joiners, fillers such as U+3164, variation selectors, tag
// characters), line and paragraph separators, and every space but U+0020 (and the blank braille cell).
const INVISIBLE = /[\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Zl}\p{Zp}\u2800]|(?! )\p{Zs}/u;
// Security: on Windows "name:stream" and "name::$DATA" open an alternate data stream of "name", or the
// file itself: another spelling of a name the rules judge (CVE-2019-1352's class). Refused everywhere,
// like the device names, so a path means the same on every host.
const STREAM_SYNTAX = /:/;
// Security: an 8.3 short name ("ENV~1", "VSCODE~1", "PACKAG~1.JSO") is another spelling of a long name on Windows.
const SHORT_NAME = /^[^.]{1,7}~[0-9]{1,6}(\.[^.]{0,3})?$/;
// eslint-disable-next-line no-control-regex
const CONTROL = /[\u0000-\u001F\u007F-\u009F]/u;
// Security: percent-escapes of separators, dots, "%", control bytes and any non-ASCII byte (overlong
// UTF-8 forms of "." and "/" such as %c0%ae among them). Paths are never decoded, so these only
// serve to confuse whoever reads the path.
const PERCENT_ENCODED_SUSPICIOUS = /%(2e|2f|5c|25|[01][0-9a-f]|7f|[89a-f][0-9a-f])/i;
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[0-9¹²³]|lpt[0-9¹²³]|conin\$|conout\$)(\..*)?$/i;
// A scheme and a slash ("file:///x", "staged:/x"); "name:stream" is refused by its segment as a stream.
const URI_SCHEME = /^[a-z][a-z0-9+.-]+:\//i;

function refuse(
  raw: string,
  why: string,
  next = 'Give a path relative to the workspace folder, such as "src/index.ts".',
): SandboxError {
  return refused(`Path ${JSON.stringify(raw)} was refused: ${why}.`, next);
}

function folderList(roots: readonly WorkspaceRoot[]): string {
  return roots.map((r) => `"${r.name}"`).join(', ');
}

/**
 * Pure lexical translation of a model path. Refuses every form that could name something outside
 * the workspace or display as something other than what it opens.
 */
export function normalizeModelPath(
  raw: string,
  roots: readonly WorkspaceRoot[],
  noFolder: () => Narration = VSCODE_VOCABULARY.noFolder,
): ModelPath {
  if (roots.length === 0) {
    const { what, next } = noFolder();
    throw new SandboxError('E_SANDBOX_NOT_FOUND', what, next);
  }
  if (raw.length > MAX_PATH_CHARS)
    throw refuse(raw.slice(0, 80) + '…', `it is ${raw.length} characters long, over the limit of ${MAX_PATH_CHARS}`);
  if (raw.includes('\0')) throw refuse(raw, 'it contains a NUL byte');
  if (CONTROL.test(raw)) throw refuse(raw, 'it contains a control character');
  if (INVISIBLE.test(raw))
    throw refuse(
      raw,
      'it contains an invisible or text-direction character that would make it display differently from what it opens',
    );
  if (LOOKALIKES.test(raw))
    throw refuse(raw, 'it contains a character that looks like ".", "/" or "\\" but is not one');
  if (raw.startsWith('~')) throw refuse(raw, 'home-directory paths ("~") are outside the workspace');
  if (/^[a-z]:/i.test(raw)) throw refuse(raw, 'it is a Windows drive path');
  if (raw.includes('\\'))
    throw refuse(
      raw,
      'it contains a backslash; UNC paths and "\\" separators are not accepted',
      'Use "/" between segments, relative to the workspace folder.',
    );
  if (raw.startsWith('//')) throw refuse(raw, 'it is a network (UNC-style) path');
  if (URI_SCHEME.test(raw)) throw refuse(raw, 'URIs are not accepted');
  if (PERCENT_ENCODED_SUSPICIOUS.test(raw))
    throw refuse(
      raw,
      'it contains a percent-encoded ".", "/", "\\", "%", control or non-ASCII byte; paths are taken literally and never decoded',
    );
  const separatorsOf = (s: string): string => s.replace(/[^./\\]/g, '');
  if (separatorsOf(raw.normalize('NFKC')) !== separatorsOf(raw))
    throw refuse(raw, 'it contains a compatibility character that normalizes to ".", "/" or "\\"');

  let rest = raw;
  let root: WorkspaceRoot | undefined;
  if (raw.startsWith('/')) {
    const place = placeOf(raw, roots);
    if (!place) throw refuse(raw, 'it is an absolute path outside the workspace folders');
    root = place.root;
    rest = place.rel;
  }

  const segments: string[] = [];
  for (const segment of rest.split('/')) {
    if (segment === '' || segment === '.') continue;
    if (segment === '..') throw refuse(raw, 'it contains a ".." segment');
    if (Buffer.byteLength(segment) > MAX_SEGMENT_BYTES)
      throw refuse(raw, `a segment is longer than ${MAX_SEGMENT_BYTES} bytes`);
    if (/[. ]$/.test(segment))
      throw refuse(raw, `the segment "${segment}" ends with a dot or a space, which some filesystems silently strip`);
    if (WINDOWS_DEVICE.test(segment)) throw refuse(raw, `"${segment}" is a reserved device name`);
    if (STREAM_SYNTAX.test(segment))
      throw refuse(
        raw,
        `the segment "${segment}" contains ":", which names an alternate data stream (another spelling of a file) on Windows`,
        'Give the file\'s plain name, without ":".',
      );
    if (SHORT_NAME.test(segment))
      throw refuse(
        raw,
        `"${segment}" has the form of a Windows 8.3 short name ("NAME~1"), another spelling of a longer name`,
        "Give the file's full name, as list_directory shows it.",
      );
    segments.push(segment);
  }

  if (segments.length > MAX_SEGMENTS)
    throw refuse(raw.slice(0, 80) + '…', `it is ${segments.length} folders deep, over the limit of ${MAX_SEGMENTS}`);
  if (!root) {
    if (roots.length === 1) {
      root = roots[0]!;
    } else {
      const first = segments.shift();
      root = roots.find((r) => r.name === first);
      if (!root)
        throw new SandboxError(
          'E_SANDBOX_INVALID_INPUT',
          `Path ${JSON.stringify(raw)} does not start with a workspace folder name. This workspace has several folders (${folderList(roots)}): start the path with one of them, e.g. "${roots[0]!.name}/src".`,
          '',
        );
    }
  }
  const rel = segments.join('/');
  return { root, rel, display: displayOf(root.name, rel, roots.length > 1) };
}

/**
 * How the model and the person see a path, and the one place it is built: `rel` ("." for the folder
 * itself), prefixed with the folder's name when the workspace has several folders. Folder names are
 * distinct (see `withDistinctNames`), so two folders of the same name never share a display path.
 */
export function displayOf(folderName: string | undefined, rel: string, multiRoot: boolean): string {
  if (!multiRoot || folderName === undefined || folderName === '') return rel === '' ? '.' : rel;
  return rel === '' ? folderName : `${folderName}/${rel}`;
}

export function isWithin(parent: string, child: string): boolean {
  if (child === parent) return true;
  const base = parent.endsWith('/') ? parent : parent + '/';
  return child.startsWith(base);
}

function relativeTo(parent: string, child: string): string {
  if (child === parent) return '';
  return child.slice((parent.endsWith('/') ? parent : parent + '/').length);
}

/** The pipeline's I/O step of path translation for one of a call's gated targets (`CallContext.resolve`). */
export type ResolveGated = (path: GatedPath, options?: ResolveOptions) => Promise<ResolvedPath>;

export interface ResolveOptions {
  /** Security: writes refuse any symlinked component, even one that stays inside the root. */
  readonly forWrite?: boolean;
  /** The path's last component may itself be a symbolic link, which is the subject (a link an undo removes): never followed. */
  readonly linkAtEnd?: boolean;
}

/**
 * The one I/O step of path translation, for a path the gate approved: walks each component with lstat and refuses links that
 * dangle, loop or leave the root (and, for writes, any link at all).
 */
export async function resolveOnDisk(
  path: GatedPath,
  fs: WorkspaceFs,
  options: ResolveOptions = {},
): Promise<ResolvedPath> {
  const segments = path.rel === '' ? [] : path.rel.split('/');
  // The one place a path's address is made: from a gated path.
  const address = fs.join(path.root.address, ...segments) as ResolvedAddress;
  if (!fs.capabilities.symlinks) {
    let exists = true;
    try {
      await fs.stat(address);
    } catch (e) {
      if (!['ENOENT', 'FileNotFound'].includes(errnoCode(e))) throw fromFsError(e, path.display, 'inspect');
      exists = false;
    }
    return { ...path, address, exists, realRel: path.rel };
  }
  let rootReal: string;
  try {
    rootReal = await fs.realpath(path.root.address);
  } catch (e) {
    throw fromFsError(e, path.root.name, 'open the workspace folder');
  }

  let current = path.root.address;
  let currentReal = rootReal;
  let checked: FileStat | undefined;
  for (let i = 0; i < segments.length; i++) {
    current = fs.join(current, segments[i]!);
    let type: string;
    try {
      checked = await fs.lstat(current);
      type = checked.type;
    } catch (e) {
      const code = errnoCode(e);
      if (code === 'ENOENT') {
        const tail = segments.slice(i).join('/');
        return {
          ...path,
          address,
          exists: false,
          realRel: [relativeTo(rootReal, currentReal), tail].filter(Boolean).join('/'),
          realRoot: rootReal,
        };
      }
      if (code === 'ENOTDIR')
        throw new SandboxError(
          'E_SANDBOX_NOT_FOUND',
          `"${path.display}" does not exist: "${segments.slice(0, i).join('/')}" is a file, not a folder.`,
          `Check the path with list_directory.`,
        );
      throw fromFsError(e, path.display, 'inspect');
    }
    if (type === 'symlink' && options.linkAtEnd === true && i === segments.length - 1) {
      currentReal = currentReal + '/' + segments[i]!;
    } else if (type === 'symlink') {
      const shown = segments.slice(0, i + 1).join('/');
      if (options.forWrite)
        throw refuse(
          path.display,
          `"${shown}" is a symbolic link, and writes never go through links`,
          'Write to the real file path instead.',
        );
      let real: string;
      try {
        real = await fs.realpath(current);
      } catch (e) {
        const code = errnoCode(e);
        if (code === 'ELOOP')
          throw refuse(path.display, `"${shown}" is a symbolic link loop`, 'Use a path without links.');
        if (code === 'ENOENT')
          throw refuse(
            path.display,
            `"${shown}" is a dangling symbolic link (its target does not exist)`,
            'Use a path without links.',
          );
        throw fromFsError(e, path.display, 'inspect');
      }
      if (!isWithin(rootReal, real))
        throw refuse(
          path.display,
          `"${shown}" is a symbolic link that leads outside the workspace folder`,
          'Only files inside the workspace can be used.',
        );
      currentReal = real;
      if (i === segments.length - 1)
        checked = await fs.stat(real).catch((e: unknown) => {
          throw fromFsError(e, path.display, 'inspect');
        });
    } else {
      currentReal = currentReal + '/' + segments[i]!;
    }
  }
  return {
    ...path,
    address,
    exists: true,
    realRel: relativeTo(rootReal, currentReal),
    realRoot: rootReal,
    ...(checked && segments.length > 0 ? { checked } : {}),
  };
}
