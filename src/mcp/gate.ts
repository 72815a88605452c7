import { ErrorCode, McpError } from '@modelcontextprotocol/sdk/types.js';
import { cancelled } from '../core/errors.ts';
import {
  allowedByRules,
  askedEveryTime,
  askRuleKind,
  declinedReason,
  type GateCall,
  type Verdict,
} from '../core/gate.ts';
import type { Gate } from '../core/ports.ts';
import type { HostDecider } from '../core/shell/port.ts';
import { describeProtectedGlobs } from '../core/policy/protected.ts';
import { markdownText } from '../core/text/escape.ts';

/**
 * How the MCP server decides what no rule settles: `approve` trusts the client's own confirmation,
 * `elicit` asks the person through the client for every call no rule allows, `deny` refuses all.
 * Whatever the mode, a call an `ask` rule covers (a secret, a protected write, tainted bytes, a file
 * with several names) is asked through elicitation every time, unless `allowSecrets`.
 */
export type McpGateMode = 'approve' | 'elicit' | 'deny';

/** A form elicitation's outcome, as the SDK's `elicitInput` returns it. */
export interface ElicitOutcome {
  readonly action: 'accept' | 'decline' | 'cancel';
  readonly content?: { readonly [key: string]: unknown } | undefined;
}

/** What the gate needs of the MCP server: whether the client can be asked, and asking it. */
export interface Elicitor {
  readonly canElicit: () => boolean;
  readonly elicit: (message: string, schema: ConfirmSchema, signal: AbortSignal) => Promise<ElicitOutcome>;
  /** How long a question waits (`--ask-timeout`); undefined: as long as the person takes. */
  readonly askTimeoutMs?: number | undefined;
}

/** The form the person fills in (arrays mutable only because the SDK's types want them so). */
export interface ConfirmSchema {
  readonly type: 'object';
  readonly properties: {
    readonly decision: {
      readonly type: 'string';
      readonly title: string;
      readonly description: string;
      readonly enum: string[];
      readonly default: string;
    };
  };
  readonly required: string[];
}

const REFUSE = 'refuse';
const ALLOW = 'allow once';

// One required field whose default refuses: some clients accept an empty form without showing it.
const CONFIRM_SCHEMA: ConfirmSchema = {
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      description: `Choose "${ALLOW}" to let this one call run.`,
      enum: [REFUSE, ALLOW],
      default: REFUSE,
    },
  },
  required: ['decision'],
};

export function mcpGate(mode: McpGateMode, allowSecrets: boolean, elicitor: Elicitor): Gate {
  return async (call, signal): Promise<Verdict> => {
    if (mode === 'deny')
      return refused(call, `this server runs with --gate deny, which refuses every call.`, 'Do not retry.');
    const everyTime = askedEveryTime(call) !== undefined;
    if (everyTime && allowSecrets) return { allow: true, decidedBy: 'cli' };
    if (allowedByRules(call)) return { allow: true, decidedBy: 'rule' };
    if (!everyTime && mode === 'approve') return { allow: true, decidedBy: 'auto-approval' };
    if (!elicitor.canElicit()) {
      return refused(
        call,
        `${reasonToAsk(call)}, so the person must confirm it, and this MCP client cannot ask them (it does not support elicitation).`,
        "Do not retry. The person can allow it by adding an allow rule for the path to the server's --policy file, or by starting the server with --allow-secrets.",
      );
    }
    let answer: ElicitOutcome;
    try {
      answer = await elicitor.elicit(message(call), CONFIRM_SCHEMA, signal);
    } catch (e) {
      if (signal.aborted) throw cancelled();
      if (isUnanswered(e)) {
        const waited =
          elicitor.askTimeoutMs === undefined
            ? ''
            : ` within ${formatSeconds(elicitor.askTimeoutMs)} (the server's --ask-timeout)`;
        return refused(
          call,
          `${reasonToAsk(call)}, so the person was asked to confirm it, and did not answer${waited}.`,
          'It did not run. Ask the user whether they want it before calling it again.',
        );
      }
      return refused(
        call,
        `${reasonToAsk(call)}, so the person must confirm it, and the MCP client could not show them the question (${e instanceof Error ? e.message : String(e)}).`,
        "It did not run. Tell the user the question could not be shown; their MCP client's log says why.",
      );
    }
    if (answer.action === 'accept' && answer.content?.['decision'] === ALLOW)
      return { allow: true, decidedBy: 'person' };
    return { allow: false, decidedBy: 'person', reason: declinedReason(call) };
  };
}

/** The question ended with no answer: the wait ran out (-32001), or the client went away (-32000). */
function isUnanswered(e: unknown): boolean {
  return e instanceof McpError && (e.code === ErrorCode.RequestTimeout || e.code === ErrorCode.ConnectionClosed);
}

function formatSeconds(ms: number): string {
  return ms % 1000 === 0 ? `${ms / 1000} s` : `${(ms / 1000).toFixed(1)} s`;
}

function refused(call: GateCall, why: string, next: string): Verdict {
  return {
    allow: false,
    decidedBy: 'cli',
    reason: { what: `${call.tool} on ${paths(call)} was refused: ${why}`, next },
  };
}

function paths(call: GateCall): string {
  return call.targets.map((t) => `"${t.display}"`).join(', ') || 'the workspace';
}

/** Why the person is asked (as the core decided it), as one clause. */
function reasonToAsk(call: GateCall): string {
  const because = askedEveryTime(call);
  switch (because?.kind) {
    case 'taint':
      return `it works on content staged from "${because.from}", which the rule "${because.rule}" protects`;
    case 'protected-writes':
      return `allow_protected_writes lets the command write protected files (${describeProtectedGlobs(because.globs)})`;
    case 'links':
      return `"${because.target.display}" has ${because.links} names (hard links), one of which may be protected`;
    case 'rule':
      return `"${because.target.display}" matches the ${askRuleKind(because.target)} rule "${because.target.rule}"${because.target.reason ? ` (${because.target.reason})` : ''}`;
    case 'secret':
      return 'a rule asks about it every time';
    case undefined:
      return 'no rule allows it';
  }
}

/**
 * The question, as clients show it: Markdown, in paragraphs (a single line break is a space there).
 * Security: the summary, paths and reason carry the model's text (commands, paths, patterns), so
 * each goes through `markdownText`; only the tool's name, one of ours, is written as it is.
 */
function message(call: GateCall): string {
  return [
    `Workspace Tools: allow ${call.tool}?`,
    markdownText(call.summary),
    `Paths: ${markdownText(paths(call))}`,
    `Asked because ${markdownText(reasonToAsk(call))}.`,
  ].join('\n\n');
}

const ALLOW_SESSION = 'allow for this session';

const HOST_SCHEMA: ConfirmSchema = {
  type: 'object',
  properties: {
    decision: {
      type: 'string',
      title: 'Decision',
      description: `"${ALLOW}" lets this connection through; "${ALLOW_SESSION}" lets commands reach the host until the server stops.`,
      enum: [REFUSE, ALLOW, ALLOW_SESSION],
      default: REFUSE,
    },
  },
  required: ['decision'],
};

/**
 * Asks the person about a host a command wants to reach that no `--allow-domain` allows, through
 * elicitation; `deny` mode, a client that cannot elicit, or any answer but an allow refuses it.
 * `--allow-secrets` does not cover hosts: it is about files.
 */
export function mcpHostDecider(mode: McpGateMode, elicitor: Elicitor): HostDecider {
  return async (request, signal) => {
    if (mode === 'deny' || !elicitor.canElicit()) return 'deny';
    const where = request.port === undefined ? request.host : `${request.host}:${request.port}`;
    // Security: the host and the commands are the model's (markdownText, as in `message`).
    const message = [
      `Workspace Tools: allow a sandboxed command to connect to ${markdownText(where)}?`,
      `Running: ${request.commands.length === 0 ? '(ended)' : request.commands.map(markdownText).join(' \\| ')}`,
      `${markdownText(request.host)} is not allowed by --allow-domain.`,
    ].join('\n\n');
    try {
      const answer = await elicitor.elicit(message, HOST_SCHEMA, signal);
      const decision = answer.action === 'accept' ? answer.content?.['decision'] : undefined;
      return decision === ALLOW ? 'allow-once' : decision === ALLOW_SESSION ? 'allow-session' : 'deny';
    } catch {
      return 'deny';
    }
  };
}
