import { spawn } from 'node:child_process';
import type { Stats } from 'node:fs';
import { lstat, readdir, readFile, readlink, unlink, utimes, writeFile } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { displayOf, type ModelPath, type WorkspaceRoot } from '../paths.ts';
import type { Policy } from '../policy.ts';
import type { MediaStore } from '../media/store.ts';
import type { MediaTaint } from '../media/types.ts';
import { plural } from '../text/format.ts';
import { writeVerdict, type ShellBoundary } from './boundary.ts';

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
}

export interface WithdrawInputs {
  readonly policy: Policy;
  readonly roots: readonly WorkspaceRoot[];
  readonly boundary: ShellBoundary;
  /** `allow_protected_writes` was confirmed: only what stays closed (secrets, denied) is withdrawn. */
  readonly allowProtectedWrites: boolean;
  /** The mark `markStart` left before the command started: files changed before it were not made by it. */
  readonly mark: string;
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
    for (const { rel, stat } of await changedSince(inputs.mark, folder)) {
      const abs = nodePath.join(folder, rel);
      if (!writable(abs) || covered(abs)) continue;
      const verdict = writeVerdict(inputs.policy.decide(rel, 'write', folder));
      if (verdict === 'open' || (verdict === 'protected' && inputs.allowProtectedWrites)) continue;
      const display = displayOf(root.name, rel, inputs.roots.length > 1);
      // A secret's name keeps its bytes protected in the media, as staging it would.
      const read = inputs.policy.decide(rel, 'read', folder);
      const taint: MediaTaint | undefined = read.action === 'ask' || read.action === 'deny' ? { from: display, rule: read.rule ?? '', action: read.action } : undefined;
      withdrawn.push(await withdraw(abs, { root, rel, display }, stat, inputs.media, taint));
    }
  }
  return withdrawn;
}

async function withdraw(abs: string, path: ModelPath, stat: Stats, media: MediaStore, taint: MediaTaint | undefined): Promise<WithdrawnFile> {
  if (stat.isSymbolicLink()) {
    const target = await readlink(abs).catch(() => '?');
    await unlink(abs);
    return { path: path.display, link: target };
  }
  let mediaId: string | undefined;
  try {
    media.ensureRoom(path.display, stat.size);
    mediaId = media.stage(path, undefined, new Uint8Array(await readFile(abs)), taint).id;
  } catch {
    mediaId = undefined;
  }
  await unlink(abs);
  return mediaId === undefined ? { path: path.display, dropped_bytes: stat.size } : { path: path.display, media_id: mediaId };
}

/**
 * A file whose time is 50 ms before the command's start: `find -cnewer` compares strictly, and
 * file-system clocks are coarse (a tick of a few ms), so a file made at once is still newer.
 */
export async function markStart(folder: string): Promise<string> {
  const mark = nodePath.join(folder, '.started');
  await writeFile(mark, '');
  const before = (Date.now() - 50) / 1000;
  await utimes(mark, before, before);
  return mark;
}

/**
 * Files and links below `folder` whose status changed after `mark`; `.git` and installed
 * dependencies left out. A name made, renamed or linked in a folder changes that folder's time, so
 * `find` (on every system the sandbox runs on) lists the folders changed since the mark, which
 * costs a stat per folder rather than per file, and only their entries are looked at. Not
 * cancellable: it runs after a cancelled command too.
 */
async function changedSince(mark: string, folder: string): Promise<Array<{ readonly rel: string; readonly stat: Stats }>> {
  const since = (await lstat(mark)).mtimeMs;
  const found: Array<{ readonly rel: string; readonly stat: Stats }> = [];
  for (const dir of await changedFolders(mark, folder)) {
    const entries = await readdir(nodePath.join(folder, dir), { withFileTypes: true }).catch(() => []);
    for (const entry of entries) {
      if (entry.isDirectory()) continue;
      const rel = dir === '' ? entry.name : `${dir}/${entry.name}`;
      const stat = await lstat(nodePath.join(folder, rel)).catch(() => undefined);
      if (stat !== undefined && (stat.isFile() || stat.isSymbolicLink()) && stat.ctimeMs > since) found.push({ rel, stat });
    }
  }
  return found;
}

function changedFolders(mark: string, folder: string): Promise<string[]> {
  const args = ['.', '(', '-path', './.git', '-o', '-name', 'node_modules', ')', '-prune', '-o', '-type', 'd', '-newer', mark, '-print0'];
  return new Promise((resolve, reject) => {
    const child = spawn('find', args, { cwd: folder, stdio: ['ignore', 'pipe', 'ignore'] });
    const chunks: Buffer[] = [];
    child.stdout.on('data', (chunk: Buffer) => chunks.push(chunk));
    child.on('error', reject);
    // find exits 1 when some folder could not be read; what it printed still stands.
    child.on('close', () => resolve(Buffer.concat(chunks).toString('utf8').split('\0').filter((p) => p !== '').map((p) => (p === '.' ? '' : p.replace(/^\.\//, '')))));
  });
}

/** The result's line about them, for the model. */
export function withdrawnLine(files: readonly WithdrawnFile[]): string | undefined {
  if (files.length === 0) return undefined;
  const each = files.map((f) => (f.media_id !== undefined ? `${f.path} (staged as ${f.media_id})` : f.link !== undefined ? `${f.path} (a link to ${f.link}, removed)` : `${f.path} (removed: ${plural(f.dropped_bytes ?? 0, 'byte')}, too large to stage)`));
  return `protected files created: ${each.join(', ')}. The sandbox keeps protected files read-only, so ${files.length === 1 ? 'this was' : 'these were'} taken out of the workspace when the command ended. If one is needed, save its media with save_media (the user is asked), or run the command again with allow_protected_writes: true; do not create it another way.`;
}
