import { appendFileSync } from 'node:fs';
import type { AuditEntry } from '../core/ports.ts';
import type { McpGateMode } from '../mcp/gate.ts';
import { McpToolHost } from '../mcp/server.ts';
import { LineTransport } from '../mcp/stdio.ts';
import { UsageError, readOptions } from './args.ts';
import { folders, openCliSession } from './session.ts';

const VERSION = '0.1.0';

export const MCP_USAGE = `Usage: workspace-tools mcp --root DIR --gate approve|elicit|deny [--policy FILE] [--allow-secrets] [--allow-domain HOST] [--ask-timeout SECONDS] [--audit FILE]

Serves the tools over MCP on stdio (stdout carries only JSON-RPC).
  --root DIR        a workspace folder (repeat for several); the client's roots may only narrow them
  --gate MODE       approve: trust the client's own confirmation for calls no rule covers;
                    elicit: ask the person through the client (elicitation) for every call no rule allows;
                    deny: refuse every call.
                    Whatever the mode, secrets, protected writes and files with several names are asked
                    through elicitation on every call; a client without elicitation is refused them.
  --policy FILE     JSON array of rules [{"glob": "...", "read": "allow|ask|deny", "write": "..."}]
  --allow-secrets   approve what an "ask" rule covers without asking (run_shell_command's sandbox still
                    keeps secrets unreadable to commands)
  --allow-domain H  a host run_shell_command's commands may reach (repeat; default: none, the network is off)
  --ask-timeout S   how long a question to the person waits for an answer, counted again from each progress
                    the client reports; unanswered, the call is refused (default: no limit, as in VS Code)
  --audit FILE      append the audit trail (one JSON line per call, never file contents) to FILE; default: stderr`;

interface McpArgs {
  readonly roots: string[];
  readonly gate: McpGateMode;
  readonly policyFile?: string;
  readonly allowSecrets: boolean;
  readonly auditFile?: string;
  readonly allowDomains: string[];
  readonly askTimeoutMs?: number;
}

function parseMcpArgs(argv: readonly string[]): McpArgs {
  const roots: string[] = [];
  let gate: string | undefined;
  let policyFile: string | undefined;
  let auditFile: string | undefined;
  let allowSecrets = false;
  let askTimeoutMs: number | undefined;
  const allowDomains: string[] = [];
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
      case '--audit':
        auditFile = value();
        break;
      case '--allow-secrets':
        allowSecrets = true;
        break;
      case '--allow-domain':
        allowDomains.push(value());
        break;
      case '--ask-timeout':
        askTimeoutMs = seconds(arg, value());
        break;
      case '--help':
      case '-h':
        throw new UsageError('');
      default:
        throw new UsageError(`Unknown argument ${arg}.`);
    }
  });
  if (gate === undefined) throw new UsageError('--gate is required: approve, elicit or deny.');
  if (gate !== 'approve' && gate !== 'elicit' && gate !== 'deny')
    throw new UsageError(`--gate must be approve, elicit or deny, not "${gate}".`);
  if (roots.length === 0) throw new UsageError('--root DIR is required: the workspace folder the tools may use.');
  return {
    roots,
    gate,
    allowSecrets,
    allowDomains,
    ...(askTimeoutMs !== undefined ? { askTimeoutMs } : {}),
    ...(policyFile !== undefined ? { policyFile } : {}),
    ...(auditFile !== undefined ? { auditFile } : {}),
  };
}

/** A positive number of seconds, as milliseconds (at most Node's longest timer, about 24 days). */
function seconds(flag: string, raw: string): number {
  const value = Number(raw);
  if (!/^\d+(\.\d+)?$/.test(raw) || value <= 0 || value * 1000 > 2 ** 31 - 1)
    throw new UsageError(
      `${flag} must be a number of seconds above 0 and at most 2147483 (about 24 days), not "${raw}".`,
    );
  return Math.round(value * 1000);
}

/** `workspace-tools mcp …`: serves the tools over MCP on stdio until the client closes it or a signal stops it. */
export async function runMcpServer(argv: readonly string[]): Promise<number> {
  let args: McpArgs;
  try {
    args = parseMcpArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message ? `workspace-tools mcp: ${e.message}\n\n` : ''}${MCP_USAGE}\n`);
    return 2;
  }
  const warn = (message: string): void => {
    process.stderr.write(`workspace-tools: ${message}\n`);
  };
  const audit = (entry: AuditEntry): void => {
    const line = JSON.stringify({ audit: entry }) + '\n';
    if (args.auditFile !== undefined) appendFileSync(args.auditFile, line, { mode: 0o600 });
    else process.stderr.write(line);
  };
  const host = new McpToolHost({
    gate: args.gate,
    allowSecrets: args.allowSecrets,
    version: VERSION,
    network: args.allowDomains.length > 0,
    warn,
    ...(args.askTimeoutMs !== undefined ? { askTimeoutMs: args.askTimeoutMs } : {}),
  });
  const roots = folders(args.roots);
  const { session, close } = await openCliSession({
    roots,
    policyFile: args.policyFile,
    gate: host.gate,
    askHost: host.askHost,
    liveRoots: host.roots,
    vocabulary: host.vocabulary,
    allowDomains: args.allowDomains,
    audit,
  });
  host.attach(session, roots);
  const closed = new Promise<void>((resolve) => {
    host.server.onclose = () => resolve();
  });
  const stop = (): void => {
    void host.server.close();
  };
  process.on('SIGINT', stop);
  process.on('SIGTERM', stop);
  process.stdin.on('end', stop);
  try {
    await host.connect(new LineTransport(process.stdin, process.stdout, warn));
    await closed;
    return 0;
  } finally {
    process.off('SIGINT', stop);
    process.off('SIGTERM', stop);
    await close();
  }
}
