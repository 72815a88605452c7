import { createInterface } from 'node:readline';
import type { Session } from '../core/pipeline/session.ts';
import { isToolName } from '../core/pipeline/registry.ts';
import { invoke } from '../core/pipeline/invoke.ts';
import { TOOLS } from '../core/tools/index.ts';
import { SandboxError } from '../core/errors.ts';
import { callFailure } from '../core/pipeline/failure.ts';
import { USAGE, UsageError, parseArgs, type CliArgs } from './args.ts';
import { runMcpServer } from './mcp.ts';
import { unsupportedNode } from './node-version.ts';
import { folders, openCliSession } from './session.ts';
import { cliGate } from './gate.ts';

interface CallOutcome {
  readonly line: string;
  readonly ok: boolean;
}

const SIGNAL_EXIT: Record<string, number> = { SIGINT: 130, SIGTERM: 143 };

async function runCall(session: Session, toolName: unknown, input: unknown, signal: AbortSignal): Promise<CallOutcome> {
  try {
    if (typeof toolName !== 'string' || !isToolName(toolName)) {
      throw new SandboxError(
        'E_SANDBOX_INVALID_INPUT',
        `Unknown tool ${JSON.stringify(toolName)}. Tools: ${Object.keys(TOOLS).join(', ')}.`,
        '',
      );
    }
    const outcome = await invoke(session, toolName, input, { signal });
    return { line: JSON.stringify({ result: outcome.result }), ok: true };
  } catch (e) {
    const { code, message } = callFailure(e);
    return { line: JSON.stringify({ error: { code, message } }), ok: false };
  }
}

async function main(argv: readonly string[]): Promise<number> {
  const oldNode = unsupportedNode(process.version);
  if (oldNode !== undefined) {
    process.stderr.write(`workspace-tools: ${oldNode}\n`);
    return 2;
  }
  if (argv[0] === 'mcp') return runMcpServer(argv.slice(1));
  let args: CliArgs;
  try {
    args = parseArgs(argv);
  } catch (e) {
    if (!(e instanceof UsageError)) throw e;
    process.stderr.write(`${e.message ? `workspace-tools: ${e.message}\n\n` : ''}${USAGE}\n`);
    return 2;
  }
  const { session, close } = await openCliSession({
    roots: folders(args.roots),
    policyFile: args.policyFile,
    gate: cliGate(args),
    // Commands run only inside the OS sandbox, whose read denials --allow-secrets does not lift.
    allowDomains: args.allowDomains,
    audit: (entry) => {
      if (args.audit) process.stderr.write(JSON.stringify({ audit: entry }) + '\n');
    },
  });
  const controller = new AbortController();
  let lines: ReturnType<typeof createInterface> | undefined;
  let stoppedBy: string | undefined;
  // A signal cancels the call in flight and stops reading stdin; the session then cleans up and the
  // process exits with 128 + the signal's number. A second signal exits at once.
  const onSignal = (signal: NodeJS.Signals): void => {
    if (stoppedBy !== undefined) process.exit(SIGNAL_EXIT[signal] ?? 1);
    stoppedBy = signal;
    controller.abort();
    lines?.close();
  };
  process.on('SIGINT', onSignal);
  process.on('SIGTERM', onSignal);
  try {
    if (args.tool !== undefined) {
      let input: unknown;
      try {
        input = args.input === undefined ? {} : JSON.parse(args.input);
      } catch (e) {
        process.stdout.write(
          JSON.stringify({
            error: {
              code: 'E_SANDBOX_INVALID_INPUT',
              message: `The arguments are not valid JSON (${e instanceof Error ? e.message : String(e)}). Pass one JSON object.`,
            },
          }) + '\n',
        );
        return 1;
      }
      const outcome = await runCall(session, args.tool, input, controller.signal);
      process.stdout.write(outcome.line + '\n');
      return stoppedBy !== undefined ? (SIGNAL_EXIT[stoppedBy] ?? 1) : outcome.ok ? 0 : 1;
    }
    let failures = 0;
    lines = createInterface({ input: process.stdin, crlfDelay: Infinity });
    if (stoppedBy !== undefined) lines.close();
    for await (const raw of lines) {
      if (raw.trim() === '') continue;
      let request: { tool?: unknown; input?: unknown };
      try {
        request = JSON.parse(raw) as { tool?: unknown; input?: unknown };
      } catch {
        failures++;
        process.stdout.write(
          JSON.stringify({
            error: {
              code: 'E_SANDBOX_INVALID_INPUT',
              message: 'This line is not valid JSON. Send one object per line: {"tool": "...", "input": {...}}.',
            },
          }) + '\n',
        );
        continue;
      }
      const outcome = await runCall(session, request.tool, request.input ?? {}, controller.signal);
      if (!outcome.ok) failures++;
      process.stdout.write(outcome.line + '\n');
      if (controller.signal.aborted) break;
    }
    if (stoppedBy !== undefined) return SIGNAL_EXIT[stoppedBy] ?? 1;
    return failures === 0 ? 0 : 1;
  } finally {
    process.off('SIGINT', onSignal);
    process.off('SIGTERM', onSignal);
    await close();
  }
}

main(process.argv.slice(2)).then(
  (code) => {
    process.exitCode = code;
  },
  (e: unknown) => {
    process.stderr.write(`workspace-tools: ${e instanceof Error ? e.message : String(e)}\n`);
    process.exitCode = e instanceof UsageError ? 2 : 1;
  },
);
