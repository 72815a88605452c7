import { constants, readdirSync, type Dirent, type Stats } from 'node:fs';
import { open, readdir, readlink, stat as statThroughLinks, unlink } from 'node:fs/promises';
import { entryNow } from './entry.ts';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';
import { displayOf, type ModelPath, type WorkspaceRoot } from '../paths.ts';
import type { Policy } from '../policy.ts';
import type { MediaStore } from '../media/store.ts';
import { mediaTaint } from '../media/types.ts';
import { plural } from '../text/format.ts';
import { SyncSlice } from '../sync-slice.ts';
import { writeVerdict, type ShellBoundary } from './boundary.ts';
import { changedGitControl, CONFIG_MAX, firstBytes, GIT_ENTRY, type ChangedFile } from './git-dirs.ts';
import { unsafeConfig } from './new-repos.ts';

/** A protected file a command created, taken out of the workspace when the command ended. */
export interface WithdrawnFile {
  /** As displayed. */
  readonly path: string;
  /** Where its bytes went: a staged media the person can review and save (save_media asks). */
  readonly media_id?: string;
  /** It was a symbolic link to this target (removed, nothing staged). */
  readonly link?: string;
  /** Removed without staging: too large for the staging budget, or unreadable. */
  readonly dropped_bytes?: number;
  /** It could not be removed (why): the person must look at it. */
  readonly left?: string;
}

export interface WithdrawInputs {
  readonly policy: Policy;
  readonly roots: readonly WorkspaceRoot[];
  readonly boundary: ShellBoundary;
  /** `allow_protected_writes` was confirmed: only what stays closed (secrets, denied) is withdrawn. */
  readonly allowProtectedWrites: boolean;
  /** `markStart()` taken before the command started: files changed before it were not made by it. */
  readonly since: number;
  readonly media: MediaStore;
}

/**
 * The kernel keeps protected files read-only only where they exist: a bind mount needs a file to
 * cover, and one made for every protected name that might appear would show in every listing.
 * So when a command ends, every file or link under the write roots that a write rule protects, that
 * the sandbox did not hold read-only, and that changed since the command started, was created
 * during the run: it leaves the workspace before a tool that runs such files (an editor's linter, a
 * build, CI) can. Its bytes become a staged media, so nothing is lost and saving it asks the person.
 * Installed dependencies are left alone, as the boundary leaves them writable.
 */
export async function withdrawCreatedProtected(inputs: WithdrawInputs): Promise<WithdrawnFile[]> {
  const withdrawn: WithdrawnFile[] = [];
  const covered = (abs: string): boolean => inputs.boundary.denyWrite.some((d) => abs === d || abs.startsWith(`${d}${nodePath.sep}`));
  const writable = (abs: string): boolean => inputs.boundary.allowWrite.some((w) => abs === w || abs.startsWith(`${w}${nodePath.sep}`));
  for (const root of inputs.roots) {
    const folder = root.localPath;
    if (folder === undefined || (!writable(folder) && !inputs.boundary.allowWrite.some((w) => w.startsWith(`${folder}${nodePath.sep}`)))) continue;
    const guarded = (name: string): boolean => {
      const verdict = writeVerdict(inputs.policy.decide(name, 'write', folder));
      return verdict === 'closed' || (verdict === 'protected' && !inputs.allowProtectedWrites);
    };
    for (const { rel, stat } of await changedSince(inputs.since, folder)) {
      const abs = nodePath.join(folder, rel);
      if (!writable(abs) || covered(abs)) continue;
      if (!guarded(rel) && !(stat.isSymbolicLink() && await linkGivesGuardedNames(abs, rel, guarded))) continue;
      if (await isSafeNewConfig(abs, stat, inputs.boundary)) continue;
      withdrawn.push(await withdraw(abs, modelPathOf(root, rel, inputs.roots), stat, inputs));
    }
  }
  return withdrawn;
}

/**
 * The configuration of a repository the command made (its git directory was not there when it
 * started), holding only what git init, git clone and everyday settings write (`unsafeConfig`): it
 * stays, so a clone keeps its remote. What such a configuration could name for git to run is what
 * makes it protected.
 */
async function isSafeNewConfig(abs: string, stat: Stats, boundary: ShellBoundary): Promise<boolean> {
  const gitDir = nodePath.dirname(abs);
  if (nodePath.basename(abs) !== 'config' || !stat.isFile() || stat.size > CONFIG_MAX || boundary.gitDirs.includes(gitDir) || !gitDir.split(nodePath.sep).includes(GIT_ENTRY)) return false;
  const text = await firstBytes(abs, CONFIG_MAX).catch(() => undefined);
  return text !== undefined && unsafeConfig(text) === undefined;
}

/** A file or link a command made that must not wait for it to end: taken out now, as `withdrawCreatedProtected` would. Undefined when it is gone. */
export async function withdrawNow(abs: string, inputs: Pick<WithdrawInputs, 'policy' | 'roots' | 'media'>): Promise<WithdrawnFile | undefined> {
  const path = modelPathIn(abs, inputs.roots);
  const stat = entryNow(abs);
  return path === undefined || stat === undefined ? undefined : withdraw(abs, path, stat, inputs);
}

/** A local path below a workspace folder, as the model names it; undefined when it is below none. */
export function modelPathIn(abs: string, roots: readonly WorkspaceRoot[]): ModelPath | undefined {
  const root = roots.find((r) => r.localPath !== undefined && abs.startsWith(`${r.localPath}${nodePath.sep}`));
  return root?.localPath === undefined ? undefined : modelPathOf(root, nodePath.relative(root.localPath, abs).split(nodePath.sep).join('/'), roots);
}

function modelPathOf(root: WorkspaceRoot, rel: string, roots: readonly WorkspaceRoot[]): ModelPath {
  return { root, rel, display: displayOf(root.name, rel, roots.length > 1) };
}

async function withdraw(abs: string, path: ModelPath, stat: Stats, inputs: Pick<WithdrawInputs, 'policy' | 'media'>): Promise<WithdrawnFile> {
  if (stat.isSymbolicLink()) {
    const target = await readlink(abs).catch(() => '?');
    const left = await removed(abs);
    return { path: path.display, link: target, ...(left ? { left } : {}) };
  }
  if (!stat.isFile()) {
    const left = await removed(abs);
    return { path: path.display, ...(left ? { left } : { dropped_bytes: 0 }) };
  }
  // A secret's name keeps its bytes protected in the media, as staging it would.
  const read = inputs.policy.decide(path.rel, 'read', path.root.localPath);
  const taint = mediaTaint(path.display, read.action === 'ask' || read.action === 'deny' ? { rule: read.rule ?? '', action: read.action } : undefined);
  let mediaId: string | undefined;
  try {
    mediaId = inputs.media.stage(path, undefined, await bytesOf(abs, (size) => inputs.media.ensureRoom(path.display, size)), taint).id;
  } catch {
    mediaId = undefined;
  }
  const left = await removed(abs);
  if (left) return { path: path.display, left, ...(mediaId ? { media_id: mediaId } : {}) };
  return mediaId === undefined ? { path: path.display, dropped_bytes: stat.size } : { path: path.display, media_id: mediaId };
}

/**
 * A file's bytes, checked against the staging budget first. Never through a link, and never waiting
 * on a pipe another command could have put in its place meanwhile.
 */
async function bytesOf(abs: string, ensureRoom: (size: number) => void): Promise<Uint8Array> {
  const file = await open(abs, constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK);
  try {
    const { size } = await file.stat();
    ensureRoom(size);
    const bytes = new Uint8Array(size);
    let at = 0;
    while (at < size) {
      const { bytesRead } = await file.read(bytes, at, size - at, at);
      if (bytesRead === 0) break;
      at += bytesRead;
    }
    return bytes.subarray(0, at);
  } finally {
    await file.close();
  }
}

/** Removes a file or link; undefined when it is gone, else why it is still there. */
async function removed(abs: string): Promise<string | undefined> {
  try {
    await unlink(abs);
    return undefined;
  } catch (e) {
    const code = errnoCode(e);
    return code === 'ENOENT' ? undefined : `it could not be removed (${code || String(e)})`;
  }
}

/** Entries looked at below a folder a new link points to; past it the link is taken out unchecked. */
const LINK_WALK_MAX = 5_000;

/**
 * Security: a new link to a folder gives every file in it a second name (`.github` -> `gh` makes
 * `gh/workflows/ci.yml` a workflow). True when one of those names is guarded, or when the folder is
 * too large to look through.
 */
async function linkGivesGuardedNames(abs: string, rel: string, guarded: (name: string) => boolean): Promise<boolean> {
  const target = await statThroughLinks(abs).catch(() => undefined);
  if (target === undefined || !target.isDirectory()) return false;
  let seen = 0;
  let level = [''];
  while (level.length > 0) {
    const next: string[] = [];
    for (const dir of level) {
      const entries = await readdir(nodePath.join(abs, dir), { withFileTypes: true }).catch(() => []);
      for (const entry of entries) {
        if (++seen > LINK_WALK_MAX) return true;
        const sub = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (guarded(`${rel}/${sub}`)) return true;
        if (entry.isDirectory()) next.push(sub);
      }
    }
    level = next;
  }
  return false;
}

/**
 * The command's start as file times see it: 50 ms early, since file-system clocks are coarse (a
 * tick of a few ms), so a file made at once still counts as made after it.
 */
export const markStart = (): number => Date.now() - 50;

/**
 * Files and links below `folder` whose status changed after `since`, links not followed; installed
 * dependencies left out, and of a `.git` folder only what makes git run code (`changedGitControl`).
 * A name made, renamed or linked in a folder changes that folder's times, so the walk stats folders
 * only and looks at the entries of those that changed. Synchronously, in slices (see SyncSlice;
 * a third of the time their promises took on a 20,000-file tree). Not cancellable: it runs after a
 * cancelled command too.
 */
async function changedSince(since: number, folder: string): Promise<ChangedFile[]> {
  const found: ChangedFile[] = [];
  const slice = new SyncSlice();
  let level = [''];
  while (level.length > 0) {
    const next: string[] = [];
    for (const dir of level) {
      if (slice.over) await slice.next();
      const abs = nodePath.join(folder, dir);
      const stat = entryNow(abs);
      const entries = entriesOf(abs);
      // Its ctime: a command can set a folder's mtime back (touch -d), never its ctime.
      const changed = stat !== undefined && stat.ctimeMs > since;
      for (const entry of entries) {
        const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
        if (entry.isDirectory()) {
          if (entry.name === GIT_ENTRY) found.push(...await changedGitControl(folder, rel, since));
          else if (entry.name !== 'node_modules') next.push(rel);
        } else if (changed) {
          const file = entryNow(nodePath.join(folder, rel));
          if (file !== undefined && (file.isFile() || file.isSymbolicLink()) && file.ctimeMs > since) found.push({ rel, stat: file });
        }
      }
    }
    level = next;
  }
  return found;
}

function entriesOf(dir: string): Dirent[] {
  try {
    return readdirSync(dir, { withFileTypes: true });
  } catch {
    return [];
  }
}

/** The result's line about them, for the model. */
export function withdrawnLine(files: readonly WithdrawnFile[]): string | undefined {
  if (files.length === 0) return undefined;
  const each = files.map((f) => (f.left !== undefined ? `${f.path} (STILL THERE: ${f.left}; tell the user)` : f.media_id !== undefined ? `${f.path} (staged as ${f.media_id})` : f.link !== undefined ? `${f.path} (a link to ${f.link}, removed)` : `${f.path} (removed: ${plural(f.dropped_bytes ?? 0, 'byte')}, too large to stage)`));
  return `protected files created: ${each.join(', ')}. The sandbox keeps protected files read-only, so ${files.length === 1 ? 'this was' : 'these were'} taken out of the workspace when the command ended. If one is needed, save its media with save_media (the user is asked), or run the command again with allow_protected_writes: true; do not create it another way.`;
}
