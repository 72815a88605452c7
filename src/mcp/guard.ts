import type { Transport, TransportSendOptions } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  CallToolRequestSchema,
  ErrorCode,
  isJSONRPCRequest,
  type JSONRPCMessage,
  type JSONRPCRequest,
  type MessageExtraInfo,
} from '@modelcontextprotocol/sdk/types.js';

/** Requests MCP allows before the initialize request. */
const BEFORE_INITIALIZE = new Set(['initialize', 'ping']);

/**
 * What a request that cannot be run is answered with, or undefined for one the server handles.
 * `initialized`: the initialize request came already. Written for the person reading the client's
 * log: the SDK would answer a malformed tools/call with -32603 and its schema's raw JSON.
 */
export function refusal(request: JSONRPCRequest, initialized: boolean): { code: number; message: string } | undefined {
  if (!initialized && !BEFORE_INITIALIZE.has(request.method)) {
    return {
      code: ErrorCode.InvalidRequest,
      message: `${request.method} came before initialize: an MCP session starts with the initialize request (then notifications/initialized); only ping may come earlier. Send initialize first.`,
    };
  }
  if (request.method !== 'tools/call' || CallToolRequestSchema.safeParse(request).success) return undefined;
  const params: unknown = request.params;
  if (typeof params !== 'object' || params === null || Array.isArray(params)) {
    return {
      code: ErrorCode.InvalidParams,
      message: 'tools/call needs params: an object {"name": "<tool>", "arguments": {...}}; tools/list names the tools.',
    };
  }
  const { name, arguments: args } = params as { name?: unknown; arguments?: unknown };
  if (typeof name !== 'string' || name === '') {
    return {
      code: ErrorCode.InvalidParams,
      message: `tools/call needs params.name, the tool to call, as a string (got ${name === undefined ? 'none' : JSON.stringify(name)}); tools/list names the tools.`,
    };
  }
  if (args !== undefined && (typeof args !== 'object' || args === null || Array.isArray(args))) {
    return {
      code: ErrorCode.InvalidParams,
      message: `tools/call's params.arguments must be an object of ${name}'s arguments, or left out for none (got ${args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args}).`,
    };
  }
  return {
    code: ErrorCode.InvalidParams,
    message: `tools/call's params do not match MCP's CallToolRequest (${describeIssues(CallToolRequestSchema.safeParse(request).error?.issues ?? [])}).`,
  };
}

function describeIssues(
  issues: readonly { readonly path: readonly PropertyKey[]; readonly message: string }[],
): string {
  return issues.map((issue) => `${issue.path.map(String).join('.') || 'the request'}: ${issue.message}`).join('; ');
}

/**
 * A transport that answers the requests the server must not run (anything but ping before
 * initialize, a malformed tools/call) with a readable JSON-RPC error, and passes the rest on.
 */
export class GuardedTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage, extra?: MessageExtraInfo) => void) | undefined;
  private initialized = false;
  private readonly inner: Transport;

  constructor(inner: Transport) {
    this.inner = inner;
    inner.onclose = () => this.onclose?.();
    inner.onerror = (error) => this.onerror?.(error);
    inner.onmessage = (message, extra) => {
      if (isJSONRPCRequest(message)) {
        const refused = refusal(message, this.initialized);
        if (refused) {
          void this.inner
            .send({ jsonrpc: '2.0', id: message.id, error: refused })
            .catch((e: unknown) => this.onerror?.(e instanceof Error ? e : new Error(String(e))));
          return;
        }
        if (message.method === 'initialize') this.initialized = true;
      }
      this.onmessage?.(message, extra);
    };
  }

  get sessionId(): string | undefined {
    return this.inner.sessionId;
  }

  start(): Promise<void> {
    return this.inner.start();
  }
  send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    return this.inner.send(message, options);
  }
  close(): Promise<void> {
    return this.inner.close();
  }
  setProtocolVersion(version: string): void {
    this.inner.setProtocolVersion?.(version);
  }
}
