import { readFileSync } from 'node:fs';

export type GateMode = 'approve' | 'deny';

export interface CliArgs {
  readonly roots: string[];
  readonly gate: GateMode;
  readonly policyFile?: string;
  readonly allowSecrets: boolean;
  readonly audit: boolean;
  /** Hosts run_shell_command's commands may reach (none by default). */
  readonly allowDomains: string[];
  readonly tool?: string;
  readonly input?: string;
}

export const USAGE = `Usage: workspace-tools --root DIR --gate approve|deny [--policy FILE] [--allow-secrets] [--allow-domain HOST] [--audit] [TOOL 'JSON']

  --root DIR        a workspace folder (repeat for a multi-root workspace; default: none, required)
  --gate VERDICT    the decider for every call: approve or deny. Required: a headless host must wire its decider.
  --policy FILE     JSON array of rules [{"glob": "...", "read": "allow|ask|deny", "write": "..."}]
  --allow-secrets   approve calls on paths that match an "ask" rule (secrets, writes to protected files), on content staged from them, and on files with several names (hard links); without it they are refused
  --allow-domain H  a host run_shell_command's commands may reach (repeat; default: none, the network is off).
                    Commands always run in the OS sandbox: --allow-secrets does not make secrets readable to them.
  --audit           write the audit trail (one JSON line per call) to stderr

With TOOL and JSON: runs one call and prints its result as JSON.
\`workspace-tools mcp --help\`: serve the same tools over MCP (stdio) instead.
Without TOOL: reads JSON lines {"tool": "...", "input": {...}} from stdin and prints one result line per call;
artifacts and staged media live for the whole session.`;

export class UsageError extends Error {}

/** Hands `handle` each argument in turn, with a way to take the next one as its value. */
export function readOptions(argv: readonly string[], handle: (arg: string, value: () => string) => void): void {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    handle(arg, () => {
      const next = argv[++i];
      if (next === undefined) throw new UsageError(`${arg} needs a value.`);
      return next;
    });
  }
}

export function parseArgs(argv: readonly string[]): CliArgs {
  const roots: string[] = [];
  let gate: string | undefined;
  let policyFile: string | undefined;
  let allowSecrets = false;
  let audit = false;
  const allowDomains: string[] = [];
  const positional: string[] = [];
  readOptions(argv, (arg, value) => {
    switch (arg) {
      case '--root':
        roots.push(value());
        break;
      case '--gate':
        gate = value();
        break;
      case '--policy':
        policyFile = value();
        break;
      case '--allow-secrets':
        allowSecrets = true;
        break;
      case '--audit':
        audit = true;
        break;
      case '--allow-domain':
        allowDomains.push(value());
        break;
      case '--help':
      case '-h':
        throw new UsageError('');
      default:
        if (arg.startsWith('--')) throw new UsageError(`Unknown option ${arg}.`);
        positional.push(arg);
    }
  });
  if (gate === undefined)
    throw new UsageError(
      '--gate is required: pass --gate approve or --gate deny. The CLI has no default decider, so a headless harness must choose one explicitly.',
    );
  if (gate !== 'approve' && gate !== 'deny') throw new UsageError(`--gate must be approve or deny, not "${gate}".`);
  if (roots.length === 0) throw new UsageError('--root DIR is required: the workspace folder the tools may use.');
  if (positional.length > 2)
    throw new UsageError(`Expected TOOL and one JSON argument, got ${positional.length} arguments.`);
  const [tool, input] = positional;
  return {
    roots,
    gate,
    allowSecrets,
    audit,
    allowDomains,
    ...(policyFile !== undefined ? { policyFile } : {}),
    ...(tool !== undefined ? { tool } : {}),
    ...(input !== undefined ? { input } : {}),
  };
}

export function readPolicyFile(file: string): unknown {
  try {
    return JSON.parse(readFileSync(file, 'utf8')) as unknown;
  } catch (e) {
    throw new UsageError(`Cannot read the policy file ${file}: ${e instanceof Error ? e.message : String(e)}`);
  }
}
