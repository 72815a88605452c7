import * as vscode from 'vscode';
import { callFailure } from '../core/pipeline/failure.ts';
import { availableTools } from '../core/pipeline/registry.ts';
import type { Session } from '../core/pipeline/session.ts';
import type { DiskWrite, Tool, ToolOutcome } from '../core/contract/tool.ts';
import type { ImagePart } from '../core/images/part.ts';
import { allowedByRules, declinedReason, type GateCall } from '../core/gate.ts';
import type { PreparedCall } from '../core/pipeline/prepare.ts';
import { ChatCalls } from './chat-calls.ts';
import { confirmationMarkdown, targetList } from './questions.ts';
import { plainText } from '../core/text/escape.ts';
import { withSignal } from './cancellation.ts';
import type { ToolName } from '../core/contract/names.ts';
import { DEFAULT_PAGE, type PageBudget } from '../core/paging/budget.ts';

/** Extra lines a host feature adds to a tool's confirmation (e.g. save_media's +/− and diff link). */
/** More for the chat confirmation of a call that writes to disk (its diffs), from what it writes. */
export type ConfirmationExtras = (writes: readonly DiskWrite[]) => vscode.MarkdownString | undefined;

/** A call's outcome and what a host feature adds to the model's text. */
export interface NotedOutcome {
  readonly outcome: ToolOutcome;
  readonly note?: string;
}

/** Work a host feature wraps around a call (e.g. diagnostics before and after a save); `note` is appended to the result. */
export type AroundInvoke = (
  writes: readonly DiskWrite[],
  run: () => Promise<ToolOutcome>,
  signal: AbortSignal,
) => Promise<NotedOutcome>;

/**
 * Asks the person about a call that writes to disk, in a chat, before it runs (in place of VS Code's
 * confirmation, whose main button would stop asking for the session): true to run it.
 */
export type AskBeforeWriting = (
  call: GateCall,
  writes: readonly DiskWrite[],
  toolInvocationToken: vscode.ChatParticipantToolToken | undefined,
  token: vscode.CancellationToken,
) => Promise<boolean>;

export interface ToolHostHooks {
  readonly confirmationExtras?: ConfirmationExtras;
  readonly aroundInvoke?: AroundInvoke;
  readonly askBeforeWriting?: AskBeforeWriting;
}

/** One page of result: 50 KiB, or less when VS Code gives the model's token budget for the result. */
function pageOf(
  options: vscode.LanguageModelToolInvocationOptions<unknown>,
  token: vscode.CancellationToken,
): PageBudget {
  const tokens = options.tokenizationOptions;
  if (!tokens || !(tokens.tokenBudget > 0)) return DEFAULT_PAGE;
  return {
    ...DEFAULT_PAGE,
    tokens: { budget: tokens.tokenBudget, count: async (text) => await tokens.countTokens(text, token) },
  };
}

/**
 * Whether a prepared chat call asks the person itself when it runs (`inChat`: a call that writes to
 * disk, when the host has `askBeforeWriting`), so that VS Code's confirmation is not shown.
 */
export function asksItselfIn(prepared: PreparedCall, hooks: ToolHostHooks, inChat: boolean): boolean {
  const denied = prepared.call.targets.some((t) => t.action === 'deny');
  return inChat && !denied && prepared.writes.length > 0 && hooks.askBeforeWriting !== undefined;
}

/**
 * The chat confirmation for one call, as prepared (`undefined`: its input is invalid): no side
 * effects, nothing opened on disk.
 */
export function confirmationFor(
  tool: Tool,
  prepared: PreparedCall | undefined,
  asksItself: boolean,
  hooks: ToolHostHooks,
): vscode.PreparedToolInvocation {
  // Invalid input: invoke reports the narrated error and nothing runs, so there is nothing to confirm.
  if (prepared === undefined) return { invocationMessage: `${tool.displayName}: checking arguments` };
  const { call, batch, writes } = prepared;
  const denied = call.targets.some((t) => t.action === 'deny');
  // Security: the summary and paths carry the model's own text (globs, patterns, names, commands):
  // plain text in the progress line and the title, escaped Markdown in the message (questions.ts).
  const invocationMessage = plainText(`${call.summary.charAt(0).toUpperCase()}${call.summary.slice(1)}`);
  if (denied || asksItself) return { invocationMessage };
  // A batch whose every path is refused by a rule or asked in its own dialog: nothing for this confirmation to cover.
  if (batch && call.targets.length === 0) return { invocationMessage };
  // The rules alone allow it (and nothing asks every time): nothing for the person to confirm.
  if (allowedByRules(call)) return { invocationMessage };
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
  const shown =
    images.length > 0 && !canShow
      ? `${text}\n(This VS Code cannot pass images to the model: only the description above reaches it.)`
      : text;
  const result = new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(shown)]);
  if (canShow) for (const image of images) result.content.push(dataParts.image(image.data, image.mime));
  return result;
}

/** A URI as VS Code hands it over (a Uri, or its plain components), as a string; undefined for anything else. */
function uriString(value: unknown): string | undefined {
  if (value instanceof vscode.Uri) return value.toString();
  if (typeof value !== 'object' || value === null) return undefined;
  const { scheme, authority, path, query, fragment } = value as Record<string, unknown>;
  if (typeof scheme !== 'string' || typeof path !== 'string') return undefined;
  const text = (part: unknown): string => (typeof part === 'string' ? part : '');
  return vscode.Uri.from({
    scheme,
    authority: text(authority),
    path,
    query: text(query),
    fragment: text(fragment),
  }).toString();
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
 * Keeps the registered language model tools in step with what the session can serve (trust,
 * capabilities): a tool that cannot run is not registered at all.
 */
export class LanguageModelToolRegistrations implements vscode.Disposable {
  private readonly registered = new Map<ToolName, vscode.Disposable>();
  private readonly session: Session;
  private readonly hooks: ToolHostHooks;
  private readonly chat: ChatCalls;

  constructor(session: Session, hooks: ToolHostHooks = {}) {
    this.session = session;
    this.hooks = hooks;
    this.chat = new ChatCalls(session);
  }

  /** What prepareInvocation answers for this call outside any chat, remembered for no run (the test host's preview). */
  confirmation(tool: Tool, input: unknown): vscode.PreparedToolInvocation {
    const made = this.chat.prepare(tool, undefined, input, (prepared) => asksItselfIn(prepared, this.hooks, false));
    return confirmationFor(tool, made?.prepared, made?.asksItself ?? false, this.hooks);
  }

  sync(): void {
    const wanted = new Set(availableTools(this.session).map((t) => t.name));
    for (const [name, registration] of this.registered) {
      if (!wanted.has(name)) {
        registration.dispose();
        this.registered.delete(name);
      }
    }
    for (const tool of availableTools(this.session)) {
      if (!this.registered.has(tool.name)) this.registered.set(tool.name, this.register(tool));
    }
  }

  get names(): string[] {
    return [...this.registered.keys()];
  }

  private register(tool: Tool): vscode.Disposable {
    return vscode.lm.registerTool<unknown>(tool.name, this.implementation(tool));
  }

  /** What VS Code calls for `tool` (exposed for the test host, which cannot open a second chat). */
  implementation(tool: Tool): vscode.LanguageModelTool<unknown> {
    return {
      prepareInvocation: (options) => {
        const chat = chatOfPrepare(options);
        const made = this.chat.prepare(tool, chat, options.input, (prepared) =>
          asksItselfIn(prepared, this.hooks, chat !== ''),
        );
        return confirmationFor(tool, made?.prepared, made?.asksItself ?? false, this.hooks);
      },
      invoke: async (options, token) => {
        // The call as the person was shown it, prepared once: it is the call that runs.
        const run = this.chat.take(
          tool,
          chatOfInvoke(options),
          options.input,
          options.toolInvocationToken !== undefined,
        );
        // Security: no confirmation was shown for this call (it asks itself): the person is asked now, before anything runs.
        if (run.asksItself && run.prepared) {
          const declined = await this.askBeforeWriting(run.prepared, options, token);
          if (declined !== undefined)
            return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(declined)]);
        }
        try {
          const { outcome, note } = await withSignal(token, (signal): Promise<NotedOutcome> => {
            const invoke = (): Promise<ToolOutcome> =>
              this.chat.run(tool, options.input, run, { signal, page: pageOf(options, token) });
            const writes = run.prepared?.writes ?? [];
            return this.hooks.aroundInvoke && writes.length > 0
              ? this.hooks.aroundInvoke(writes, invoke, signal)
              : invoke().then((outcome) => ({ outcome }));
          });
          return toolResult(note ? `${outcome.text}\n${note}` : outcome.text, outcome.images ?? []);
        } catch (e) {
          const failure = callFailure(e);
          if (failure.internal) throw e;
          // Bad arguments are thrown (the model should fix its input); an outcome such as a refusal
          // or a conflict is returned as the result, as VS Code does for "Skip": thrown, Copilot adds
          // "check your input and try again" after a message that says not to retry.
          if (failure.invalidInput) throw new Error(failure.text, { cause: e });
          return new vscode.LanguageModelToolResult([new vscode.LanguageModelTextPart(failure.text)]);
        }
      },
    };
  }

  /** Asks the person about a call that writes to disk before it runs; the model's text when they declined, undefined when they allowed it. */
  private async askBeforeWriting(
    prepared: PreparedCall,
    options: vscode.LanguageModelToolInvocationOptions<unknown>,
    token: vscode.CancellationToken,
  ): Promise<string | undefined> {
    const { tool, call, writes } = prepared;
    const ask = this.hooks.askBeforeWriting;
    const started = Date.now();
    if (ask === undefined || (await ask(call, writes, options.toolInvocationToken, token))) return undefined;
    // The audit trail records the call the person declined, as the gate's own refusals are.
    this.session.log.audit({
      tool: tool.name,
      target: call.targets.map((t) => t.display).join(', '),
      verdict: 'refused',
      decidedBy: 'person',
      durationMs: Date.now() - started,
      outcome: 'E_SANDBOX_REFUSED',
    });
    const { what, next } = declinedReason(call);
    return `E_SANDBOX_REFUSED: ${what} ${next}`;
  }

  dispose(): void {
    for (const registration of this.registered.values()) registration.dispose();
    this.registered.clear();
  }
}
