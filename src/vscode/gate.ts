import * as vscode from 'vscode';
import { allowedByRules, askedEveryTime, declinedReason, type GateCall, type Verdict } from '../core/gate.ts';
import type { Gate } from '../core/ports.ts';
import type { SessionHosts } from '../core/shell/hosts.ts';
import type { HostDecider, HostRequest } from '../core/shell/port.ts';
import { describeCall, describeHost } from './questions.ts';

export { describeCall, describeHost, whyAsked } from './questions.ts';

export type Answer = 'allow-once' | 'allow-session' | 'decline';

export interface ConfirmRequest {
  readonly message: string;
  readonly detail: string;
  /** Secrets are never remembered: only "Allow Once" is offered. */
  readonly rememberable: boolean;
  readonly call: GateCall;
}

/** Who answers a modal confirmation: the person, or (in the test host only) a scripted decider. */
export interface Decider {
  confirm(request: ConfirmRequest): Promise<Answer>;
}

const ALLOW_ONCE = 'Allow Once';
const ALLOW_SESSION = 'Allow for This Session';

/** The person, through VS Code's modal dialog: the call waits until they answer. */
export const modalDecider: Decider = {
  async confirm(request) {
    const buttons = request.rememberable ? [ALLOW_ONCE, ALLOW_SESSION] : [ALLOW_ONCE];
    const answer = await vscode.window.showWarningMessage(
      request.message,
      { modal: true, detail: request.detail },
      ...buttons,
    );
    return answer === ALLOW_ONCE ? 'allow-once' : answer === ALLOW_SESSION ? 'allow-session' : 'decline';
  },
};

export interface VscodeGateOptions {
  readonly decider: () => Decider;
  /** In an untrusted workspace every call confirms, even those VS Code would auto-approve. */
  readonly trusted: () => boolean;
  /** The session's remembered network hosts, forgotten with the other approvals. */
  readonly hosts?: () => SessionHosts | undefined;
}

/** A host question as a call, for deciders that record what they were asked. */
function hostCall(request: HostRequest): GateCall {
  return {
    tool: 'run_shell_command',
    origin: 'headless',
    risk: 'exec',
    summary: `connect to ${request.host}`,
    targets: [],
    secret: false,
  };
}

/**
 * The VS Code host's gate. Calls through `vscode.lm.invokeTool` were already confirmed by VS Code
 * from prepareInvocation's confirmation (in chat, or in VS Code's own dialog for a call outside a
 * chat turn), or auto-approved by the person's own choice; secrets are asked in a modal every time
 * regardless; palette commands are asked in a modal, which can remember the tool for this session;
 * a call VS Code runs without a prepared confirmation (`unprepared`) is asked in a modal every time.
 */
export class VscodeGate {
  private readonly approvals = new Set<string>();
  private readonly options: VscodeGateOptions;

  constructor(options: VscodeGateOptions) {
    this.options = options;
  }

  /** Forgets every "Allow for This Session" answer (network hosts allowed for the session among them). */
  resetApprovals(): number {
    const count = this.approvals.size + (this.options.hosts?.()?.forget() ?? 0);
    this.approvals.clear();
    return count;
  }

  /**
   * A host a command wants to reach that no setting allows, asked in a modal naming it: "Allow
   * Once" lets this connection through, "Allow for This Session" the host until the window closes
   * or approvals are reset; closing the dialog refuses it.
   */
  readonly askHost: HostDecider = async (request) => {
    const answer = await this.options
      .decider()
      .confirm({ ...describeHost(request), rememberable: true, call: hostCall(request) });
    return answer === 'allow-once' ? 'allow-once' : answer === 'allow-session' ? 'allow-session' : 'deny';
  };

  readonly gate: Gate = async (call): Promise<Verdict> => {
    // Security: a secret, tainted bytes or a file with several names (which VS Code's own confirmation
    // did not describe) are asked every time: no allow rule and no remembered answer skips that.
    const everyTime = askedEveryTime(call) !== undefined;
    if (allowedByRules(call)) return { allow: true, decidedBy: 'rule' };
    const trusted = this.options.trusted();
    // Security: a secret is asked every time, even when VS Code auto-approves the tool.
    const confirmedByVscode = call.origin === 'chat' || call.origin === 'api';
    const mustAsk = everyTime || !trusted || !confirmedByVscode;
    if (!mustAsk) return { allow: true, decidedBy: 'person' };
    const key = `${call.tool}`;
    // Security: a call never shown to the person is asked every time; "Allow for This Session" was
    // given for calls the person saw (palette) and does not cover one they never saw.
    const rememberable = !everyTime && trusted && call.origin !== 'unprepared';
    if (rememberable && this.approvals.has(key)) return { allow: true, decidedBy: 'person' };
    const answer = await this.options.decider().confirm({ ...describeCall(call), rememberable, call });
    if (answer === 'allow-session' && rememberable) this.approvals.add(key);
    if (answer !== 'decline') return { allow: true, decidedBy: 'person' };
    return { allow: false, decidedBy: 'person', reason: declinedReason(call) };
  };
}
