// Issue 44, item 9: a killed MCP server left the sandbox's network proxy (socat, listening on its
// socket in the temp folder) running under init. Its helpers carry its process id, and the next
// start of any CLI or MCP server ends those whose host is gone.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { HOST_MARK, processesWithEnvironment } from '../../src/core/shell/process-tree.ts';
import { testDir } from './harness.ts';

const CLI = nodePath.resolve('dist/cli.js');

/** The sockets a process listens on (socat's UNIX-LISTEN). */
const socketsOf = (pid: number): string[] => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'latin1')
      .split('\0')
      .flatMap((arg) => /^UNIX-LISTEN:([^,]+)/.exec(arg)?.[1] ?? []);
  } catch {
    return [];
  }
};

async function server(root: string): Promise<{ client: Client; transport: StdioClientTransport }> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'mcp', '--root', root, '--gate', 'approve'],
    stderr: 'pipe',
  });
  const client = new Client({ name: 'orphans-test', version: '0.0.0' });
  await client.connect(transport);
  return { client, transport };
}

test(
  'attack: a killed MCP server leaves no sandbox helper running — the next start ends it and removes its socket (issue 44, item 9)',
  { skip: process.platform !== 'linux', timeout: 120_000 },
  async (t) => {
    const ws = testDir(t);
    const first = await server(ws.path);
    const pid = first.transport.pid!;
    t.after(() => {
      try {
        process.kill(pid, 'SIGKILL');
      } catch {
        /* gone */
      }
    });
    const ran = (await first.client.callTool({
      name: 'run_shell_command',
      arguments: { command: 'echo ran' },
    })) as CallToolResult;
    assert.notEqual(ran.isError, true, JSON.stringify(ran.content));
    const helpers = processesWithEnvironment(`${HOST_MARK}=${pid}`).filter((p) => p !== pid);
    t.after(() => {
      for (const p of helpers)
        try {
          process.kill(p, 'SIGKILL');
        } catch {
          /* gone */
        }
    });
    const sockets = helpers.flatMap(socketsOf);
    assert.ok(helpers.length > 0 && sockets.length > 0, 'the sandbox started its network proxy (socat) for the server');
    process.kill(pid, 'SIGKILL');
    while (existsSync(`/proc/${pid}/stat`) && !readFileSync(`/proc/${pid}/stat`, 'latin1').includes(') Z'))
      await new Promise((r) => setImmediate(r));
    assert.ok(
      helpers.some((p) => existsSync(`/proc/${p}`)),
      'the helpers outlived the killed server (what the next start must clean)',
    );
    const second = await server(ws.path);
    t.after(() => second.client.close());
    // Waits on state: the test's own timeout is the hang guard.
    while (helpers.some((p) => existsSync(`/proc/${p}`) && !readFileSync(`/proc/${p}/stat`, 'latin1').includes(') Z')))
      await new Promise((r) => setTimeout(r, 20));
    for (const socket of sockets) assert.equal(existsSync(socket), false, `${socket} is still there`);
  },
);
