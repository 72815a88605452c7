import { spawn } from 'node:child_process';
import { chmod, lstat, mkdir, mkdtemp, readdir, realpath, rm, stat, writeFile } from 'node:fs/promises';
import * as nodePath from 'node:path';
import { errnoCode } from '../errors.ts';
import { isWithin } from '../paths.ts';

/**
 * The copy-on-write layer a command writes through (Linux: unprivileged overlayfs in a mount
 * namespace of its own, the sandbox started inside it). Nothing the command writes exists on disk
 * while it runs: every write lands in the folder's upper layer, which is read as a change set when
 * the command has ended (`readUpper`).
 */
export interface Layer {
  readonly folders: readonly LayerFolder[];
  /** The sandbox's argv, run inside the namespace once the layers are mounted over their folders. */
  wrap(argv: readonly string[]): string[];
}

export interface LayerFolder {
  /** The workspace folder (a write root), as the command sees it. */
  readonly lower: string;
  /** Where what the command wrote there lands. */
  readonly upper: string;
  /** overlayfs's own scratch folder (same filesystem as `upper`). */
  readonly work: string;
}

/** Mounts each folder's layer over it (the arguments come in threes after the count), then runs the rest. */
const MOUNT_SCRIPT = [
  'n=$1; shift',
  'while [ "$n" -gt 0 ]; do',
  '  mount -t overlay overlay -o "lowerdir=$1,upperdir=$2,workdir=$3,userxattr" "$1" || { echo "workspace-tools: the copy-on-write layer could not be mounted over $1" >&2; exit 125; }',
  '  shift 3; n=$((n-1))',
  'done',
  // The sandbox runs as the person's own user id, without the namespace's capabilities (it makes
  // user namespaces of its own, which a capable or remapped parent would not let it map).
  'exec setpriv --inh-caps=-all --ambient-caps=-all -- "$@"',
].join('\n');

/** overlayfs reads `,` and `:` in its options as separators, and `\` as an escape: such a folder cannot be layered. */
const UNLAYERABLE = /[,:\\\n]/;

/** The outermost of nested folders: the layer over a folder covers every folder below it. */
function outermost(folders: readonly string[]): string[] {
  const sorted = [...new Set(folders)].sort((a, b) => a.length - b.length);
  return sorted.filter((f, i) => !sorted.slice(0, i).some((outer) => f.startsWith(`${outer}${nodePath.sep}`)));
}

/**
 * Makes the layers of one command under its private temp folder (mode 0700: only this user reads
 * them), or, for a folder on another filesystem than that, under `near()` when that one shares the
 * folder's (the workspace's state folder, where the temp folder is a tmpfs): a new folder the command
 * makes then lands by one rename rather than a copy of every file.
 */
export async function makeLayer(
  callTemp: string,
  writeFolders: readonly string[],
  near?: () => Promise<string | undefined>,
): Promise<Layer> {
  const folders: LayerFolder[] = [];
  for (const [i, lower] of outermost(writeFolders).entries()) {
    if (UNLAYERABLE.test(lower))
      throw new Error(`the folder ${lower} has a character overlayfs cannot take in its path (",", ":" or "\\")`);
    const made = async (base: string): Promise<LayerFolder> => {
      const upper = nodePath.join(base, 'layers', String(i), 'upper');
      const work = nodePath.join(base, 'layers', String(i), 'work');
      await mkdir(upper, { recursive: true, mode: 0o700 });
      await mkdir(work, { recursive: true, mode: 0o700 });
      return { lower, upper, work };
    };
    const base = await layerBase(lower, callTemp, writeFolders, near);
    folders.push(await (base === callTemp ? made(base) : made(base).catch(() => made(callTemp))));
  }
  return {
    folders,
    wrap: (argv) => [
      'unshare',
      '--user',
      '--map-current-user',
      '--keep-caps',
      '--mount',
      '--propagation',
      'private',
      '/bin/sh',
      '-c',
      MOUNT_SCRIPT,
      'sh',
      String(folders.length),
      ...folders.flatMap((f) => [f.lower, f.upper, f.work]),
      ...argv,
    ],
  };
}

const deviceOf = (path: string): Promise<number | undefined> =>
  stat(path).then(
    (st) => st.dev,
    () => undefined,
  );

/**
 * Where the layer of `lower` is made: the call's folder, unless only `near()` is on the same
 * filesystem as `lower`, and `near()` is neither inside a folder the command writes nor holds one
 * (overlayfs would see its own upper layer), nor has a character overlayfs cannot take.
 */
async function layerBase(
  lower: string,
  callTemp: string,
  writeFolders: readonly string[],
  near: (() => Promise<string | undefined>) | undefined,
): Promise<string> {
  const device = await deviceOf(lower);
  if (near === undefined || device === undefined || (await deviceOf(callTemp)) === device) return callTemp;
  const other = await near();
  if (other === undefined || UNLAYERABLE.test(other) || (await deviceOf(other)) !== device) return callTemp;
  const real = await realpath(other).catch(() => undefined);
  const folders = await Promise.all(writeFolders.map((f) => realpath(f).catch(() => f)));
  return real === undefined || folders.some((f) => isWithin(f, real) || isWithin(real, f)) ? callTemp : other;
}

/** A layer folder's name: the host and process that made it, and mkdtemp's six characters. */
const LAYER_FOLDER = /^(.+)-(\d+)-[A-Za-z0-9]{6}$/;

/**
 * A private folder (0700) for one call's layers below `root`, named after this host and process:
 * first, what the calls of this host's processes that have ended left there (a host killed
 * mid-command) is removed. Folders of other hosts (a home shared over the network) are left alone.
 */
export async function callLayerFolder(
  root: string,
  owner: { readonly host: string; readonly pid: number },
): Promise<string> {
  await mkdir(root, { recursive: true, mode: 0o700 });
  for (const name of await readdir(root)) {
    const [, host, pid] = LAYER_FOLDER.exec(name) ?? [];
    if (host !== owner.host || pid === undefined || Number(pid) === owner.pid || isRunning(Number(pid))) continue;
    await removeLeftover(nodePath.join(root, name)).catch(() => undefined);
  }
  return mkdtemp(nodePath.join(root, `${owner.host}-${owner.pid}-`));
}

/** Removes a layer folder a killed host left: overlayfs leaves its scratch folder mode 000, so folders are opened up first (never through a link). */
async function removeLeftover(path: string): Promise<void> {
  if (!(await lstat(path)).isDirectory()) return;
  const openUp = async (dir: string): Promise<void> => {
    await chmod(dir, 0o700);
    for (const entry of await readdir(dir, { withFileTypes: true }))
      if (entry.isDirectory()) await openUp(nodePath.join(dir, entry.name));
  };
  await openUp(path);
  await rm(path, { recursive: true, force: true });
}

function isRunning(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return errnoCode(e) === 'EPERM';
  }
}

/** Runs a program to its end; resolves with its exit code and what it wrote to stdout and stderr. */
export function runToEnd(
  file: string,
  args: readonly string[],
): Promise<{ readonly code: number | null; readonly stdout: Buffer; readonly stderr: string }> {
  return new Promise((resolve) => {
    const child = spawn(file, args, { stdio: ['ignore', 'pipe', 'pipe'] });
    const out: Buffer[] = [];
    const err: Buffer[] = [];
    child.stdout.on('data', (c: Buffer) => out.push(c));
    child.stderr.on('data', (c: Buffer) => err.push(c));
    child.once('error', (e) => resolve({ code: null, stdout: Buffer.alloc(0), stderr: e.message }));
    child.once('close', (code) =>
      resolve({ code, stdout: Buffer.concat(out), stderr: Buffer.concat(err).toString('utf8') }),
    );
  });
}

/**
 * Whether this machine can layer a folder: an unprivileged user namespace that may mount overlayfs
 * (checked once by mounting one over a scratch folder). Undefined when it can, else why not.
 */
export async function layerUnavailable(tempRoot: string): Promise<string | undefined> {
  const scratch = await mkdtemp(nodePath.join(tempRoot, 'wt-layer-probe-'));
  try {
    const lower = nodePath.join(scratch, 'lower');
    await mkdir(lower);
    await writeFile(nodePath.join(lower, 'probe'), '');
    const layer = await makeLayer(scratch, [lower]);
    const probe = await runToEnd('unshare', layer.wrap(['/bin/sh', '-c', 'echo layered > "$0/probe"', lower]).slice(1));
    if (probe.code !== 0)
      return `overlayfs cannot be mounted in an unprivileged user namespace here (${probe.stderr.trim().split('\n').pop() ?? `exit ${probe.code}`})`;
    return undefined;
  } finally {
    await rm(scratch, { recursive: true, force: true }).catch(() => undefined);
  }
}

/** `layerUnavailable`, asked once: the answer does not change while the machine runs. */
export class LayerCheck {
  private answer: Promise<string | undefined> | undefined;
  /** Other folders tried for layers (a state folder on NFS or an overlayfs cannot hold one), by folder. */
  private readonly elsewhere = new Map<string, Promise<boolean>>();

  unavailable(tempRoot: string): Promise<string | undefined> {
    return (this.answer ??= layerUnavailable(tempRoot).catch(
      (e: unknown) => `the layer could not be tried (${e instanceof Error ? e.message : String(e)})`,
    ));
  }

  /** Whether layers can be made in `dir` (tried once, by mounting one there). */
  usable(dir: string): Promise<boolean> {
    let answer = this.elsewhere.get(dir);
    if (answer === undefined)
      this.elsewhere.set(
        dir,
        (answer = layerUnavailable(dir).then(
          (why) => why === undefined,
          () => false,
        )),
      );
    return answer;
  }
}

/**
 * The names below each of `dirs` (relative to the folder) as the command saw them at its end: the
 * layer mounted again, read-only, and listed. A folder of the upper layer that hides what lies
 * below it (removed and made again: overlayfs marks it opaque in an extended attribute Node cannot
 * read) shows here without the names it hid.
 */
export async function mergedNames(folder: LayerFolder, dirs: readonly string[]): Promise<Map<string, Set<string>>> {
  const names = new Map<string, Set<string>>();
  if (dirs.length === 0) return names;
  const script = [
    'mount -t overlay overlay -o "lowerdir=$2:$1,userxattr" "$1" || exit 125',
    'cd "$1" || exit 125; shift 2',
    'for d; do printf "%s\\0" "$d"; find "./$d" -mindepth 1 -maxdepth 1 -printf "%f\\0"; printf "\\0"; done',
  ].join('\n');
  const listed = await runToEnd('unshare', [
    '--user',
    '--map-root-user',
    '--mount',
    '--propagation',
    'private',
    '/bin/sh',
    '-c',
    script,
    'sh',
    folder.lower,
    folder.upper,
    ...dirs,
  ]);
  if (listed.code !== 0)
    throw new Error(
      `the command's folders could not be listed as it left them: ${listed.stderr.trim() || `exit ${listed.code}`}`,
    );
  const parts = listed.stdout.toString('utf8').split('\0');
  let at = 0;
  while (at < parts.length - 1) {
    const dir = parts[at++]!;
    const set = new Set<string>();
    while (at < parts.length && parts[at] !== '') set.add(parts[at++]!);
    at++;
    names.set(dir, set);
  }
  return names;
}
