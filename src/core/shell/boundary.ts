import * as nodePath from 'node:path';
import type { Policy, PolicyDecision } from '../policy.ts';
import type { WorkspaceRoot } from '../paths.ts';
import { PROTECTED_GLOBS } from '../protected.ts';
import { GIT_ENTRY, GIT_HEAD, gitDirsOf, heldGitPaths } from './git-dirs.ts';
import { heldByConfig, type NamedByConfig, type PersonalConfig } from './git-named.ts';

/**
 * What the kernel holds a command to, as absolute local paths: the same rules the file tools are
 * judged by, turned into the OS sandbox's lists at every call (settings are live).
 */
export interface ShellBoundary {
  /** Unreadable to the command: every path a read rule marks ask or deny, credential folders in HOME, our spool. */
  readonly denyRead: readonly string[];
  /** Writable: the write roots and the call's private temp folder; everything else is read-only. */
  readonly allowWrite: readonly string[];
  /** Read-only although under a write root: protected files, `.git/hooks`, `.git/config`. */
  readonly denyWrite: readonly string[];
  /** Hosts the command may reach; empty: no network at all. */
  readonly allowedDomains: readonly string[];
  /** The git directories under the write roots (watched while the command runs: `watchRedirects`). */
  readonly gitDirs: readonly string[];
  /**
   * What a repository's configuration names for git to read or run (`namedByConfig`) under the write
   * roots that did not exist when the command started, so the sandbox could not hold it: made, it
   * ends the command and is taken out.
   */
  readonly unheld: readonly NamedByConfig[];
  /** The person's own git configuration, as read for this boundary (a new repository is judged by it too). */
  readonly personal: PersonalConfig;
}

/**
 * Security: credential stores in the home directory a command could read even though no workspace
 * rule names them (they are outside the workspace). Denied whether or not they exist now, so that
 * one created during the run is not readable either.
 */
export const HOME_CREDENTIALS: readonly string[] = [
  '.ssh', '.aws', '.azure', '.gnupg', '.kube', '.docker', '.config/gcloud', '.config/gh', '.config/hub',
  '.config/op', '.config/doctl', '.config/git/credentials', '.oci', '.terraform.d', '.password-store', '.local/share/keyrings',
  '.npmrc', '.yarnrc', '.yarnrc.yml', '.pypirc', '.netrc', '_netrc', '.pgpass', '.git-credentials', '.vault-token',
  '.s3cfg', '.boto', '.dockercfg', '.m2/settings.xml', '.m2/settings-security.xml', '.cargo/credentials', '.cargo/credentials.toml',
  '.gem/credentials', '.composer/auth.json', '.config/composer/auth.json', '.gradle/gradle.properties', '.bash_history', '.zsh_history',
];

/**
 * Made read-only at the top of every writable workspace folder even when they do not exist yet,
 * so a command cannot create them: VS Code's settings (this extension's rules among them) and git's
 * hooks and config (hooks run code; config names hooks and filters); every other repository below
 * keeps its own read-only too (`git-dirs.ts`). Other protected files are
 * read-only where they exist (the sandbox can only guard an absent name by showing a placeholder in
 * its place, which would clutter every listing); one a command creates is taken out when it ends
 * (`withdrawCreatedProtected`).
 */
export const ALWAYS_READ_ONLY: readonly string[] = ['.vscode', '.git/hooks', '.git/config'];

/** A folder's files as listed: `files` relative to it ("/"-separated), and a digest of the listing as it came (equal digests: the same files). */
export interface TreeListing {
  readonly files: () => readonly string[];
  readonly digest: string;
}

/** Every file below a folder, never following links; `.git` is not listed. */
export type TreeLister = (folder: string, signal: AbortSignal) => Promise<TreeListing>;

export interface BoundaryInputs {
  readonly policy: Policy;
  /** The workspace folders, with local paths. */
  readonly roots: readonly WorkspaceRoot[];
  /** Absolute folders the command may write (the write roots). */
  readonly writeFolders: readonly string[];
  readonly home: string;
  /** Folders of ours the command must not read (artifact spools, saved bytes). */
  readonly privateFolders: readonly string[];
  /** The call's own temp folder. */
  readonly tempFolder: string;
  readonly allowedDomains: readonly string[];
  readonly list: TreeLister;
  readonly signal: AbortSignal;
  /**
   * The call passed `allow_protected_writes` and the person confirmed it: files that write rules
   * mark `ask` (package.json, lockfiles, ...) are writable for this call. Secrets stay unreadable
   * and read-only, `deny` rules and `ALWAYS_READ_ONLY` still hold.
   */
  readonly allowProtectedWrites?: boolean;
  /** Verdicts remembered from earlier calls under the same policy (see `VerdictMemo`). */
  readonly memo?: VerdictMemo;
}

/** The paths of one workspace folder a listing made unreadable and read-only (absolute). */
export interface FolderHits {
  readonly denyRead: readonly string[];
  readonly denyWrite: readonly string[];
  /** The `.git` entries (folders, `gitdir:` files) in folders a command may write in (absolute). */
  readonly gitEntries: readonly string[];
}

/** What a write rule decides for one path, as the boundary needs it. */
export type WriteVerdict = 'open' | 'protected' | 'closed';

/**
 * The policy's verdicts on workspace paths, remembered across calls while the policy object is
 * the same one (a session hands out a new one whenever settings, folders or links change, so a
 * changed rule is never judged by an old verdict). A new file is judged when it first appears.
 */
export class VerdictMemo {
  private policy: Policy | undefined;
  private size = 0;
  private readonly reads = new Map<string, Map<string, boolean>>();
  private readonly writes = new Map<string, Map<string, WriteVerdict>>();
  /** Per workspace folder, the last listing's digest and what it gave (under this policy and `context`). */
  private readonly derived = new Map<string, { readonly digest: string; readonly context: string; readonly hits: FolderHits }>();
  /** Paths remembered at most; past it the memo starts again (a 300k-file tree would hold too much). */
  static readonly MAX = 200_000;

  /** Starts again when the policy is not the one the verdicts were made by. */
  use(policy: Policy): void {
    if (this.policy === policy && this.size < VerdictMemo.MAX) return;
    this.policy = policy;
    this.size = 0;
    this.reads.clear();
    this.writes.clear();
    this.derived.clear();
  }

  /** What the same listing gave last time under the same policy and context; undefined when anything differs. */
  hitsFor(folder: string, digest: string, context: string): FolderHits | undefined {
    const last = this.derived.get(folder);
    return last !== undefined && last.digest === digest && last.context === context ? last.hits : undefined;
  }

  keepHits(folder: string, digest: string, context: string, hits: FolderHits): void {
    this.derived.set(folder, { digest, context, hits });
  }

  read(folder: string, rel: string, judge: () => boolean): boolean {
    return this.remembered(this.reads, folder, rel, judge);
  }

  write(folder: string, rel: string, judge: () => WriteVerdict): WriteVerdict {
    return this.remembered(this.writes, folder, rel, judge);
  }

  private remembered<V>(maps: Map<string, Map<string, V>>, folder: string, rel: string, judge: () => V): V {
    let map = maps.get(folder);
    if (map === undefined) maps.set(folder, (map = new Map()));
    let verdict = map.get(rel);
    if (verdict === undefined) { map.set(rel, (verdict = judge())); this.size++; }
    return verdict;
  }
}

/**
 * Installed dependencies: an install rewrites them whole, and each read-only file costs the sandbox a
 * mount (a tree of 500 `package.json`s adds seconds to every command), so their protected names are
 * left writable to commands (the file tools still ask). Read denials apply there as everywhere.
 */
const INSTALLED = /(^|\/)node_modules\//;

const isProtective = (action: string): boolean => action === 'ask' || action === 'deny';

/**
 * `protected`: a write rule asks (the protected list, or a `write: ask` rule of the person or the
 * workspace), which `allow_protected_writes` lifts for one confirmed call. `closed`: denied, a
 * secret (its bytes must not change under the person either), or asked because the rules are
 * invalid, which nothing lifts.
 */
export function writeVerdict(decision: PolicyDecision): WriteVerdict {
  if (decision.action === 'ask') return decision.source === 'protected' || decision.source === 'user' || decision.source === 'workspace' ? 'protected' : 'closed';
  return decision.action === 'deny' ? 'closed' : 'open';
}

/**
 * The outermost folder at or above `dir` (itself included) that `judge` says is protected, each
 * folder judged once per listing: the files of one folder share the folders above them.
 */
function folderHits(judge: (rel: string) => boolean): (dir: string) => string | undefined {
  const hits = new Map<string, string | null>();
  const hitOf = (dir: string): string | undefined => {
    if (dir === '') return undefined;
    const known = hits.get(dir);
    if (known !== undefined) return known ?? undefined;
    const slash = dir.lastIndexOf('/');
    const hit = (slash === -1 ? undefined : hitOf(dir.slice(0, slash))) ?? (judge(dir) ? dir : undefined);
    hits.set(dir, hit ?? null);
    return hit;
  };
  return hitOf;
}

/** One folder's files judged: the outermost unreadable and read-only path for each. */
function judgeListing(folder: string, files: readonly string[], inputs: BoundaryInputs, memo: VerdictMemo, writable: (abs: string) => boolean): FolderHits {
  const { policy } = inputs;
  const denyRead = new Set<string>();
  const denyWrite = new Set<string>();
  const unreadable = (rel: string): boolean => memo.read(folder, rel, () => isProtective(policy.decide(rel, 'read', folder).action));
  const readOnly = (rel: string): boolean => {
    const verdict = memo.write(folder, rel, () => writeVerdict(policy.decide(rel, 'write', folder)));
    return verdict === 'closed' || (verdict === 'protected' && inputs.allowProtectedWrites !== true);
  };
  const readHitOf = folderHits(unreadable);
  const writeHitOf = folderHits(readOnly);
  /** Per folder of the listing: its files are writable (under a write root, not installed), or `undefined`: each file is checked. */
  const openFolders = new Map<string, boolean | undefined>();
  const opens = (dir: string): boolean | undefined => {
    if (openFolders.has(dir)) return openFolders.get(dir);
    const abs = dir === '' ? folder : nodePath.join(folder, dir);
    // A write root below this folder (or a file) is judged file by file.
    const open = INSTALLED.test(`${dir}/`) ? false : writable(abs) ? true : inputs.writeFolders.some((w) => w.startsWith(`${abs}${nodePath.sep}`)) ? undefined : false;
    openFolders.set(dir, open);
    return open;
  };
  const gitEntries: string[] = [];
  for (const file of files) {
    const slash = file.lastIndexOf('/');
    const dir = slash === -1 ? '' : file.slice(0, slash);
    // A repository's HEAD shows where it is; git writes it, so it is not judged as a file.
    if (file === GIT_HEAD || file.endsWith(`/${GIT_HEAD}`)) {
      const working = dir === GIT_ENTRY ? '' : dir.slice(0, -`/${GIT_ENTRY}`.length);
      if (opens(working) !== false) gitEntries.push(nodePath.join(folder, dir));
      continue;
    }
    if ((file === GIT_ENTRY || file.endsWith(`/${GIT_ENTRY}`)) && opens(dir) !== false) gitEntries.push(nodePath.join(folder, file));
    // The outermost protected folder or the file itself: nothing below a listed folder is listed again.
    const readHit = readHitOf(dir) ?? (unreadable(file) ? file : undefined);
    if (readHit !== undefined) denyRead.add(nodePath.join(folder, readHit));
    const open = opens(dir);
    if (open === false || (open === undefined && !writable(nodePath.join(folder, file)))) continue;
    const writeHit = writeHitOf(dir) ?? (readOnly(file) ? file : undefined);
    if (writeHit !== undefined) denyWrite.add(nodePath.join(folder, writeHit));
  }
  return { denyRead: [...denyRead], denyWrite: [...denyWrite], gitEntries };
}

/**
 * The sandbox's lists, from the policy in force. Each workspace file (and folder above one) is
 * judged by `Policy.decide`, the evaluator the file tools use; a protected folder is listed once
 * instead of its files.
 */
export async function deriveBoundary(inputs: BoundaryInputs): Promise<ShellBoundary> {
  const { policy, home } = inputs;
  const denyRead = new Set<string>([...HOME_CREDENTIALS.map((rel) => nodePath.join(home, rel)), ...inputs.privateFolders]);
  const denyWrite = new Set<string>();
  const gitDirs: string[] = [];
  const repositoriesByFolder: { folder: string; repositories: string[] }[] = [];
  const writable = (abs: string): boolean => inputs.writeFolders.some((w) => abs === w || abs.startsWith(`${w}${nodePath.sep}`));
  for (const root of inputs.roots) {
    const folder = root.localPath;
    if (folder === undefined) continue;
    // A folder opened at a protected place (~/.aws itself) is unreadable as a whole.
    if (isProtective(policy.decide('', 'read', folder).action)) { denyRead.add(folder); continue; }
    const listing = await inputs.list(folder, inputs.signal);
    const memo = inputs.memo ?? new VerdictMemo();
    memo.use(policy);
    // Security: the same files, judged by the same policy for the same write roots, give the same lists.
    const context = `${inputs.allowProtectedWrites === true}\0${inputs.writeFolders.join('\0')}`;
    const hits = memo.hitsFor(folder, listing.digest, context) ?? judgeListing(folder, listing.files(), inputs, memo, writable);
    memo.keepHits(folder, listing.digest, context, hits);
    for (const path of hits.denyRead) denyRead.add(path);
    for (const path of hits.denyWrite) denyWrite.add(path);
    const repositories = await gitDirsOf(hits.gitEntries);
    gitDirs.push(...repositories.filter(writable));
    for (const path of await heldGitPaths(repositories)) if (writable(path)) denyWrite.add(path);
    // A repository kept outside (a submodule's, a worktree's, the one the folder is part of) can still name files inside.
    repositoriesByFolder.push({ folder, repositories });
    if (!writable(folder)) continue;
    for (const rel of ALWAYS_READ_ONLY) denyWrite.add(nodePath.join(folder, rel));
  }
  const byConfig = await heldByConfig(repositoriesByFolder, home, writable);
  for (const path of byConfig.held) denyWrite.add(path);
  return {
    denyRead: [...denyRead].sort(),
    allowWrite: [...inputs.writeFolders, inputs.tempFolder],
    denyWrite: [...denyWrite].sort(),
    allowedDomains: [...inputs.allowedDomains],
    gitDirs,
    unheld: byConfig.unheld,
    personal: byConfig.personal,
  };
}

/**
 * The globs whose files a confirmed `allow_protected_writes` makes writable: the built-in protected
 * list and the write rules that ask (the person's and the workspace's), less what stays read-only always.
 */
export function protectedWriteGlobs(policy: Policy): string[] {
  const asking = [...policy.userRules, ...policy.workspaceRules].filter((rule) => rule.write === 'ask').map((rule) => rule.glob);
  return [...new Set([...PROTECTED_GLOBS, ...asking])].filter((glob) => !ALWAYS_READ_ONLY.some((kept) => glob === `**/${kept}/**` || glob === kept));
}

/** One line for the person: what the command can and cannot do. */
export function describeBoundary(writeRoots: readonly string[], allowedDomains: readonly string[], options: { readonly allowProtectedWrites?: boolean; readonly asksHosts?: boolean } = {}): string {
  const network = `${allowedDomains.length === 0 ? 'network off' : `network only to ${allowedDomains.join(', ')}`}${options.asksHosts ? ' (other hosts asked)' : ''}`;
  const writes = writeRoots.length === 0 ? 'no writes (a private temp folder aside)' : `writes only under ${writeRoots.join(', ')}`;
  const kept = options.allowProtectedWrites
    ? 'protected files WRITABLE for this command; .vscode and every repository\'s hooks and config read-only'
    : 'protected files and every repository\'s hooks and config read-only';
  return `sandboxed: ${network}; ${writes}; secrets and read-protected paths unreadable; ${kept}`;
}
