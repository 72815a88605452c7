import { createHash } from 'node:crypto';
import type { CallOrigin } from '../core/gate.ts';
import type { Tool, ToolOutcome } from '../core/contract/tool.ts';
import { invokeTool, type InvokeOptions } from '../core/pipeline/invoke.ts';
import { prepare, type PreparedCall } from '../core/pipeline/prepare.ts';
import type { Session } from '../core/pipeline/session.ts';

/*
 * A chat call's two halves, from VS Code's prepareInvocation (the confirmation) to its invoke (the
 * run), without a `vscode` import so tests drive them as the extension does. The call prepared for
 * the confirmation is the call that runs: validated, planned (`targets`) and judged once.
 */

/** Calls prepared but not yet invoked, remembered at most (the oldest go first): one the person declined is never invoked. */
const MAX_CONFIRMED = 256;

/**
 * Each call as it was prepared and confirmed, carried from prepareInvocation to its invoke, which
 * VS Code calls with the same input but no id in common: matched by tool, chat and input, the latest
 * confirmation first (an earlier one of the same call may have been declined, and is never invoked).
 * Security: the chat is part of the match, so two identical calls pending in two chats cannot
 * swap confirmations (one chat's call running as what the other chat's person confirmed).
 */
export class ConfirmedCalls {
  private readonly calls: { readonly key: string; readonly prepared: PreparedCall; readonly asksItself: boolean }[] =
    [];

  private static key(tool: string, chat: string, input: unknown): string {
    return createHash('sha256')
      .update(tool)
      .update('\0')
      .update(chat)
      .update('\0')
      .update(JSON.stringify(input) ?? '')
      .digest('hex');
  }

  remember(tool: string, chat: string, input: unknown, prepared: PreparedCall, asksItself = false): void {
    if (this.calls.length >= MAX_CONFIRMED) this.calls.shift();
    this.calls.push({ key: ConfirmedCalls.key(tool, chat, input), prepared, asksItself });
  }

  /** The call as it was prepared and confirmed, and whether no confirmation was shown because it asks the person itself when it runs. */
  take(
    tool: string,
    chat: string,
    input: unknown,
  ): { readonly prepared: PreparedCall; readonly asksItself: boolean } | undefined {
    const key = ConfirmedCalls.key(tool, chat, input);
    for (let at = this.calls.length - 1; at >= 0; at--)
      if (this.calls[at]!.key === key) return this.calls.splice(at, 1)[0]!;
    return undefined;
  }
}

/** What one chat call runs as, once VS Code invokes it. */
export interface ChatRun {
  /** The call as prepared for its confirmation (or, when none was, prepared now); undefined when its input is invalid (the run then fails, narrated). */
  readonly prepared: PreparedCall | undefined;
  readonly origin: CallOrigin;
  /** No confirmation was shown because the call asks the person itself before it runs (a write to disk in a chat). */
  readonly asksItself: boolean;
}

/** The chat calls of one session: prepared for their confirmation once, and carried to their run. */
export class ChatCalls {
  private readonly session: Session;
  private readonly confirmed = new ConfirmedCalls();

  constructor(session: Session) {
    this.session = session;
  }

  /**
   * prepareInvocation's half: the call prepared for its confirmation (undefined when its input is
   * invalid: nothing is confirmed, and the run reports the narrated error), remembered for its run in
   * `chat` (undefined: only shown, never run, as the test host's preview); `asksItself` says whether
   * it will ask the person itself instead of VS Code's confirmation.
   */
  prepare(
    tool: Tool,
    chat: string | undefined,
    input: unknown,
    asksItself: (prepared: PreparedCall) => boolean,
  ): { readonly prepared: PreparedCall; readonly asksItself: boolean } | undefined {
    let prepared: PreparedCall;
    try {
      prepared = prepare(this.session, tool, input, 'chat');
    } catch {
      return undefined;
    }
    const asks = asksItself(prepared);
    if (chat !== undefined) this.confirmed.remember(tool.name, chat, input, prepared, asks);
    return { prepared, asksItself: asks };
  }

  /**
   * invoke's half: the call as it was confirmed in this chat. Security: a call no confirmation was
   * prepared for (its preparation failed, so VS Code showed nothing and ran it) was never seen by
   * the person: it runs as `unprepared`, which the gate asks about in a modal.
   */
  take(tool: Tool, chat: string, input: unknown, inChatTurn: boolean): ChatRun {
    const taken = this.confirmed.take(tool.name, chat, input);
    if (taken !== undefined)
      return { prepared: taken.prepared, origin: inChatTurn ? 'chat' : 'api', asksItself: taken.asksItself };
    let prepared: PreparedCall | undefined;
    try {
      prepared = prepare(this.session, tool, input, 'unprepared');
    } catch {
      prepared = undefined;
    }
    return { prepared, origin: 'unprepared', asksItself: false };
  }

  /** Runs the call as `run` says, through the one pipeline, without preparing it again. */
  run<R>(
    tool: Tool<R>,
    input: unknown,
    run: ChatRun,
    options: Omit<InvokeOptions, 'origin' | 'prepared'>,
  ): Promise<ToolOutcome<R>> {
    return invokeTool(this.session, tool, input, {
      ...options,
      origin: run.origin,
      ...(run.prepared ? { prepared: run.prepared } : {}),
    });
  }
}
