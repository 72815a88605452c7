/**
 * The peer: the reference MCP filesystem server (@modelcontextprotocol/server-filesystem), started
 * over stdio and driven by the MCP SDK's own client, as an MCP host would.
 */
import { existsSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { repoRoot } from './hosts.ts';

const SERVER = nodePath.join(repoRoot, 'node_modules/@modelcontextprotocol/server-filesystem/dist/index.js');

export interface McpReply {
  /** The text blocks of the result, joined: what reaches the model. */
  readonly text: string;
  readonly isError: boolean;
}

export interface McpPeer {
  readonly version: string;
  call(tool: string, args: Record<string, unknown>): Promise<McpReply>;
  close(): Promise<void>;
}

export function mcpAvailable(): boolean {
  return existsSync(SERVER);
}

/** Starts the server with `allowed` as its only allowed folder, and connects. */
export function startMcp(allowed: string): Promise<McpPeer> {
  // The npm package's version (the server reports a protocol-level version of its own).
  const version = (
    JSON.parse(readFileSync(nodePath.join(nodePath.dirname(SERVER), '..', 'package.json'), 'utf8')) as {
      version: string;
    }
  ).version;
  return connect([SERVER, allowed], version);
}

/** Starts our own MCP server (`node dist/cli.js mcp`) over `root`, trusting the client's confirmation as a host would. */
export function startOurMcp(root: string): Promise<McpPeer> {
  return connect(
    [nodePath.join(repoRoot, 'dist/cli.js'), 'mcp', '--root', root, '--gate', 'approve'],
    'workspace-tools',
  );
}

async function connect(args: string[], version: string): Promise<McpPeer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args,
    stderr: 'pipe',
    maxBufferSize: 256 * 1024 ** 2,
  });
  const client = new Client({ name: 'workspace-tools-bench', version: '1.0.0' });
  await client.connect(transport);
  // Lets the client cache the tools' output schemas, as a host does before the first call.
  await client.listTools();
  return {
    version,
    async call(tool, args) {
      const result = await client.callTool({ name: tool, arguments: args }, undefined, { timeout: 600_000 });
      const content = (result.content ?? []) as { type: string; text?: string }[];
      return {
        text: content.map((c) => (c.type === 'text' ? (c.text ?? '') : '')).join(''),
        isError: result.isError === true,
      };
    },
    async close() {
      await client.close();
    },
  };
}
