import { createHash } from 'node:crypto';
import * as vscode from 'vscode';
import { isSandboxError } from '../core/errors.ts';
import { availableTools } from '../core/pipeline/registry.ts';
import type { Session } from '../core/pipeline/session.ts';
import type { DiskWrite, Tool, ToolOutcome } from '../core/contract/tool.ts';
import type { ImagePart } from '../core/images/part.ts';
import { declinedReason, type CallOrigin, type GateCall } from '../core/gate.ts';
import { prepare, type PreparedCall } from '../core/pipeline/prepare.ts';
import { invoke } from '../core/pipeline/invoke.ts';
import { confirmationMarkdown, targetList } from './questions.ts';
import { plainText } from '../core/text/escape.ts';
import { withSignal } from './cancellation.ts';
import type { ToolName } from '../core/contract/names.ts';
import { DEFAULT_PAGE, type PageBudget } from '../core/results/budget.ts';

/** Extra lines a host feature adds to a tool's confirmation (e.g. save_media's +/− and diff link). */
/** More for the chat confirmation of a call that writes to disk (its diffs), from what it writes. */
export type ConfirmationExtras = (writes: readonly DiskWrite[]) => vscode.MarkdownString | undefined;

/** A call's outcome and what a host feature adds to the model's text. */
export interface NotedOutcome {
  readonly outcome: ToolOutcome;
  readonly note?: string;
}

/** Work a host feature wraps around a call (e.g. diagnostics before and after a save); `note` is appended to the result. */
export type AroundInvoke = (writes: readonly DiskWrite[], run: () => Promise<ToolOutcome>, signal: AbortSignal) => Promise<NotedOutcome>;

/**
 * Asks the person about a call that writes to disk, in a chat, before it runs (in place of VS Code's
 * confirmation, whose main button would stop asking for the session): true to run it.
 */
export type AskBeforeWriting = (call: GateCall, writes: readonly DiskWrite[], toolInvocationToken: vscode.ChatParticipantToolToken | undefined, token: vscode.CancellationToken) => Promise<boolean>;

export interface ToolHostHooks {
  readonly confirmationExtras?: ConfirmationExtras;
  readonly aroundInvoke?: AroundInvoke;
  readonly askBeforeWriting?: AskBeforeWriting;
}

/** One page of result: 50 KiB, or less when VS Code gives the model's token budget for the result. */
function pageOf(options: vscode.LanguageModelToolInvocationOptions<unknown>, token: vscode.CancellationToken): PageBudget {
  const tokens = options.tokenizationOptions;
  if (!tokens || !(tokens.tokenBudget > 0)) return DEFAULT_PAGE;
  return { ...DEFAULT_PAGE, tokens: { budget: tokens.tokenBudget, count: async (text) => await tokens.countTokens(text, token) } };
}

/**
 * The chat confirmation for one call: no side effects, nothing opened on disk. `confirming` learns
 * the call as it is prepared and confirmed (to carry it to its run), and whether it asks the person
 * itself when it runs (`inChat`: a call that writes to disk, when the host has `askBeforeWriting`):
 * then VS Code's confirmation is not shown.
 */
export function confirmationFor(session: Session, tool: Tool, input: unknown, hooks: ToolHostHooks, confirming?: (prepared: PreparedCall, asksItself: boolean) => void, inChat = false): vscode.PreparedToolInvocation {
  let prepared: PreparedCall;
  try {
    prepared = prepare(session, tool, input, 'chat');
  } catch {
    // Invalid input: invoke reports the narrated error and nothing runs, so there is nothing to confirm.
    return { invocationMessage: `${tool.displayName}: checking arguments` };
  }
  const { call, batch, writes } = prepared;
  const denied = call.targets.some((t) => t.action === 'deny');
  const asksItself = inChat && !denied && writes.length > 0 && hooks.askBeforeWriting !== undefined;
  confirming?.(prepared, asksItself);
  // Security: the summary and paths carry the model's own text (globs, patterns, names, commands):
  // plain text in the progress line and the title, escaped Markdown in the message (questions.ts).
  const invocationMessage = plainText(`${call.summary.charAt(0).toUpperCase()}${call.summary.slice(1)}`);
  if (denied || asksItself) return { invocationMessage };
  // A batch whose every path is refused by a rule or asked in its own dialog: nothing for this confirmation to cover.
  if (batch && call.targets.length === 0) return { invocationMessage };
  if (call.risk !== 'exec' && call.targets.length > 0 && call.targets.every((t) => t.action === 'allow')) return { invocationMessage };
  const message = new vscode.MarkdownString(confirmationMarkdown(call, batch));
  const extras = writes.length > 0 ? hooks.confirmationExtras?.(writes) : undefined;
  if (extras) {
    message.appendMarkdown('\n');
    message.appendMarkdown(extras.value);
    message.isTrusted = extras.isTrusted ?? false;
  }
  return {
    invocationMessage,
    confirmationMessages: { title: plainText(`${tool.displayName}: ${targetList(call)}`), message },
  };
}

/** VS Code's image part (LanguageModelDataPart), in the versions that have it (newer than the API this extension is built against). */
interface DataPartApi {
  image(data: Uint8Array, mimeType: string): unknown;
}

const dataParts = (vscode as unknown as { readonly LanguageModelDataPart?: DataPartApi }).LanguageModelDataPart;

/** The model's text, and the result's images as image parts where this VS Code can pass them (otherwise a line says so). */
export function toolResult(text: string, images: readonly ImagePart[]): vscode.LanguageModelToolResult {
  const canShow = dataParts !== undefined && typeof dataParts.image === 'function';
  const shown = images.length > 0 && !canShow ? `${text}\n(This VS Code cannot pass images to the model: only the description above reaches it.)` : text;
  const result = new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(shown)]);
  if (canShow) for (const image of images) result.content.push(dataParts.image(image.data, image.mime));
  return result;
}

/** Calls prepared but not yet invoked, remembered at most (the oldest go first): one the person declined is never invoked. */
const MAX_CONFIRMED = 256;

/** A URI as VS Code hands it over (a Uri, or its plain components), as a string; undefined for anything else. */
function uriString(value: unknown): string | undefined {
  if (value instanceof vscode.Uri) return value.toString();
  if (typeof value !== 'object' || value === null) return undefined;
  const { scheme, authority, path, query, fragment } = value as Record<string, unknown>;
  if (typeof scheme !== 'string' || typeof path !== 'string') return undefined;
  const text = (part: unknown): string => (typeof part === 'string' ? part : '');
  return vscode.Uri.from({ scheme, authority: text(authority), path, query: text(query), fragment: text(fragment) }).toString();
}

/**
 * The chat a call belongs to, from what VS Code passes beyond its typed API: prepareInvocation gets
 * `chatSessionResource` (older versions `chatSessionId`), invoke a `toolInvocationToken` holding
 * `sessionResource` (or `sessionId`). Empty outside a chat.
 */
export function chatOf(fields: { readonly resource?: unknown; readonly id?: unknown }): string {
  const resource = uriString(fields.resource);
  if (resource !== undefined) return `resource:${resource}`;
  return typeof fields.id === 'string' && fields.id !== '' ? `id:${fields.id}` : '';
}

function chatOfPrepare(options: vscode.LanguageModelToolInvocationPrepareOptions<unknown>): string {
  const raw = options as unknown as Record<string, unknown>;
  return chatOf({ resource: raw.chatSessionResource, id: raw.chatSessionId });
}

function chatOfInvoke(options: vscode.LanguageModelToolInvocationOptions<unknown>): string {
  const token: unknown = options.toolInvocationToken;
  if (typeof token !== 'object' || token === null) return '';
  const raw = token as Record<string, unknown>;
  return chatOf({ resource: raw.sessionResource, id: raw.sessionId });
}

/**
 * Each call as it was prepared and confirmed, carried from prepareInvocation to its invoke, which
 * VS Code calls with the same input but no id in common: matched by tool, chat and input, the latest
 * confirmation first (an earlier one of the same call may have been declined, and is never invoked).
 * Security: the chat is part of the match, so two identical calls pending in two chats cannot
 * swap confirmations (one chat's call running as what the other chat's person confirmed).
 */
export class ConfirmedCalls {
  private readonly calls: { readonly key: string; readonly prepared: PreparedCall; readonly asksItself: boolean }[] = [];

  private static key(tool: string, chat: string, input: unknown): string {
    return createHash('sha256').update(tool).update('\0').update(chat).update('\0').update(JSON.stringify(input) ?? '').digest('hex');
  }

  remember(tool: string, chat: string, input: unknown, prepared: PreparedCall, asksItself = false): void {
    if (this.calls.length >= MAX_CONFIRMED) this.calls.shift();
    this.calls.push({ key: ConfirmedCalls.key(tool, chat, input), prepared, asksItself });
  }

  /** The call as it was prepared and confirmed, and whether no confirmation was shown because it asks the person itself when it runs. */
  take(tool: string, chat: string, input: unknown): { readonly prepared: PreparedCall; readonly asksItself: boolean } | undefined {
    const key = ConfirmedCalls.key(tool, chat, input);
    for (let at = this.calls.length - 1; at >= 0; at--) if (this.calls[at]!.key === key) return this.calls.splice(at, 1)[0]!;
    return undefined;
  }
}

/**
 * Keeps the registered language model tools in step with what the session can serve (trust,
 * capabilities): a tool that cannot run is not registered at all.
 */
export class LanguageModelToolRegistrations implements vscode.Disposable {
  private readonly registered = new Map<ToolName, vscode.Disposable>();
  private readonly session: Session;
  private readonly hooks: ToolHostHooks;
  private readonly confirmed = new ConfirmedCalls();

  constructor(session: Session, hooks: ToolHostHooks = {}) {
    this.session = session;
    this.hooks = hooks;
  }

  sync(): void {
    const wanted = new Set(availableTools(this.session).map((t) => t.name));
    for (const [name, registration] of this.registered) {
      if (!wanted.has(name)) { registration.dispose(); this.registered.delete(name); }
    }
    for (const tool of availableTools(this.session)) {
      if (!this.registered.has(tool.name)) this.registered.set(tool.name, this.register(tool));
    }
  }

  get names(): string[] { return [...this.registered.keys()]; }

  private register(tool: Tool): vscode.Disposable {
    return vscode.lm.registerTool<unknown>(tool.name, this.implementation(tool));
  }

  /** A call no confirmation was prepared for, prepared now (undefined when its input is invalid: the run then fails, narrated). */
  private prepareNow(tool: Tool, input: unknown, origin: CallOrigin): PreparedCall | undefined {
    try {
      return prepare(this.session, tool, input, origin);
    } catch {
      return undefined;
    }
  }

  /** What VS Code calls for `tool` (exposed for the test host, which cannot open a second chat). */
  implementation(tool: Tool): vscode.LanguageModelTool<unknown> {
    return {
      prepareInvocation: (options) => {
        const chat = chatOfPrepare(options);
        return confirmationFor(this.session, tool, options.input, this.hooks, (prepared, asksItself) => this.confirmed.remember(tool.name, chat, options.input, prepared, asksItself), chat !== '');
      },
      invoke: async (options, token) => {
        // The call as the person was shown it, prepared once: it is the call that runs.
        const taken = this.confirmed.take(tool.name, chatOfInvoke(options), options.input);
        // Security: no confirmation was shown for this call (it asks itself): the person is asked now, before anything runs.
        if (taken?.asksItself) {
          const declined = await this.askBeforeWriting(taken.prepared, options, token);
          if (declined !== undefined) return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(declined)]);
        }
        // Security: a call no confirmation was prepared for (its preparation failed, so VS Code
        // showed nothing and ran it) was never seen by the person: the gate asks in a modal.
        const origin: CallOrigin = taken === undefined ? 'unprepared' : options.toolInvocationToken === undefined ? 'api' : 'chat';
        const prepared = taken?.prepared ?? this.prepareNow(tool, options.input, origin);
        try {
          const { outcome, note } = await withSignal(token, (signal): Promise<NotedOutcome> => {
            const run = (): Promise<ToolOutcome> => invoke(this.session, tool.name, options.input, { signal, origin, page: pageOf(options, token), ...(prepared ? { prepared } : {}) });
            const writes = prepared?.writes ?? [];
            return this.hooks.aroundInvoke && writes.length > 0 ? this.hooks.aroundInvoke(writes, run, signal) : run().then((outcome) => ({ outcome }));
          });
          return toolResult(note ? `${outcome.text}\n${note}` : outcome.text, outcome.images ?? []);
        } catch (e) {
          if (!isSandboxError(e)) throw e;
          // The model reads the message, so the code leads it. Bad arguments are thrown (the model
          // should fix its input); an outcome such as a refusal or a conflict is returned as the
          // result, as VS Code does for "Skip": thrown, Copilot adds "check your input and try
          // again" after a message that says not to retry.
          const text = `${e.code}: ${e.message}`;
          if (e.code === 'E_SANDBOX_INVALID_INPUT') throw new Error(text, { cause: e });
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(text)]);
        }
      },
    };
  }

  /** Asks the person about a call that writes to disk before it runs; the model's text when they declined, undefined when they allowed it. */
  private async askBeforeWriting(prepared: PreparedCall, options: vscode.LanguageModelToolInvocationOptions<unknown>, token: vscode.CancellationToken): Promise<string | undefined> {
    const { tool, call, writes } = prepared;
    const ask = this.hooks.askBeforeWriting;
    const started = Date.now();
    if (ask === undefined || await ask(call, writes, options.toolInvocationToken, token)) return undefined;
    // The audit trail records the call the person declined, as the gate's own refusals are.
    this.session.log.audit({ tool: tool.name, target: call.targets.map((t) => t.display).join(', '), verdict: 'refused', decidedBy: 'person', durationMs: Date.now() - started, outcome: 'E_SANDBOX_REFUSED' });
    const { what, next } = declinedReason(call);
    return `E_SANDBOX_REFUSED: ${what} ${next}`;
  }

  dispose(): void {
    for (const registration of this.registered.values()) registration.dispose();
    this.registered.clear();
  }
}
