import * as nodePath from 'node:path';
import type { Policy } from '../policy.ts';
import type { WorkspaceRoot } from '../paths.ts';

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
 * hooks and config (hooks run code; config names hooks and filters). Other protected files are
 * read-only where they exist; a command can create a missing one (the sandbox can only guard an
 * absent name by showing a placeholder in its place, which would clutter every listing).
 */
export const ALWAYS_READ_ONLY: readonly string[] = ['.vscode', '.git/hooks', '.git/config'];

/** Every file below a folder, relative to it ("/"-separated), never following links; `.git` is not listed. */
export type TreeLister = (folder: string, signal: AbortSignal) => Promise<readonly string[]>;

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
}

/**
 * Installed dependencies: an install rewrites them whole, and each read-only file costs the sandbox a
 * mount (a tree of 500 `package.json`s adds seconds to every command), so their protected names are
 * left writable to commands (the file tools still ask). Read denials apply there as everywhere.
 */
const INSTALLED = /(^|\/)node_modules\//;

const isProtective = (action: string): boolean => action === 'ask' || action === 'deny';

/** The folders above `rel` and `rel` itself, shortest first: "a/b/c" → "a", "a/b", "a/b/c". */
function prefixes(rel: string): string[] {
  const parts = rel.split('/');
  return parts.map((_, i) => parts.slice(0, i + 1).join('/'));
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
  const writable = (abs: string): boolean => inputs.writeFolders.some((w) => abs === w || abs.startsWith(`${w}${nodePath.sep}`));
  for (const root of inputs.roots) {
    const folder = root.localPath;
    if (folder === undefined) continue;
    // A folder opened at a protected place (~/.aws itself) is unreadable as a whole.
    if (isProtective(policy.decide('', 'read', folder).action)) { denyRead.add(folder); continue; }
    const files = await inputs.list(folder, inputs.signal);
    const readMemo = new Map<string, boolean>();
    const writeMemo = new Map<string, boolean>();
    const judged = (memo: Map<string, boolean>, rel: string, risk: 'read' | 'write'): boolean => {
      let verdict = memo.get(rel);
      if (verdict === undefined) memo.set(rel, (verdict = isProtective(policy.decide(rel, risk, folder).action)));
      return verdict;
    };
    for (const file of files) {
      // The outermost protected folder or the file itself: nothing below a listed folder is listed again.
      const readHit = prefixes(file).find((rel) => judged(readMemo, rel, 'read'));
      if (readHit !== undefined) denyRead.add(nodePath.join(folder, readHit));
      if (!writable(nodePath.join(folder, file)) || INSTALLED.test(file)) continue;
      const writeHit = prefixes(file).find((rel) => judged(writeMemo, rel, 'write'));
      if (writeHit !== undefined) denyWrite.add(nodePath.join(folder, writeHit));
    }
    if (!writable(folder)) continue;
    for (const rel of ALWAYS_READ_ONLY) denyWrite.add(nodePath.join(folder, rel));
  }
  return {
    denyRead: [...denyRead].sort(),
    allowWrite: [...inputs.writeFolders, inputs.tempFolder],
    denyWrite: [...denyWrite].sort(),
    allowedDomains: [...inputs.allowedDomains],
  };
}

/** One line for the person: what the command can and cannot do. */
export function describeBoundary(writeRoots: readonly string[], allowedDomains: readonly string[]): string {
  const network = allowedDomains.length === 0 ? 'network off' : `network only to ${allowedDomains.join(', ')}`;
  const writes = writeRoots.length === 0 ? 'no writes (a private temp folder aside)' : `writes only under ${writeRoots.join(', ')}`;
  return `sandboxed: ${network}; ${writes}; secrets and read-protected paths unreadable; protected files, .git/hooks and .git/config read-only`;
}
