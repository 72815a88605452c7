import type { Readable, Writable } from 'node:stream';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import {
  ErrorCode,
  JSONRPCMessageSchema,
  type JSONRPCMessage,
  type RequestId,
} from '@modelcontextprotocol/sdk/types.js';
import { formatBytes } from '../core/text/format.ts';

/** The largest message read, as the SDK's own stdio transport reads (its ReadBuffer's limit). */
export const MAX_MESSAGE_BYTES = 10 * 1024 * 1024;

// What of an oversized line is kept to find its id: its first and last bytes.
const KEPT_ENDS = 512;

/** A JSON-RPC error the transport answers itself, for a line that never becomes a message. */
interface LineError {
  readonly id: RequestId | undefined;
  readonly code: number;
  readonly message: string;
}

/**
 * MCP's stdio transport (newline-delimited JSON-RPC), which answers what the SDK's own drops: a line
 * that is not JSON gets -32700, a batch or a value that is no JSON-RPC message gets -32600 (MCP
 * has no batches since 2025-06-18), and a message over `maxMessageBytes` is skipped unread, answered
 * with -32600, and told on stderr through `warn`, while the server goes on serving (the SDK's
 * transport closed, and the server exited without a word). Errors for a message whose id cannot be
 * known carry none, as MCP's schema has them.
 */
export class LineTransport implements Transport {
  onclose?: (() => void) | undefined;
  onerror?: ((error: Error) => void) | undefined;
  onmessage?: ((message: JSONRPCMessage) => void) | undefined;

  private pending: Buffer[] = [];
  private pendingBytes = 0;
  /** While a line over the limit is skipped: its size so far, and its first and last bytes. */
  private skipping: { bytes: number; head: Buffer; tail: Buffer } | undefined;
  private closed = false;
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly warn: (message: string) => void;
  private readonly maxMessageBytes: number;

  constructor(input: Readable, output: Writable, warn: (message: string) => void, maxMessageBytes = MAX_MESSAGE_BYTES) {
    this.input = input;
    this.output = output;
    this.warn = warn;
    this.maxMessageBytes = maxMessageBytes;
  }

  private readonly onData = (chunk: Buffer): void => {
    let rest = chunk;
    for (let nl = rest.indexOf(0x0a); nl !== -1; nl = rest.indexOf(0x0a)) {
      this.take(rest.subarray(0, nl));
      this.endLine();
      rest = rest.subarray(nl + 1);
    }
    if (rest.length > 0) this.take(rest);
  };

  private readonly onInputError = (error: Error): void => {
    this.onerror?.(error);
  };

  async start(): Promise<void> {
    this.input.on('data', this.onData);
    this.input.on('error', this.onInputError);
  }

  send(message: JSONRPCMessage): Promise<void> {
    return new Promise((resolve) => {
      if (this.output.write(JSON.stringify(message) + '\n')) resolve();
      else this.output.once('drain', resolve);
    });
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.input.off('data', this.onData);
    this.input.off('error', this.onInputError);
    if (this.input.listenerCount('data') === 0) this.input.pause();
    this.pending = [];
    this.skipping = undefined;
    this.onclose?.();
  }

  /** Adds part of the current line, or keeps only its ends once it is over the limit. */
  private take(part: Buffer): void {
    if (this.skipping === undefined && this.pendingBytes + part.length <= this.maxMessageBytes) {
      this.pending.push(part);
      this.pendingBytes += part.length;
      return;
    }
    if (this.skipping === undefined) {
      part = Buffer.concat([...this.pending, part]);
      this.skipping = { bytes: 0, head: Buffer.from(part.subarray(0, KEPT_ENDS)), tail: Buffer.alloc(0) };
      this.pending = [];
      this.pendingBytes = 0;
    }
    this.skipping.bytes += part.length;
    this.skipping.tail = Buffer.from(
      Buffer.concat([this.skipping.tail, part.subarray(-KEPT_ENDS)]).subarray(-KEPT_ENDS),
    );
  }

  private endLine(): void {
    const skipped = this.skipping;
    if (skipped !== undefined) {
      this.skipping = undefined;
      const size = skipped.bytes;
      this.warn(
        `a JSON-RPC message of ${formatBytes(size)} came in, over the ${formatBytes(this.maxMessageBytes)} this server reads in one message: it was skipped unread and answered with an error; the server goes on.`,
      );
      this.answer({
        id: idAtEnds(skipped.head.toString('utf8'), skipped.tail.toString('utf8')),
        code: ErrorCode.InvalidRequest,
        message: `The message was ${formatBytes(size)}, over the ${formatBytes(this.maxMessageBytes)} this server reads in one message, so it was not read. Send less in one call (a stage_file content that large can be staged in parts and joined with media_apply_patch, or written by run_shell_command).`,
      });
      return;
    }
    const line = Buffer.concat(this.pending).toString('utf8').replace(/\r$/, '');
    this.pending = [];
    this.pendingBytes = 0;
    if (line.trim() === '') return;
    const outcome = readLine(line);
    if ('error' in outcome) this.answer(outcome.error);
    else this.onmessage?.(outcome.message);
  }

  private answer(error: LineError): void {
    this.onerror?.(new Error(error.message));
    void this.send({
      jsonrpc: '2.0',
      ...(error.id !== undefined ? { id: error.id } : {}),
      error: { code: error.code, message: error.message },
    } as JSONRPCMessage);
  }
}

/** One line as a message, or the error that answers it. */
export function readLine(line: string): { message: JSONRPCMessage } | { error: LineError } {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (e) {
    return {
      error: {
        id: undefined,
        code: ErrorCode.ParseError,
        message: `Parse error: the line is not JSON (${e instanceof Error ? e.message : String(e)}). Send one JSON-RPC message per line.`,
      },
    };
  }
  if (Array.isArray(value)) {
    return {
      error: {
        id: undefined,
        code: ErrorCode.InvalidRequest,
        message: `Invalid Request: a batch (a JSON array of ${value.length} messages) is not part of MCP since 2025-06-18; nothing in it was run. Send each message on its own line.`,
      },
    };
  }
  const parsed = JSONRPCMessageSchema.safeParse(value);
  if (parsed.success) return { message: parsed.data };
  const id =
    typeof value === 'object' && value !== null && 'method' in value
      ? requestId((value as { id?: unknown }).id)
      : undefined;
  return {
    error: {
      id,
      code: ErrorCode.InvalidRequest,
      message:
        'Invalid Request: the line is JSON but no JSON-RPC 2.0 message (a request needs "jsonrpc": "2.0", a string or number "id" and a string "method"; a notification has no "id").',
    },
  };
}

function requestId(id: unknown): RequestId | undefined {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)) ? id : undefined;
}

const ID = String.raw`"id"\s*:\s*(-?\d+|"(?:[^"\\]|\\.)*")`;
// A top-level "id" is the first member ("jsonrpc" may come before it) or the last one (the SDK's clients put it last).
const ID_FIRST = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?${ID}`);
const ID_LAST = new RegExp(String.raw`${ID}\s*\}\s*$`);

/** The id of a message too large to read, from its first and last bytes, where it is one of the ends. */
function idAtEnds(head: string, tail: string): RequestId | undefined {
  const found = ID_FIRST.exec(head)?.[1] ?? ID_LAST.exec(tail)?.[1];
  if (found === undefined) return undefined;
  try {
    return requestId(JSON.parse(found));
  } catch {
    return undefined;
  }
}
