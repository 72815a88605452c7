import { mkdtempSync, realpathSync, rmSync, statSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { removeDeadRunFolders } from '../core/run-folders.ts';
import { NodeFs } from '../core/fs/node-fs.ts';
import { withDistinctNames, type WorkspaceRoot } from '../core/paths.ts';
import { parseRules } from '../core/policy/policy.ts';
import type { AuditEntry, Gate } from '../core/ports.ts';
import type { Session } from '../core/pipeline/session.ts';
import { assemble } from '../core/pipeline/assemble.ts';
import { workspaceStateDir } from '../core/state-dir.ts';
import { CLI_VOCABULARY, type HostVocabulary } from '../core/vocabulary.ts';
import { DEFAULT_MAX_TIMEOUT_MS, type HostDecider } from '../core/shell/port.ts';
import { srtSandbox } from '../core/shell/srt-sandbox.ts';
import { endOrphanedHelpers, HOST_MARK } from '../core/shell/process-tree.ts';
import { readPolicyFile, UsageError } from './args.ts';
import { createSearchBackend } from './search.ts';

const SPOOL_PREFIX = 'workspace-tools-cli-';

/** The `--root` folders, by real path, each named after its folder. */
export function folders(paths: readonly string[]): WorkspaceRoot[] {
  return withDistinctNames(
    paths.map((p) => {
      const real = realpathSync(nodePath.resolve(p));
      if (!statSync(real).isDirectory()) throw new UsageError(`--root ${p} is not a folder.`);
      return { name: nodePath.basename(real), address: real, localPath: real };
    }),
  );
}

export interface CliSessionSpec {
  readonly roots: readonly WorkspaceRoot[];
  readonly policyFile?: string | undefined;
  readonly gate: Gate;
  /** The folders the tools may use, asked on every call (default: `roots`). */
  readonly liveRoots?: () => readonly WorkspaceRoot[];
  /** Hosts run_shell_command's commands may reach (`--allow-domain`); none: the network is off. */
  readonly allowDomains: readonly string[];
  /** Asks about a host no `--allow-domain` allows (the MCP server's elicitation); absent: refused, and the result says so. */
  readonly askHost?: HostDecider;
  readonly audit: (entry: AuditEntry) => void;
  /** The host's words for what the person can change (default: the CLI's flags). */
  readonly vocabulary?: HostVocabulary;
}

/** A headless session over the local disk (the CLI's and the MCP server's), with its own spool folder; `close` removes it. */
export async function openCliSession(
  spec: CliSessionSpec,
): Promise<{ readonly session: Session; close(): Promise<void> }> {
  const parsedRules = parseRules(spec.policyFile ? readPolicyFile(spec.policyFile) : [], spec.policyFile);
  if (parsedRules.errors.length) throw new UsageError(`Invalid policy: ${parsedRules.errors.join(' ')}`);
  // The spool folders of CLI sessions killed without cleanup (SIGKILL, a crash).
  await removeDeadRunFolders(tmpdir(), SPOOL_PREFIX);
  const spoolDir = mkdtempSync(nodePath.join(tmpdir(), `${SPOOL_PREFIX}${process.pid}-`));
  const warn = (message: string): void => {
    process.stderr.write(`workspace-tools: ${message}\n`);
  };
  const backend = createSearchBackend(warn);
  // The sandbox's helpers (its network proxy) carry this process's id, and those of a host killed
  // before it could end them are ended now.
  process.env[HOST_MARK] = String(process.pid);
  const orphans = endOrphanedHelpers();
  if (orphans.length > 0)
    warn(
      `ended ${orphans.length} sandbox helper process(es) a killed CLI or MCP server left running (${orphans.join(', ')}).`,
    );
  // Commands run only inside the OS sandbox, whose read denials no flag lifts.
  const sandbox = srtSandbox({ ripgrepPath: backend?.ripgrep.path });
  const allowedDomains = [...spec.allowDomains];
  const roots = spec.roots;
  const home = homedir();
  const stateDir = workspaceStateDir(
    {
      home,
      xdgStateHome: process.env.XDG_STATE_HOME,
      localAppData: process.env.LOCALAPPDATA,
      platform: process.platform,
    },
    roots.map((r) => r.localPath ?? r.address),
  );
  const session = assemble({
    home,
    env: () => process.env,
    fs: new NodeFs({}, { warn }),
    roots: spec.liveRoots ?? (() => roots),
    // The client's roots only narrow the --root folders, whose rules still judge what lies in them.
    ...(spec.liveRoots ? { ruleFolders: () => roots } : {}),
    gate: spec.gate,
    policy: () => parsedRules.policy,
    ...(backend ? { search: backend.search, ripgrep: backend.ripgrep } : {}),
    clock: { now: () => Date.now() },
    vocabulary: spec.vocabulary ?? CLI_VOCABULARY,
    log: { audit: spec.audit, info: () => {}, warn },
    spoolDir,
    stateDir,
    shell: {
      sandbox,
      allowedDomains: () => allowedDomains,
      maxTimeoutMs: () => DEFAULT_MAX_TIMEOUT_MS,
      ...(spec.askHost ? { askHost: spec.askHost } : {}),
    },
  });
  await session.artifacts.start();
  // Change sets a killed CLI, MCP server or editor left half applied on these folders: finished or rolled back, and said on stderr.
  await session
    .recoverInterruptedSets(roots)
    .catch((e: unknown) =>
      warn(`Interrupted change sets could not be recovered: ${e instanceof Error ? e.message : String(e)}`),
    );
  return {
    session,
    async close() {
      await session.dispose();
      await sandbox.dispose();
      rmSync(spoolDir, { recursive: true, force: true });
    },
  };
}
