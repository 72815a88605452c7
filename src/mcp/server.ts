import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  ListToolsRequestSchema,
  RootsListChangedNotificationSchema,
  type CallToolResult,
  type Tool as McpTool,
} from '@modelcontextprotocol/sdk/types.js';
import { callFailure } from '../core/pipeline/failure.ts';
import { toolJsonSchema } from '../core/pipeline/manifest.ts';
import type { WorkspaceRoot } from '../core/paths.ts';
import type { Gate } from '../core/ports.ts';
import { isToolName } from '../core/pipeline/registry.ts';
import { invoke } from '../core/pipeline/invoke.ts';
import type { Session } from '../core/pipeline/session.ts';
import { TOOLS } from '../core/tools/index.ts';
import { TOOL_NAMES } from '../core/contract/names.ts';
import { toolAnnotations } from './annotations.ts';
import { mcpGate, mcpHostDecider, type Elicitor, type McpGateMode } from './gate.ts';
import type { HostDecider } from '../core/shell/port.ts';
import { GuardedTransport } from './guard.ts';
import { narrowRoots } from './roots.ts';
import { mcpVocabulary, type HostVocabulary } from '../core/vocabulary.ts';
import { throttledProgress, type ProgressReporter } from '../core/results/progress.ts';

/** The one tool only the MCP server has: which folders the tools may use, once the client's roots narrowed them. */
export const LIST_ROOTS = 'list_roots';

const INSTRUCTIONS =
  'Workspace Tools: gated reads and staged writes over the workspace folders (list_roots names them). open_file returns a handle (callId), never the text: page it with artifact_read and search it with artifact_grep. Edits are staged in memory (stage_file, media_apply_patch) and written only by save_media. Errors start with a code (E_SANDBOX_...) and say what to do next; E_SANDBOX_REFUSED means the person or a rule declined: do not retry it another way.';

export interface McpHostOptions {
  readonly gate: McpGateMode;
  /** Approve what an `ask` rule covers without asking (`--allow-secrets`). */
  readonly allowSecrets: boolean;
  readonly version: string;
  /** Commands may reach hosts (`--allow-domain`): run_shell_command's openWorldHint. */
  readonly network?: boolean;
  /** Where a problem nobody asked about is told (stderr: stdout carries only JSON-RPC). */
  readonly warn: (message: string) => void;
  /**
   * How long a question to the person (an elicitation) waits for an answer, in ms, counted again
   * from each progress the client reports (`--ask-timeout`); absent: as long as the person takes,
   * like a VS Code confirmation.
   */
  readonly askTimeoutMs?: number;
}

// The longest timer Node keeps (about 24.8 days): the SDK's request timeout is a timer, and a longer one fires at once.
const NO_TIMEOUT_MS = 2 ** 31 - 1;

/** The tools as MCP lists them: the manifest's names, descriptions and schemas, with hints. */
export function mcpToolList(network = false): McpTool[] {
  const tools: McpTool[] = TOOL_NAMES.map((name) => {
    const tool = TOOLS[name];
    return {
      name,
      title: tool.displayName,
      description: tool.description,
      inputSchema: toolJsonSchema(tool) as McpTool['inputSchema'],
      annotations: toolAnnotations(name, network),
    };
  });
  tools.push({
    name: LIST_ROOTS,
    title: 'List Workspace Folders',
    description:
      "Lists the workspace folders the other tools may use, with their local paths. Paths given to the other tools are relative to these folders; with several folders, a path starts with the folder's name.",
    inputSchema: { type: 'object', properties: {}, additionalProperties: false },
    annotations: {
      title: 'List Workspace Folders',
      readOnlyHint: true,
      destructiveHint: false,
      idempotentHint: true,
      openWorldHint: false,
    },
  });
  return tools;
}

/**
 * Serves a session's tools over MCP. Built before the session, whose gate and roots come from here:
 * `gate` asks the person through the client's elicitation, `roots` are `--root` narrowed by the
 * roots the client announces. `attach` then hands it the session.
 */
export class McpToolHost {
  readonly server: Server;
  readonly gate: Gate;
  /** Asks the person about network hosts, through elicitation. */
  readonly askHost: HostDecider;
  readonly roots = (): readonly WorkspaceRoot[] => this.current;
  /** The server's words (its flags) for the session's messages; a call that finds no folder names the client's roots and --root. */
  readonly vocabulary: HostVocabulary = mcpVocabulary(() => ({
    what: `No workspace folder: the client's roots (${this.clientRoots === undefined ? 'none announced' : this.clientRoots.join(', ') || 'an empty list'}) leave none of the server's --root folders (${this.serverRoots.map((r) => r.localPath ?? r.address).join(', ') || 'none'}).`,
    next: "Tell the user: the server serves the folders its --root options name, in their MCP client's configuration, narrowed by the roots the client announces.",
  }));
  private readonly options: McpHostOptions;
  private serverRoots: readonly WorkspaceRoot[] = [];
  private current: readonly WorkspaceRoot[] = [];
  /** The roots the client last announced (file URIs), and those of them that narrowed nothing. */
  private clientRoots: readonly string[] | undefined;
  private ignoredRoots: readonly string[] = [];
  private session: Session | undefined;
  // A call waits for the roots asked of the client, so that it never runs on wider ones.
  private rootsKnown: Promise<void> = Promise.resolve();

  constructor(options: McpHostOptions) {
    this.options = options;
    this.server = new Server(
      { name: 'workspace-tools', version: options.version },
      { capabilities: { tools: {} }, instructions: INSTRUCTIONS },
    );
    const elicitor: Elicitor = {
      canElicit: () => this.server.getClientCapabilities()?.elicitation !== undefined,
      // A progress callback makes the request carry a progress token, so a client that reports progress restarts the wait.
      elicit: (message, requestedSchema, signal) =>
        this.server.elicitInput(
          { message, requestedSchema },
          {
            signal,
            timeout: options.askTimeoutMs ?? NO_TIMEOUT_MS,
            resetTimeoutOnProgress: true,
            onprogress: () => undefined,
          },
        ),
      askTimeoutMs: options.askTimeoutMs,
    };
    this.gate = mcpGate(options.gate, options.allowSecrets, elicitor);
    this.askHost = mcpHostDecider(options.gate, elicitor);
    this.server.setRequestHandler(ListToolsRequestSchema, () => ({ tools: mcpToolList(options.network ?? false) }));
    this.server.setRequestHandler(CallToolRequestSchema, (request, extra) => {
      const token = request.params._meta?.progressToken;
      // A client that passed a progress token hears how far a long call got (results so far), a few times a second at most.
      const progress =
        token === undefined
          ? undefined
          : throttledProgress((done, message) => {
              void extra
                .sendNotification({
                  method: 'notifications/progress',
                  params: { progressToken: token, progress: done, message },
                })
                .catch(() => undefined);
            });
      return this.call(request.params.name, request.params.arguments ?? {}, extra.signal, progress);
    });
    this.server.oninitialized = () => this.askRoots();
    this.server.setNotificationHandler(RootsListChangedNotificationSchema, () => this.askRoots());
  }

  /** Serves on `transport`; requests that must not run (before initialize, a malformed tools/call) are answered with a readable error. */
  connect(transport: Transport): Promise<void> {
    return this.server.connect(new GuardedTransport(transport));
  }

  /** Serves `session`, whose gate and roots are this host's, over the folders given with `--root`. */
  attach(session: Session, roots: readonly WorkspaceRoot[]): void {
    this.session = session;
    this.serverRoots = roots;
    this.current = roots;
  }

  private askRoots(): void {
    if (this.server.getClientCapabilities()?.roots === undefined) return;
    this.rootsKnown = this.server.listRoots().then(
      ({ roots }) => {
        const uris = roots.map((r) => r.uri);
        const narrowed = narrowRoots(this.serverRoots, uris);
        this.clientRoots = uris;
        this.current = narrowed.roots;
        this.ignoredRoots = narrowed.ignored;
        if (narrowed.ignored.length > 0) this.options.warn(ignoredRootsLine(narrowed.ignored, this.serverRoots));
      },
      (e: unknown) => {
        this.options.warn(
          `the client announced roots but did not list them (${e instanceof Error ? e.message : String(e)}); serving the --root folders`,
        );
      },
    );
  }

  private async call(
    name: string,
    input: Record<string, unknown>,
    signal: AbortSignal,
    progress: ProgressReporter | undefined,
  ): Promise<CallToolResult> {
    await this.rootsKnown;
    const session = this.session;
    if (!session) return failure('E_INTERNAL: the server has no session yet. Retry the call.');
    if (name === LIST_ROOTS) {
      const lines = this.current.map((r) => `${r.name}\t${r.localPath ?? r.address}`);
      if (this.ignoredRoots.length > 0) lines.push(ignoredRootsLine(this.ignoredRoots, this.serverRoots));
      return { content: [{ type: 'text', text: lines.join('\n') }] };
    }
    // MCP's tools spec: an unknown tool is a protocol error (-32602), not a tool result.
    if (!isToolName(name))
      throw new ProtocolError(
        ErrorCode.InvalidParams,
        `Unknown tool ${JSON.stringify(name)}. Tools: ${[...TOOL_NAMES, LIST_ROOTS].join(', ')}.`,
      );
    try {
      const outcome = await invoke(session, name, input, { signal, ...(progress ? { progress } : {}) });
      // The client cancelled, but the call had passed its last check and did its work: the client drops
      // this result, so the person hears of it here, with the id that undoes it (never the result's text).
      if (signal.aborted) {
        const saveId = /"save_id":"(s\d+)"/.exec(outcome.text)?.[1];
        this.options.warn(
          `a ${name} call the client cancelled had already done its work${saveId === undefined ? '' : `: undo_save {"save_id":"${saveId}"} takes it back`}.`,
        );
      }
      return { content: [{ type: 'text', text: outcome.text }] };
    } catch (e) {
      return failure(callFailure(e).text);
    }
  }
}

/** A JSON-RPC error as the SDK sends it (its code and message; McpError would prefix "MCP error -32602: "). */
class ProtocolError extends Error {
  readonly code: number;
  constructor(code: number, message: string) {
    super(message);
    this.code = code;
  }
}

/** One line on the client's roots that narrowed nothing, for the log and list_roots. */
function ignoredRootsLine(ignored: readonly string[], server: readonly WorkspaceRoot[]): string {
  return `Ignored the client's roots ${ignored.join(', ')}: they are no local folder or lie outside the server's --root folders (${server.map((r) => r.localPath ?? r.address).join(', ')}), which only the server's --root widens.`;
}

function failure(text: string): CallToolResult {
  return { content: [{ type: 'text', text }], isError: true };
}
