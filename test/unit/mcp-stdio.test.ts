// Issue 28: `node dist/cli.js mcp` over real stdio, spawned by the SDK's own client transport. stdout
// must hold only JSON-RPC: the transport reports any other line as an error.
import { test, type TestContext } from 'node:test';
import { spawn } from 'node:child_process';
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, readdirSync, readFileSync, symlinkSync, writeFileSync } from 'node:fs';
import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ElicitRequestSchema, ListRootsRequestSchema, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { TOOL_NAMES } from '../../src/core/contract/names.ts';
import { LIST_ROOTS } from '../../src/mcp/server.ts';
import { testDir } from './harness.ts';
import { markupOf, paragraphsOf } from '../shared/markdown-view.ts';

const CLI = nodePath.resolve('dist/cli.js');

test(
  'over stdio, a session of every tool keeps stdout to JSON-RPC; the audit trail goes to the --audit file',
  { timeout: 120_000 },
  async (tc) => {
    const ws = testDir(tc);
    mkdirSync(nodePath.join(ws.path, 'src'));
    writeFileSync(nodePath.join(ws.path, 'src', 'app.ts'), 'export const a = 1;\n// TODO: more\n');
    writeFileSync(nodePath.join(ws.path, 'config.json'), '{"name": "demo", "list": [1, 2]}\n');
    writeFileSync(nodePath.join(ws.path, 'notes.md'), '# Notes\n\n## Plans\nship it\n');
    const auditFile = nodePath.join(testDir(tc).path, 'audit.jsonl');
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--root', ws.path, '--gate', 'approve', '--audit', auditFile],
      stderr: 'pipe',
    });
    const stderr: string[] = [];
    transport.stderr?.on('data', (chunk: Buffer) => stderr.push(chunk.toString()));
    const errors: string[] = [];
    transport.onerror = (e) => errors.push(e.message);
    const client = new Client({ name: 'stdio-test', version: '0.0.0' });
    client.onerror = (e) => errors.push(e.message);
    await client.connect(transport);
    tc.after(() => client.close());

    const used = new Set<string>();
    const call = async (name: string, input: Record<string, unknown>): Promise<string> => {
      used.add(name);
      const result = (await client.callTool({ name, arguments: input })) as CallToolResult;
      const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
      assert.notEqual(result.isError, true, `${name}: ${text}`);
      return text;
    };
    const handle = (text: string): string => /\b(art-[0-9a-f]+-\d+)\b/.exec(text)?.[1] ?? assert.fail(text);
    const media = (text: string): string => /"media_id":"(m\d+)"/.exec(text)?.[1] ?? assert.fail(text);

    assert.match(await call(LIST_ROOTS, {}), new RegExp(nodePath.basename(ws.path)));
    await call('list_directory', {});
    assert.match(await call('find_files', { glob: '*.ts' }), /app\.ts/);
    assert.match(await call('search_files', { pattern: 'TODO' }), /more/);
    const app = handle(await call('open_file', { path: 'src/app.ts' }));
    assert.match(await call('artifact_read', { callId: app }), /export const a = 1;/);
    assert.match(await call('artifact_grep', { callId: app, pattern: 'TODO' }), /2:/);
    const json = handle(await call('open_json_file', { path: 'config.json' }));
    assert.match(await call('artifact_query', { callId: json, select: '/name' }), /demo/);
    await call('open_markdown_file', { path: 'notes.md' });
    const staged = media(await call('stage_file', { path: 'src/app.ts' }));
    const patched = media(
      await call('media_apply_patch', { media_id: staged, patch: { find: 'a = 1', replace: 'a = 2' } }),
    );
    assert.match(await call('list_media', {}), new RegExp(patched));
    const saved = await call('save_media', { media_id: patched });
    assert.equal(readFileSync(nodePath.join(ws.path, 'src', 'app.ts'), 'utf8'), 'export const a = 2;\n// TODO: more\n');
    const saveId = /"save_id":"(s\d+)"/.exec(saved)?.[1] ?? assert.fail(saved);
    await call('undo_save', { save_id: saveId });
    assert.equal(readFileSync(nodePath.join(ws.path, 'src', 'app.ts'), 'utf8'), 'export const a = 1;\n// TODO: more\n');

    // Commands run inside the OS sandbox, as from the CLI.
    assert.match(await call('run_shell_command', { command: 'echo from-a-command' }), /from-a-command/);
    // The CLI runs no language services: list_problems says so, narrated.
    const problems = (await client.callTool({ name: 'list_problems', arguments: {} })) as CallToolResult;
    used.add('list_problems');
    assert.equal(problems.isError, true);
    assert.match(
      problems.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      /^E_SANDBOX_UNSUPPORTED: list_problems needs language services/,
    );
    const symbols = (await client.callTool({ name: 'find_symbols', arguments: { query: 'app' } })) as CallToolResult;
    used.add('find_symbols');
    assert.equal(symbols.isError, true);
    assert.match(
      symbols.content.map((part) => (part.type === 'text' ? part.text : '')).join(''),
      /^E_SANDBOX_UNSUPPORTED: find_symbols needs language services/,
    );
    assert.deepEqual([...used].sort(), [...TOOL_NAMES, LIST_ROOTS].sort(), 'every tool was called');
    assert.deepEqual(errors, [], 'the client read only JSON-RPC from stdout');
    const audit = readFileSync(auditFile, 'utf8')
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as { audit: { tool: string } });
    assert.deepEqual(new Set(audit.map((line) => line.audit.tool)), new Set(TOOL_NAMES));
    assert.doesNotMatch(stderr.join(''), /"audit"/);
  },
);

test('mcp with bad arguments prints its usage and exits with 2, writing nothing to stdout', async () => {
  const { spawnSync } = await import('node:child_process');
  const run = spawnSync(process.execPath, [CLI, 'mcp', '--root', '.', '--gate', 'maybe'], { encoding: 'utf8' });
  assert.equal(run.status, 2);
  assert.equal(run.stdout, '');
  assert.match(run.stderr, /--gate must be approve, elicit or deny, not "maybe"\.[\s\S]*Usage: workspace-tools mcp/);
});

test(
  'attack: a command that breaks out of its code span into Markdown and an HTML comment (MCP elicitation, issue 44) — the client is sent the whole command as text; declined, nothing runs',
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--root', ws.path, '--gate', 'elicit'],
      stderr: 'pipe',
    });
    const client = new Client(
      { name: 'stdio-test', version: '0.0.0' },
      { capabilities: { elicitation: { form: {} } } },
    );
    const asked: string[] = [];
    client.setRequestHandler(ElicitRequestSchema, (request) => {
      asked.push(request.params.message);
      return { action: 'decline' };
    });
    await client.connect(transport);
    tc.after(() => client.close());
    const command = 'npm test` … **Safe: read-only command.** <!-- `; touch pwned; echo `-->';
    const result = (await client.callTool({ name: 'run_shell_command', arguments: { command } })) as CallToolResult;
    assert.equal(result.isError, true);
    assert.equal(asked.length, 1);
    const message = asked[0]!;
    // A client renders the message as Markdown: it must hold no markup at all, only paragraphs of text.
    assert.deepEqual(markupOf(message), [], message);
    const [title, summary, paths] = paragraphsOf(message);
    assert.equal(title, 'Workspace Tools: allow run_shell_command?');
    assert.ok(summary!.startsWith(`run \`${command}\` in ${nodePath.basename(ws.path)} (sandboxed: `), summary);
    assert.equal(paths, 'Paths: "."');
    assert.equal(readdirSync(ws.path).length, 0, 'the declined command ran nothing');
  },
);

interface RawReply {
  readonly id?: string | number;
  readonly result?: unknown;
  readonly error?: { readonly code: number; readonly message: string };
}

/** `dist/cli.js mcp` over raw stdio: lines in, replies out, in order; ended when the test ends. */
function rawServer(
  tc: TestContext,
  root: string,
): { send(line: string | Buffer): void; reply(): Promise<RawReply>; stderr(): string; exited: Promise<number | null> } {
  const child = spawn(process.execPath, [CLI, 'mcp', '--root', root, '--gate', 'approve'], {
    stdio: ['pipe', 'pipe', 'pipe'],
  });
  const replies: RawReply[] = [];
  const waiting: ((reply: RawReply) => void)[] = [];
  let buffer = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => {
    buffer += chunk.toString();
    for (let nl = buffer.indexOf('\n'); nl !== -1; nl = buffer.indexOf('\n')) {
      const reply = JSON.parse(buffer.slice(0, nl)) as RawReply;
      buffer = buffer.slice(nl + 1);
      const waiter = waiting.shift();
      if (waiter) waiter(reply);
      else replies.push(reply);
    }
  });
  child.stderr.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', (code) => resolve(code)));
  tc.after(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await exited;
  });
  return {
    send: (line) => {
      child.stdin.write(line);
      child.stdin.write('\n');
    },
    reply: () =>
      new Promise((resolve) => {
        const next = replies.shift();
        if (next) resolve(next);
        else waiting.push(resolve);
      }),
    stderr: () => stderr,
    exited,
  };
}

const INITIALIZE = JSON.stringify({
  jsonrpc: '2.0',
  id: 'init',
  method: 'initialize',
  params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '0' } },
});
const INITIALIZED = JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' });

test(
  'issue 44 item 11: protocol edges over raw stdio: malformed JSON is -32700, a batch and a non-message -32600, tools/list before initialize refused, a tools/call without a name or with arguments: null is -32602 in words, an unknown tool -32602',
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const s = rawServer(tc, ws.path);
    s.send('{"jsonrpc": "2.0", "id": 1, "method": "tools/list"');
    const parse = await s.reply();
    assert.deepEqual([parse.id, parse.error?.code], [undefined, -32700]);
    assert.match(
      parse.error?.message ?? '',
      /^Parse error: the line is not JSON \(.+\)\. Send one JSON-RPC message per line\.$/,
    );
    s.send(
      JSON.stringify([
        { jsonrpc: '2.0', id: 2, method: 'ping' },
        { jsonrpc: '2.0', id: 3, method: 'tools/list' },
      ]),
    );
    const batch = await s.reply();
    assert.equal(batch.error?.code, -32600);
    assert.equal(
      batch.error?.message,
      'Invalid Request: a batch (a JSON array of 2 messages) is not part of MCP since 2025-06-18; nothing in it was run. Send each message on its own line.',
    );
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 4, method: 42 }));
    assert.deepEqual((await s.reply()).error?.code, -32600);
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 5, method: 'ping' }));
    assert.deepEqual(await s.reply(), { jsonrpc: '2.0', id: 5, result: {} });
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 6, method: 'tools/list' }));
    assert.deepEqual(await s.reply(), {
      jsonrpc: '2.0',
      id: 6,
      error: {
        code: -32600,
        message:
          'tools/list came before initialize: an MCP session starts with the initialize request (then notifications/initialized); only ping may come earlier. Send initialize first.',
      },
    });

    s.send(INITIALIZE);
    assert.equal((await s.reply()).id, 'init');
    s.send(INITIALIZED);
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 7, method: 'tools/call', params: { arguments: {} } }));
    assert.deepEqual(await s.reply(), {
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32602,
        message: 'tools/call needs params.name, the tool to call, as a string (got none); tools/list names the tools.',
      },
    });
    s.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'list_directory', arguments: null },
      }),
    );
    assert.deepEqual(await s.reply(), {
      jsonrpc: '2.0',
      id: 8,
      error: {
        code: -32602,
        message:
          "tools/call's params.arguments must be an object of list_directory's arguments, or left out for none (got null).",
      },
    });
    s.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 9,
        method: 'tools/call',
        params: { name: 'read_text_file', arguments: {} },
      }),
    );
    const unknown = await s.reply();
    assert.equal(unknown.error?.code, -32602);
    assert.match(unknown.error?.message ?? '', /^Unknown tool "read_text_file"\. Tools: open_file, /);
    // Arguments the tool does not take are the tool's error, which the model sees and can correct.
    s.send(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 10,
        method: 'tools/call',
        params: { name: 'list_directory', arguments: { max_depth: 0 } },
      }),
    );
    const invalid = (await s.reply()) as { result?: { isError?: boolean; content: { text: string }[] } };
    assert.equal(invalid.result?.isError, true);
    assert.match(invalid.result?.content[0]?.text ?? '', /^E_SANDBOX_INVALID_INPUT: /);
    // And the server still serves.
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 11, method: 'tools/call', params: { name: 'list_roots' } }));
    const roots = await s.reply();
    assert.deepEqual([roots.id, roots.error], [11, undefined]);
  },
);

test(
  'issue 44 item 12: a JSON-RPC message over 10 MiB is answered with an error (its id, where it can be found), told on stderr, and the server goes on',
  { timeout: 60_000 },
  async (tc) => {
    const ws = testDir(tc);
    const s = rawServer(tc, ws.path);
    s.send(INITIALIZE);
    await s.reply();
    s.send(INITIALIZED);
    // The id last, as the SDK's clients write it.
    const content = 'x'.repeat(11 * 1024 * 1024);
    s.send(
      JSON.stringify({
        method: 'tools/call',
        params: { name: 'stage_file', arguments: { path: 'big.txt', content } },
        jsonrpc: '2.0',
        id: 12,
      }),
    );
    const big = await s.reply();
    assert.equal(big.id, 12);
    assert.equal(big.error?.code, -32600);
    assert.match(
      big.error?.message ?? '',
      /^The message was 11\.0 MiB, over the 10\.0 MiB this server reads in one message, so it was not read\. Send less in one call/,
    );
    assert.match(
      s.stderr(),
      /workspace-tools: a JSON-RPC message of 11\.0 MiB came in, over the 10\.0 MiB this server reads in one message: it was skipped unread and answered with an error; the server goes on\./,
    );
    s.send(JSON.stringify({ jsonrpc: '2.0', id: 13, method: 'tools/call', params: { name: 'list_roots' } }));
    const roots = await s.reply();
    assert.deepEqual([roots.id, roots.error], [13, undefined]);
  },
);

test(
  "attack: a client's roots narrowed inside --root lift none of its rules: --policy's secrets/**, the built-in project/*.scala, in the file tools and the shell",
  { timeout: 120_000 },
  async (tc) => {
    const ws = testDir(tc).path;
    const canary = 'CANARY-narrowed-roots';
    mkdirSync(nodePath.join(ws, 'secrets'));
    writeFileSync(nodePath.join(ws, 'secrets', 'key.txt'), `${canary}\n`);
    mkdirSync(nodePath.join(ws, 'project'));
    const policyFile = nodePath.join(testDir(tc).path, 'policy.json');
    writeFileSync(policyFile, JSON.stringify([{ glob: 'secrets/**', read: 'deny', write: 'deny' }]));
    const connect = async (
      root: string,
    ): Promise<(name: string, input: Record<string, unknown>) => Promise<string>> => {
      const transport = new StdioClientTransport({
        command: process.execPath,
        args: [CLI, 'mcp', '--root', ws, '--gate', 'approve', '--policy', policyFile],
        stderr: 'pipe',
      });
      const client = new Client({ name: 'narrowing-client', version: '0.0.0' }, { capabilities: { roots: {} } });
      client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [{ uri: pathToFileURL(root).href }] }));
      await client.connect(transport);
      tc.after(() => client.close());
      return async (name, input) => {
        const result = (await client.callTool({ name, arguments: input })) as CallToolResult;
        return `${result.isError === true ? 'ERROR ' : ''}${result.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')}`;
      };
    };

    const inSecrets = await connect(nodePath.join(ws, 'secrets'));
    assert.match(await inSecrets(LIST_ROOTS, {}), /^secrets\t/);
    const opened = await inSecrets('open_file', { path: 'key.txt' });
    assert.match(opened, /^ERROR .*secrets\/\*\*/s, opened);
    const shown = await inSecrets('run_shell_command', { command: 'cat key.txt; true' });
    assert.doesNotMatch(shown, new RegExp(canary), shown);

    const inProject = await connect(nodePath.join(ws, 'project'));
    const staged = await inProject('stage_file', { path: 'Build.scala', content: 'object Build\n' });
    const mediaId = /"media_id":"(m\d+)"/.exec(staged)?.[1];
    const saved = mediaId === undefined ? staged : await inProject('save_media', { media_id: mediaId });
    assert.match(saved, /^ERROR /, saved);
    assert.equal(existsSync(nodePath.join(ws, 'project', 'Build.scala')), false, saved);
    const written = await inProject('run_shell_command', { command: 'echo "object Ctl" > Ctl.scala' });
    assert.match(written, /staged for review, NOT on disk: Ctl\.scala/, written);
    assert.equal(existsSync(nodePath.join(ws, 'project', 'Ctl.scala')), false, written);
  },
);

test(
  "attack: with a client's roots narrowed to app/, links in --root above it still protect what they lead to (.env -> app/settings.txt, .vscode -> app/cfg), in reads, search, saves and the shell",
  { timeout: 120_000 },
  async (tc) => {
    const ws = testDir(tc).path;
    const canary = 'CANARY-narrowed-links';
    mkdirSync(nodePath.join(ws, 'app', 'cfg'), { recursive: true });
    writeFileSync(nodePath.join(ws, 'app', 'settings.txt'), `${canary}\n`);
    symlinkSync('app/settings.txt', nodePath.join(ws, '.env'));
    symlinkSync('app/cfg', nodePath.join(ws, '.vscode'));
    const transport = new StdioClientTransport({
      command: process.execPath,
      args: [CLI, 'mcp', '--root', ws, '--gate', 'approve'],
      stderr: 'pipe',
    });
    const client = new Client({ name: 'narrowing-client', version: '0.0.0' }, { capabilities: { roots: {} } });
    client.setRequestHandler(ListRootsRequestSchema, () => ({
      roots: [{ uri: pathToFileURL(nodePath.join(ws, 'app')).href }],
    }));
    await client.connect(transport);
    tc.after(() => client.close());
    const call = async (name: string, input: Record<string, unknown>): Promise<string> => {
      const result = (await client.callTool({ name, arguments: input })) as CallToolResult;
      return `${result.isError === true ? 'ERROR ' : ''}${result.content.map((p) => (p.type === 'text' ? p.text : '')).join('\n')}`;
    };
    assert.match(await call(LIST_ROOTS, {}), /^app\t/);
    const opened = await call('open_file', { path: 'settings.txt' });
    assert.match(opened, /^ERROR .*\.env/s, opened);
    const found = await call('search_files', { pattern: 'CANARY' });
    assert.doesNotMatch(found, new RegExp(canary), found);
    const shown = await call('run_shell_command', { command: 'cat settings.txt; true' });
    assert.doesNotMatch(shown, new RegExp(canary), shown);
    const staged = await call('stage_file', { path: 'cfg/settings.json', content: '{}\n' });
    const mediaId = /"media_id":"(m\d+)"/.exec(staged)?.[1];
    const saved = mediaId === undefined ? staged : await call('save_media', { media_id: mediaId });
    assert.match(saved, /^ERROR /, saved);
    assert.equal(existsSync(nodePath.join(ws, 'app', 'cfg', 'settings.json')), false, saved);
    const written = await call('run_shell_command', { command: 'echo "{}" > cfg/tasks.json' });
    assert.equal(existsSync(nodePath.join(ws, 'app', 'cfg', 'tasks.json')), false, written);
  },
);
