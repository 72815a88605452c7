import * as nodePath from 'node:path';
import type { Policy, PolicyDecision } from '../policy/policy.ts';
import type { ModelPath, WorkspaceRoot } from '../paths.ts';
import { PROTECTED_GLOBS } from '../policy/protected.ts';
import { GIT_ENTRY, GIT_HEAD, gitDirsOf } from '../git/dirs.ts';
import { gitDirsAround } from '../git/named.ts';
import { historyKey, secretInHistory } from '../git/history.ts';
import { systemDenies } from './reads.ts';

/**
 * What the kernel holds a command to, as absolute local paths: the same rules the file tools are
 * judged by, turned into the OS sandbox's lists at every call (settings are live).
 */
export interface ShellBoundary {
  /** Unreadable to the command: everything outside the system folders, every path a read rule marks ask or deny, our spools. */
  readonly denyRead: readonly string[];
  /** Readable although below a denied folder: the workspace folders, the call's private home and temp folder, toolchains. */
  readonly allowRead: readonly string[];
  /** Writable: the write roots (through the copy-on-write layer) and the call's private folder. */
  readonly allowWrite: readonly string[];
  /** Hosts the command may reach; empty: no network at all. */
  readonly allowedDomains: readonly string[];
  /** The git directories of the repositories below and around the workspace folders (what their configuration names is reviewed). */
  readonly gitDirs: readonly string[];
  /** Repositories whose object store is unreadable to the command: their history holds a secret's name (`secretInHistory`). */
  readonly hiddenHistories: readonly { readonly gitDir: string; readonly secret: string }[];
}

/**
 * Security: credential stores in the home directory a command could read even though no workspace
 * rule names them (they are outside the workspace). Denied whether or not they exist now, so that
 * one created during the run is not readable either.
 */
export const HOME_CREDENTIALS: readonly string[] = [
  '.ssh',
  '.aws',
  '.azure',
  '.gnupg',
  '.kube',
  '.docker',
  '.config/gcloud',
  '.config/gh',
  '.config/hub',
  '.config/op',
  '.config/doctl',
  '.config/git/credentials',
  '.oci',
  '.terraform.d',
  '.password-store',
  '.local/share/keyrings',
  '.npmrc',
  '.yarnrc',
  '.yarnrc.yml',
  '.pypirc',
  '.netrc',
  '_netrc',
  '.pgpass',
  '.git-credentials',
  '.vault-token',
  '.s3cfg',
  '.boto',
  '.dockercfg',
  '.m2/settings.xml',
  '.m2/settings-security.xml',
  '.cargo/credentials',
  '.cargo/credentials.toml',
  '.gem/credentials',
  '.composer/auth.json',
  '.config/composer/auth.json',
  '.gradle/gradle.properties',
  '.bash_history',
  '.zsh_history',
];

/** What a command's change set always stages, `allow_protected_writes` or not: VS Code's settings, this extension's rules among them. */
export const ALWAYS_REVIEWED: readonly string[] = ['.vscode'];

/** Whether a workspace path is in `ALWAYS_REVIEWED`. */
export const isAlwaysReviewed = (rel: string): boolean =>
  ALWAYS_REVIEWED.some((kept) => rel === kept || rel.startsWith(`${kept}/`));

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
  /**
   * The call's private home and temp folder, readable and writable. Security: not the folder that
   * holds them, where the command's own upper layer lies (written there directly, it would be a
   * change overlayfs never saw: its extended attributes could redirect a folder to a denied one).
   */
  readonly callFolders: readonly string[];
  /** Folders a command may read besides the workspace: toolchains, the sandbox's own helpers. */
  readonly readFolders: readonly string[];
  /** The write roots are layered (copy-on-write): writable to the command; else read-only. */
  readonly layered: boolean;
  readonly allowedDomains: readonly string[];
  /** The host's PATH, for the git that reads repositories' histories. */
  readonly path: string;
  readonly list: TreeLister;
  readonly signal: AbortSignal;
  /** Verdicts remembered from earlier calls under the same policy (see `VerdictMemo`). */
  readonly memo?: VerdictMemo;
}

/** What one workspace folder's listing gave: the paths a read rule makes unreadable, and its repositories (absolute). */
export interface FolderHits {
  readonly denyRead: readonly string[];
  /** The `.git` entries (folders, `gitdir:` files) below the folder. */
  readonly gitEntries: readonly string[];
}

/** What a write rule decides for one path, as a command's change set needs it. */
export type WriteVerdict = 'open' | 'protected' | 'closed';

/**
 * The policy's read verdicts on workspace paths, remembered across calls while the policy object is
 * the same one (a session hands out a new one whenever settings, folders or links change, so a
 * changed rule is never judged by an old verdict). A new file is judged when it first appears.
 */
export class VerdictMemo {
  private policy: Policy | undefined;
  private size = 0;
  private readonly reads = new Map<string, Map<string, boolean>>();
  /** Per workspace folder, the last listing's digest and what it gave (under this policy). */
  private readonly derived = new Map<string, { readonly digest: string; readonly hits: FolderHits }>();
  /** Per git directory, the secret its history holds (or none), for the refs and index it had. */
  private readonly histories = new Map<string, { readonly key: string; readonly secret: string | undefined }>();
  /** Paths remembered at most; past it the memo starts again (a 300k-file tree would hold too much). */
  static readonly MAX = 200_000;

  /** Starts again when the policy is not the one the verdicts were made by. */
  use(policy: Policy): void {
    if (this.policy === policy && this.size < VerdictMemo.MAX) return;
    this.policy = policy;
    this.size = 0;
    this.reads.clear();
    this.derived.clear();
    this.histories.clear();
  }

  /** What `secretInHistory` found for this git directory when its refs and index were as `key` says, under this policy. */
  historyFor(
    gitDir: string,
    key: string | undefined,
    look: () => Promise<string | undefined>,
  ): Promise<string | undefined> {
    const last = this.histories.get(gitDir);
    if (key !== undefined && last?.key === key) return Promise.resolve(last.secret);
    return look().then((secret) => {
      if (key !== undefined) this.histories.set(gitDir, { key, secret });
      return secret;
    });
  }

  /** What the same listing gave last time under the same policy; undefined when anything differs. */
  hitsFor(folder: string, digest: string): FolderHits | undefined {
    const last = this.derived.get(folder);
    return last !== undefined && last.digest === digest ? last.hits : undefined;
  }

  keepHits(folder: string, digest: string, hits: FolderHits): void {
    this.derived.set(folder, { digest, hits });
  }

  read(folder: string, rel: string, judge: () => boolean): boolean {
    let map = this.reads.get(folder);
    if (map === undefined) this.reads.set(folder, (map = new Map()));
    let verdict = map.get(rel);
    if (verdict === undefined) {
      map.set(rel, (verdict = judge()));
      this.size++;
    }
    return verdict;
  }
}

const isProtective = (action: string): boolean => action === 'ask' || action === 'deny';

/**
 * `protected`: a write rule asks (the protected list, or a `write: ask` rule of the person or the
 * workspace), which `allow_protected_writes` lifts for one confirmed call. `closed`: denied, a
 * secret (its bytes must not change under the person either), or asked because the rules are
 * invalid, which nothing lifts.
 */
export function writeVerdict(decision: PolicyDecision): WriteVerdict {
  if (decision.action === 'ask')
    return decision.source === 'protected' || decision.source === 'user' || decision.source === 'workspace'
      ? 'protected'
      : 'closed';
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

/** One folder's files judged: the outermost unreadable path for each, and where its repositories are. */
function judgeListing(folder: string, files: readonly string[], policy: Policy, memo: VerdictMemo): FolderHits {
  const denyRead = new Set<string>();
  const unreadable = (rel: string): boolean =>
    memo.read(folder, rel, () => isProtective(policy.decide(rel, 'read', folder).action));
  const readHitOf = folderHits(unreadable);
  const gitEntries: string[] = [];
  for (const file of files) {
    const slash = file.lastIndexOf('/');
    const dir = slash === -1 ? '' : file.slice(0, slash);
    // A repository's HEAD shows where it is; git writes it, so it is not judged as a file.
    if (file === GIT_HEAD || file.endsWith(`/${GIT_HEAD}`)) {
      gitEntries.push(nodePath.join(folder, dir));
      continue;
    }
    if (file === GIT_ENTRY || file.endsWith(`/${GIT_ENTRY}`)) gitEntries.push(nodePath.join(folder, file));
    const readHit = readHitOf(dir) ?? (unreadable(file) ? file : undefined);
    if (readHit !== undefined) denyRead.add(nodePath.join(folder, readHit));
  }
  return { denyRead: [...denyRead], gitEntries };
}

/**
 * The sandbox's lists, from the policy in force. Reads come from an allow-list: the system folders,
 * the workspace folders (every one, whatever roots a client narrowed to), the call's private
 * folder and the toolchains; everything else is unreadable. In the workspace each file (and folder
 * above one) is judged by `Policy.decide`, the evaluator the file tools use, and a read-protected
 * one is unreadable (a protected folder is listed once instead of its files).
 */
export async function deriveBoundary(inputs: BoundaryInputs): Promise<ShellBoundary> {
  const { policy, home } = inputs;
  const denyRead = new Set<string>([
    ...systemDenies(process.platform),
    ...HOME_CREDENTIALS.map((rel) => nodePath.join(home, rel)),
    ...inputs.privateFolders,
  ]);
  const allowRead = new Set<string>([...inputs.callFolders, ...inputs.readFolders]);
  const gitEntries: string[] = [];
  const memo = inputs.memo ?? new VerdictMemo();
  memo.use(policy);
  for (const root of inputs.roots) {
    const folder = root.localPath;
    if (folder === undefined) continue;
    // A folder opened at a protected place (~/.aws itself) is unreadable as a whole.
    if (isProtective(policy.decide('', 'read', folder).action)) {
      denyRead.add(folder);
      continue;
    }
    allowRead.add(folder);
    const listing = await inputs.list(folder, inputs.signal);
    // Security: the same files, judged by the same policy, give the same lists.
    const hits = memo.hitsFor(folder, listing.digest) ?? judgeListing(folder, listing.files(), policy, memo);
    memo.keepHits(folder, listing.digest, hits);
    for (const path of hits.denyRead) denyRead.add(path);
    gitEntries.push(...hits.gitEntries);
  }
  const gitDirs = [
    ...new Set([
      ...(await gitDirsOf(gitEntries)),
      ...(await gitDirsAround(inputs.roots.flatMap((r) => (r.localPath === undefined ? [] : [r.localPath])))),
    ]),
  ];
  const hiddenHistories: { gitDir: string; secret: string }[] = [];
  for (const gitDir of gitDirs) {
    // A linked worktree keeps its objects in the repository it belongs to, which is judged itself.
    if (nodePath.basename(nodePath.dirname(gitDir)) === 'worktrees') continue;
    const top = nodePath.dirname(gitDir);
    const isSecret = (rel: string): boolean => isProtective(policy.decide(rel, 'read', top).action);
    const secret = await memo.historyFor(gitDir, await historyKey(gitDir, inputs.path), () =>
      secretInHistory(gitDir, isSecret, inputs.path),
    );
    if (secret === undefined) continue;
    hiddenHistories.push({ gitDir, secret });
    denyRead.add(nodePath.join(gitDir, 'objects'));
  }
  return {
    denyRead: [...denyRead].sort(),
    allowRead: [...allowRead].sort(),
    allowWrite: [...(inputs.layered ? inputs.writeFolders : []), ...inputs.callFolders],
    allowedDomains: [...inputs.allowedDomains],
    gitDirs,
    hiddenHistories,
  };
}

/** The globs whose files a confirmed `allow_protected_writes` lets a command's change set apply: the built-in protected list and the write rules that ask. */
export function protectedWriteGlobs(policy: Policy): string[] {
  const asking = [...policy.userRules, ...policy.workspaceRules]
    .filter((rule) => rule.write === 'ask')
    .map((rule) => rule.glob);
  return [...new Set([...PROTECTED_GLOBS, ...asking])].filter(
    (glob) => !ALWAYS_REVIEWED.some((kept) => glob === `**/${kept}/**` || glob === kept),
  );
}

/** What the boundary line is told by (a session's `ShellServices`). */
interface BoundaryLineSource {
  readonly host: {
    allowedDomains(): readonly string[];
    readonly askHost?: unknown;
    readonly review?: () => 'protected' | 'all';
  };
  readonly hosts: { readonly remembered: readonly string[] };
}

/**
 * The boundary line as the session's settings are now: the write roots (or workspace folders) by
 * their names, the hosts allowed by the settings and for this session, and the review mode.
 */
export function boundaryLineOf(
  shell: BoundaryLineSource | undefined,
  writeRoots: readonly ModelPath[],
  allowProtectedWrites: boolean,
  layered?: boolean,
): string {
  const shown = writeRoots.map((p) => (p.display === '.' || p.display === '' ? p.root.name : p.display));
  const hosts = [...new Set([...(shell?.host.allowedDomains() ?? []), ...(shell?.hosts.remembered ?? [])])];
  return describeBoundary(shown, hosts, {
    allowProtectedWrites,
    asksHosts: shell?.host.askHost !== undefined,
    review: shell?.host.review?.() ?? 'protected',
    ...(layered !== undefined ? { layered } : {}),
  });
}

/** One line for the person: what the command can and cannot do. */
export function describeBoundary(
  writeRoots: readonly string[],
  allowedDomains: readonly string[],
  options: {
    readonly allowProtectedWrites?: boolean;
    readonly asksHosts?: boolean;
    readonly review?: 'protected' | 'all';
    readonly layered?: boolean;
  } = {},
): string {
  const network = `${allowedDomains.length === 0 ? 'network off' : `network only to ${allowedDomains.join(', ')}`}${options.asksHosts ? ' (other hosts asked)' : ''}`;
  const where = writeRoots.length === 0 ? 'nowhere' : writeRoots.join(', ');
  const writes =
    options.layered === false
      ? `the workspace read-only (this machine has no copy-on-write layer; only a private temp folder is writable)`
      : options.review === 'all'
        ? `writes under ${where} staged for review when it ends`
        : `writes under ${where} applied when it ends (undoable)${options.allowProtectedWrites ? `, protected files included but ${ALWAYS_REVIEWED.join(', ')}; links and git's own files staged for review` : ", protected files, links and git's own files staged for review"}`;
  return `sandboxed: ${network}; reads only the workspace, system folders and toolchains (secrets unreadable); ${writes}`;
}
