// Issue 28: the tools over MCP, with the person asked through the client's elicitation. A real
// SDK client over an in-memory transport, a real session over a real temporary workspace.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import {
  lstatSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { execFileSync } from 'node:child_process';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import {
  ElicitRequestSchema,
  ErrorCode,
  ListRootsRequestSchema,
  McpError,
  type CallToolResult,
  type ElicitResult,
  type JSONRPCMessage,
} from '@modelcontextprotocol/sdk/types.js';
import { languageModelToolEntries } from '../../src/core/pipeline/manifest.ts';
import type { Rule } from '../../src/core/policy/policy.ts';
import { LIST_ROOTS, McpToolHost } from '../../src/mcp/server.ts';
import type { McpGateMode } from '../../src/mcp/gate.ts';
import { createRipgrepSearch } from '../../src/core/search/ripgrep.ts';
import { session, testDir, testRipgrep, type TestSession } from './harness.ts';
import { rgChildren } from './search-helpers.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import type { ShellHost } from '../../src/core/shell/port.ts';

import { FaultyFs } from './media-fixtures.ts';

const CANARY = 'CANARY-7f3a91';

interface Connected {
  readonly client: Client;
  readonly t: TestSession;
  /** The messages of every elicitation the client was sent. */
  readonly asked: string[];
  readonly warnings: string[];
  /** Every message the server sent. */
  readonly sent: JSONRPCMessage[];
  /** The client's roots, as file URIs: change them, then `client.sendRootsListChanged()`. */
  readonly roots: string[];
  call(name: string, input: Record<string, unknown>): Promise<{ text: string; isError: boolean }>;
}

interface ConnectOptions {
  readonly gate?: McpGateMode;
  readonly allowSecrets?: boolean;
  /** The person's answer to an elicitation; absent: the client does not support elicitation. */
  readonly answer?: (signal: AbortSignal) => ElicitResult | Promise<ElicitResult>;
  /** The client's roots (file URIs); absent: the client does not support roots. */
  readonly roots?: (workspace: string) => string[];
  readonly rules?: Rule[];
  /** run_shell_command's host (its OS sandbox); absent: the server has no shell. */
  readonly shell?: ShellHost;
  /** The server's --ask-timeout, in ms. */
  readonly askTimeoutMs?: number;
  /** Attach the session with no --root folder (a state the CLI never starts in), to see what a call without a folder says. */
  readonly noServerRoots?: boolean;
  /** The session's filesystem (a FaultyFs to act at a given step). */
  readonly fs?: FaultyFs;
}

async function connect(tc: Parameters<typeof session>[0], options: ConnectOptions = {}): Promise<Connected> {
  const warnings: string[] = [];
  const host = new McpToolHost({
    gate: options.gate ?? 'approve',
    allowSecrets: options.allowSecrets ?? false,
    version: '0.0.0',
    warn: (m) => warnings.push(m),
    ...(options.askTimeoutMs !== undefined ? { askTimeoutMs: options.askTimeoutMs } : {}),
  });
  const t = session(tc, {
    ...(options.rules ? { rules: options.rules } : {}),
    ...(options.fs ? { fs: options.fs } : {}),
    overrides: {
      gate: host.gate,
      roots: host.roots,
      vocabulary: host.vocabulary,
      search: createRipgrepSearch(testRipgrep()),
      ...(options.shell ? { shell: options.shell } : {}),
    },
  });
  host.attach(
    t.session,
    options.noServerRoots ? [] : [{ name: nodePath.basename(t.root), address: t.root, localPath: t.root }],
  );
  const asked: string[] = [];
  const roots = options.roots?.(t.root) ?? [];
  const client = new Client(
    { name: 'test-client', version: '0.0.0' },
    {
      capabilities: {
        ...(options.answer ? { elicitation: { form: {} } } : {}),
        ...(options.roots ? { roots: { listChanged: true } } : {}),
      },
    },
  );
  const answer = options.answer;
  if (answer)
    client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      asked.push(request.params.message);
      return answer(extra.signal);
    });
  if (options.roots) client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: roots.map((uri) => ({ uri })) }));
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const sent: JSONRPCMessage[] = [];
  const send = serverSide.send.bind(serverSide);
  serverSide.send = (message, options) => {
    sent.push(message);
    return send(message, options);
  };
  await host.connect(serverSide);
  await client.connect(clientSide);
  tc.after(() => client.close());
  const call = async (name: string, input: Record<string, unknown>): Promise<{ text: string; isError: boolean }> => {
    const result = (await client.callTool({ name, arguments: input })) as CallToolResult;
    const text = result.content.map((part) => (part.type === 'text' ? part.text : `[${part.type}]`)).join('\n');
    return { text, isError: result.isError === true };
  };
  return { client, t, asked, warnings, roots, sent, call };
}

const allowOnce = (): ElicitResult => ({ action: 'accept', content: { decision: 'allow once' } });

test("the tool list is the manifest's tools (names, descriptions, schemas) with MCP hints, and list_roots", async (tc) => {
  const { client } = await connect(tc);
  const { tools } = await client.listTools();
  const manifest = languageModelToolEntries();
  assert.deepEqual(
    tools.map((tool) => tool.name),
    [...manifest.map((entry) => entry.name), LIST_ROOTS],
  );
  for (const entry of manifest) {
    const tool = tools.find((candidate) => candidate.name === entry.name)!;
    assert.equal(tool.description, entry.modelDescription);
    assert.deepEqual(tool.inputSchema, entry.inputSchema);
    const reads = entry.tags.includes('read');
    assert.equal(tool.annotations?.readOnlyHint, reads, entry.name);
    assert.equal(tool.annotations?.openWorldHint, false, entry.name);
    assert.equal(
      tool.annotations?.destructiveHint,
      ['save_media', 'undo_save', 'run_shell_command'].includes(entry.name),
      entry.name,
    );
  }
});

/** A workspace holding `.env` with the canary. */
function withSecret(t: TestSession): void {
  writeFileSync(nodePath.join(t.root, '.env'), `API_KEY=${CANARY}\n`);
}

/** open_file then artifact_read of `.env`: what the model is given. */
async function readSecret(c: Connected): Promise<string> {
  const opened = await c.call('open_file', { path: '.env' });
  if (opened.isError) return opened.text;
  const callId = /\b(art-[0-9a-f]+-\d+)\b/.exec(opened.text)?.[1];
  assert.ok(callId, opened.text);
  const read = await c.call('artifact_read', { callId });
  return `${opened.text}\n${read.text}`;
}

test('attack: a secret read over MCP asks through elicitation every call; accepted, the model gets it', async (tc) => {
  const c = await connect(tc, { answer: allowOnce });
  withSecret(c.t);
  const text = await readSecret(c);
  assert.match(text, new RegExp(CANARY));
  assert.equal(c.asked.length, 2, 'open_file and artifact_read each asked');
  assert.match(c.asked[0]!, /Workspace Tools: allow open_file\?/);
  assert.match(c.asked[0]!, /"\.env" matches the secret rule/);
});

for (const [why, answer] of [
  ['declined', (): ElicitResult => ({ action: 'decline' })],
  ['cancelled', (): ElicitResult => ({ action: 'cancel' })],
  [
    "accepted with the form's default (a client that accepts forms unseen)",
    (): ElicitResult => ({ action: 'accept', content: { decision: 'refuse' } }),
  ],
  ['accepted with no content', (): ElicitResult => ({ action: 'accept' })],
] as const) {
  test(`attack: a secret read over MCP ${why} is refused, narrated, and the canary never reaches the model`, async (tc) => {
    const c = await connect(tc, { answer });
    withSecret(c.t);
    const opened = await c.call('open_file', { path: '.env' });
    assert.equal(opened.isError, true);
    assert.match(
      opened.text,
      /^E_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"\. Do not retry/,
    );
    assert.doesNotMatch(opened.text, new RegExp(CANARY));
    const searched = await c.call('search_files', { pattern: 'API_KEY', hidden: true, no_ignore: true });
    assert.doesNotMatch(searched.text, new RegExp(CANARY));
    assert.equal(c.asked.length, 1);
  });
}

test('attack: a client without elicitation is refused a secret with a message naming how the person can allow it', async (tc) => {
  const c = await connect(tc);
  withSecret(c.t);
  const opened = await c.call('open_file', { path: '.env' });
  assert.equal(opened.isError, true);
  assert.match(
    opened.text,
    /^E_SANDBOX_REFUSED: open_file on "\.env" was refused: "\.env" matches the secret rule "[^"]+".*, so the person must confirm it, and this MCP client cannot ask them \(it does not support elicitation\)\. Do not retry\. The person can allow it by adding an allow rule for the path to the server's --policy file, or by starting the server with --allow-secrets\.$/,
  );
  assert.doesNotMatch(opened.text, new RegExp(CANARY));
});

test("--gate elicit asks for a call no rule allows; --gate approve trusts the client's own confirmation; --gate deny refuses", async (tc) => {
  const elicit = await connect(tc, { gate: 'elicit', answer: allowOnce });
  writeFileSync(nodePath.join(elicit.t.root, 'a.txt'), 'hello\n');
  assert.equal((await elicit.call('open_file', { path: 'a.txt' })).isError, false);
  assert.equal(elicit.asked.length, 1);
  assert.match(elicit.asked[0]!, /Asked because no rule allows it\./);
  const approve = await connect(tc, { gate: 'approve', answer: allowOnce });
  writeFileSync(nodePath.join(approve.t.root, 'a.txt'), 'hello\n');
  assert.equal((await approve.call('open_file', { path: 'a.txt' })).isError, false);
  assert.equal(approve.asked.length, 0);
  const deny = await connect(tc, { gate: 'deny' });
  const refused = await deny.call('list_directory', {});
  assert.equal(refused.isError, true);
  assert.match(refused.text, /^E_SANDBOX_REFUSED: list_directory on .* was refused: this server runs with --gate deny/);
});

test("roots: the client's roots narrow --root (a subfolder), never widen it, and a change narrows again at once", async (tc) => {
  const outside = realpathSync(mkdtempSync(nodePath.join(tmpdir(), 'wt-mcp-outside-')));
  tc.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(nodePath.join(outside, 'far.txt'), CANARY);
  const c = await connect(tc, {
    roots: (ws) => [pathToFileURL(nodePath.join(ws, 'sub')).href, pathToFileURL(outside).href],
  });
  mkdirSync(nodePath.join(c.t.root, 'sub'));
  writeFileSync(nodePath.join(c.t.root, 'sub', 'in.txt'), 'inside\n');
  writeFileSync(nodePath.join(c.t.root, 'top.txt'), 'top\n');
  // The roots were asked at initialization, when sub did not exist yet: announce them again.
  await c.client.sendRootsListChanged();
  const roots = await c.call(LIST_ROOTS, {});
  assert.equal(
    roots.text,
    `sub\t${nodePath.join(c.t.root, 'sub')}\nIgnored the client's roots ${pathToFileURL(outside).href}: they are no local folder or lie outside the server's --root folders (${c.t.root}), which only the server's --root widens.`,
  );
  const listed = await c.call('list_directory', {});
  assert.match(listed.text, /in\.txt/);
  assert.doesNotMatch(listed.text, /top\.txt|far\.txt/);
  assert.equal((await c.call('open_file', { path: '../top.txt' })).isError, true);
  assert.equal((await c.call('open_file', { path: nodePath.join(outside, 'far.txt') })).isError, true);
  // The client drops its roots: an empty list narrows nothing, so --root is served again.
  c.roots.splice(0, c.roots.length);
  await c.client.sendRootsListChanged();
  assert.equal((await c.call(LIST_ROOTS, {})).text, `${nodePath.basename(c.t.root)}\t${c.t.root}`);
});

test('cancelling a call while the person is being asked withdraws the question and ends the call as cancelled', async (tc) => {
  let asking: () => void = () => undefined;
  const askedNow = new Promise<void>((resolve) => {
    asking = resolve;
  });
  // The person never answers; the question is only withdrawn.
  const c = await connect(tc, {
    answer: () => {
      asking();
      return new Promise<ElicitResult>(() => undefined);
    },
  });
  withSecret(c.t);
  const controller = new AbortController();
  const call = c.client.callTool({ name: 'open_file', arguments: { path: '.env' } }, undefined, {
    signal: controller.signal,
  });
  await askedNow;
  controller.abort();
  await assert.rejects(call);
  // The server hears the cancellation and ends the call: the audit log says so.
  while (!c.t.log.entries.some((e) => e.tool === 'open_file')) await new Promise((resolve) => setImmediate(resolve));
  const entry = c.t.log.entries.find((e) => e.tool === 'open_file')!;
  assert.deepEqual([entry.verdict, entry.outcome], ['refused', 'E_SANDBOX_CANCELLED']);
  // And tells the client to withdraw its question. (SDK 1.32's client ignores a cancellation of request id 0, so the form stays open there.)
  const question = c.sent.find((m) => 'method' in m && m.method === 'elicitation/create');
  const withdrawn = c.sent.find((m) => 'method' in m && m.method === 'notifications/cancelled');
  assert.ok(question && 'id' in question && withdrawn && 'params' in withdrawn, JSON.stringify(c.sent));
  assert.equal(withdrawn.params?.['requestId'], question.id);
});

test('a result larger than one page comes back as its first page and a result artifact', async (tc) => {
  const c = await connect(tc);
  writeFileSync(nodePath.join(c.t.root, 'many.txt'), Array.from({ length: 20_000 }, (_, i) => `hit ${i}`).join('\n'));
  const searched = await c.call('search_files', { pattern: 'hit' });
  assert.equal(searched.isError, false, searched.text);
  assert.ok(Buffer.byteLength(searched.text) <= 50 * 1024, `${Buffer.byteLength(searched.text)} bytes`);
  assert.match(searched.text, /artifact_read/);
});

test("issue 44 item 11: an unknown tool is a protocol error (-32602, as MCP's tools spec has it) naming the tools; invalid arguments are a narrated tool error the model sees", async (tc) => {
  const c = await connect(tc);
  await assert.rejects(c.call('read_text_file', { path: 'a' }), (e: unknown) => {
    assert.ok(e instanceof McpError);
    assert.equal(e.code, ErrorCode.InvalidParams);
    assert.match(e.message, /^MCP error -32602: Unknown tool "read_text_file"\. Tools: open_file, .*list_roots\./);
    return true;
  });
  const invalid = await c.call('open_file', { path: 42 });
  assert.equal(invalid.isError, true);
  assert.match(invalid.text, /^E_SANDBOX_INVALID_INPUT: /);
});

// The MCP filesystem server's published advisories, each against this server.
test('advisory: a sibling folder whose name starts with the root\'s ("prefix folder") is outside', async (tc) => {
  const c = await connect(tc);
  const sibling = `${c.t.root}-evil`;
  mkdirSync(sibling);
  tc.after(() => rmSync(sibling, { recursive: true, force: true }));
  writeFileSync(nodePath.join(sibling, 'secret.txt'), CANARY);
  for (const path of [nodePath.join(sibling, 'secret.txt'), `../${nodePath.basename(sibling)}/secret.txt`]) {
    const opened = await c.call('open_file', { path });
    assert.equal(opened.isError, true, path);
    assert.doesNotMatch(opened.text, new RegExp(CANARY));
  }
});

test('advisory: a symlink inside the root to a file outside ("symlink escape"), also by a name differing only in case, reads nothing outside', async (tc) => {
  const c = await connect(tc);
  const outside = realpathSync(mkdtempSync(nodePath.join(tmpdir(), 'wt-mcp-outside-')));
  tc.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(nodePath.join(outside, 'secret.txt'), CANARY);
  symlinkSync(outside, nodePath.join(c.t.root, 'link'));
  symlinkSync(outside, nodePath.join(c.t.root, 'LINK2'));
  for (const path of ['link/secret.txt', 'LINK2/secret.txt', 'link2/secret.txt']) {
    const opened = await c.call('open_file', { path });
    assert.equal(opened.isError, true, path);
    assert.doesNotMatch(opened.text, new RegExp(CANARY));
  }
  const searched = await c.call('search_files', { pattern: 'C.NARY-7f3a91', hidden: true, no_ignore: true });
  assert.doesNotMatch(searched.text, new RegExp(CANARY));
});

test('advisory: a path with a trailing quote or space names no other folder', async (tc) => {
  const c = await connect(tc);
  const quoted = `${c.t.root}"`;
  mkdirSync(quoted);
  tc.after(() => rmSync(quoted, { recursive: true, force: true }));
  writeFileSync(nodePath.join(quoted, 'secret.txt'), CANARY);
  for (const path of [
    nodePath.join(quoted, 'secret.txt'),
    `${c.t.root} /secret.txt`,
    '../' + nodePath.basename(quoted) + '/secret.txt',
  ]) {
    const opened = await c.call('open_file', { path });
    assert.equal(opened.isError, true, path);
    assert.doesNotMatch(opened.text, new RegExp(CANARY));
  }
});

test('advisory: a file swapped for a FIFO ("read swapped for a FIFO") is refused, narrated, without hanging', async (tc) => {
  const c = await connect(tc);
  execFileSync('mkfifo', [nodePath.join(c.t.root, 'pipe.txt')]);
  const opened = await c.call('open_file', { path: 'pipe.txt' });
  assert.equal(opened.isError, true);
  assert.match(opened.text, /^E_SANDBOX_[A-Z_]+: .*pipe\.txt/);
});

test('advisory: the file a save replaces swapped for a symlink to outside after staging ("move source swapped"; our tools write only through save_media) writes nothing outside', async (tc) => {
  const c = await connect(tc);
  const outside = realpathSync(mkdtempSync(nodePath.join(tmpdir(), 'wt-mcp-outside-')));
  tc.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(nodePath.join(outside, 'victim.txt'), 'untouched\n');
  writeFileSync(nodePath.join(c.t.root, 'notes.txt'), 'old\n');
  const staged = await c.call('stage_file', { path: 'notes.txt', content: 'new\n' });
  const mediaId = /"media_id":"(m\d+)"/.exec(staged.text)?.[1];
  assert.ok(mediaId, staged.text);
  rmSync(nodePath.join(c.t.root, 'notes.txt'));
  symlinkSync(nodePath.join(outside, 'victim.txt'), nodePath.join(c.t.root, 'notes.txt'));
  const saved = await c.call('save_media', { media_id: mediaId });
  assert.equal(saved.isError, true, saved.text);
  assert.match(saved.text, /^E_SANDBOX_[A-Z_]+: /);
  assert.equal(readFileSync(nodePath.join(outside, 'victim.txt'), 'utf8'), 'untouched\n');
  assert.equal(
    lstatSync(nodePath.join(c.t.root, 'notes.txt')).isSymbolicLink(),
    true,
    'the link is not replaced either',
  );
});

test('advisory: a parent folder swapped for a symlink to outside while calls run ("parent swap during a check") never reads outside', async (tc) => {
  const c = await connect(tc);
  const outside = realpathSync(mkdtempSync(nodePath.join(tmpdir(), 'wt-mcp-outside-')));
  tc.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(nodePath.join(outside, 'data.txt'), CANARY);
  const dir = nodePath.join(c.t.root, 'dir');
  const parked = nodePath.join(c.t.root, 'dir-real');
  mkdirSync(dir);
  writeFileSync(nodePath.join(dir, 'data.txt'), 'harmless\n');
  // Swap dir between a real folder and a symlink to outside, between and during calls.
  for (let i = 0; i < 40; i++) {
    const swapped = i % 2 === 1;
    if (swapped) {
      execFileSync('mv', [dir, parked]);
      symlinkSync(outside, dir);
    }
    const opened = await c.call('open_file', { path: 'dir/data.txt' });
    const callId = /\b(art-[0-9a-f]+-\d+)\b/.exec(opened.text)?.[1];
    const text = callId ? `${opened.text}${(await c.call('artifact_read', { callId })).text}` : opened.text;
    assert.doesNotMatch(text, new RegExp(CANARY), `round ${i}`);
    if (swapped) {
      rmSync(dir);
      execFileSync('mv', [parked, dir]);
    }
  }
});

/** The pids of processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').split('\0').join(' ').includes(marker))
        found.push(Number(entry));
    } catch {
      /* it ended while we looked */
    }
  }
  return found;
}

/** Waits until `done` holds (the test's timeout is the hang guard). */
async function until(done: () => boolean): Promise<void> {
  while (!done()) await new Promise((resolve) => setImmediate(resolve));
}

test(
  'cancellation (notifications/cancelled) of a search still running stops its ripgrep; the server serves the next call',
  { timeout: 60_000 },
  async (tc) => {
    const c = await connect(tc);
    // A FIFO with no writer blocks ripgrep until it is killed.
    execFileSync('mkfifo', [nodePath.join(c.t.root, 'pipe')]);
    writeFileSync(nodePath.join(c.t.root, 'a.txt'), 'needle\n');
    const controller = new AbortController();
    const call = c.client.callTool({ name: 'search_files', arguments: { pattern: 'x', path: 'pipe' } }, undefined, {
      signal: controller.signal,
    });
    await until(() => rgChildren().length === 1);
    controller.abort();
    await assert.rejects(call);
    await until(() => rgChildren().length === 0);
    await until(() => c.t.log.entries.some((e) => e.tool === 'search_files'));
    assert.equal(c.t.log.entries.find((e) => e.tool === 'search_files')!.outcome, 'E_SANDBOX_CANCELLED');
    assert.match((await c.call('search_files', { pattern: 'needle', path: 'a.txt' })).text, /needle/);
  },
);

test('cancellation of a shell command over MCP ends it and everything it started', { timeout: 60_000 }, async (tc) => {
  const sandbox = srtSandbox({ ripgrepPath: testRipgrep().path });
  tc.after(() => sandbox.dispose());
  const home = testDir(tc, 'wt-mcp-home-').path;
  const shell: ShellHost = {
    sandbox,
    home,
    env: () => ({ PATH: process.env['PATH'] ?? '/usr/bin:/bin', HOME: home }),
    allowedDomains: () => [],
    maxTimeoutMs: () => 600_000,
  };
  const c = await connect(tc, { shell });
  execFileSync('git', ['init', '-q', c.t.root]);
  const marker = String(400_000 + Math.floor(Math.random() * 500_000));
  const controller = new AbortController();
  const call = c.client.callTool(
    { name: 'run_shell_command', arguments: { command: `sleep ${marker} & sleep ${marker}1; wait` } },
    undefined,
    { signal: controller.signal },
  );
  await until(() => processesWith(`sleep ${marker}1`).length > 0);
  controller.abort();
  await assert.rejects(call);
  await until(() => processesWith(`sleep ${marker}`).length === 0);
  assert.equal((await c.call(LIST_ROOTS, {})).isError, false);
});

test('progress: a client that passes a progress token hears how far a long call got, and still gets the whole result', async (tc) => {
  const c = await connect(tc);
  for (let i = 0; i < 300; i++) writeFileSync(nodePath.join(c.t.root, `f${i}.txt`), `needle ${i}\n`);
  const heard: { progress: number; message?: string | undefined }[] = [];
  const result = (await c.client.callTool({ name: 'search_files', arguments: { pattern: 'needle' } }, undefined, {
    onprogress: (p) => heard.push(p),
  })) as CallToolResult;
  const text = result.content.map((part) => (part.type === 'text' ? part.text : '')).join('\n');
  assert.match(text, /^300 matching lines in 300 files/m);
  assert.ok(heard.length >= 1, 'at least one progress notification');
  assert.match(heard[0]!.message ?? '', /^\d+ so far: search_files "needle"/);
  assert.ok(
    heard.every((p, i) => i === 0 || p.progress > heard[i - 1]!.progress),
    'progress only grows',
  );
  // Without a token, nothing is sent.
  const before = c.sent.filter((m) => 'method' in m && m.method === 'notifications/progress').length;
  await c.call('search_files', { pattern: 'needle' });
  assert.equal(c.sent.filter((m) => 'method' in m && m.method === 'notifications/progress').length, before);
});

test('issue 44 item 5: an empty roots list (the MCP Inspector announces one) narrows nothing: every file call works on --root', async (tc) => {
  const c = await connect(tc, { roots: () => [] });
  writeFileSync(nodePath.join(c.t.root, 'a.txt'), 'hello\n');
  assert.equal((await c.call(LIST_ROOTS, {})).text, `${nodePath.basename(c.t.root)}\t${c.t.root}`);
  const found = await c.call('find_files', { glob: '*.txt' });
  assert.equal(found.isError, false, found.text);
  assert.match(found.text, /a\.txt/);
  assert.equal((await c.call('open_file', { path: 'a.txt' })).isError, false);
  assert.deepEqual(c.warnings, []);
});

test('issue 44 item 5: client roots outside --root (a user-scope config started from another folder) are ignored, with one line in the log and in list_roots', async (tc) => {
  const outside = realpathSync(mkdtempSync(nodePath.join(tmpdir(), 'wt-mcp-outside-')));
  tc.after(() => rmSync(outside, { recursive: true, force: true }));
  writeFileSync(nodePath.join(outside, 'far.txt'), CANARY);
  const elsewhere = pathToFileURL(outside).href;
  const gone = pathToFileURL(nodePath.join(outside, 'gone')).href;
  const c = await connect(tc, { roots: () => [elsewhere, gone] });
  writeFileSync(nodePath.join(c.t.root, 'a.txt'), 'hello\n');
  const roots = (await c.call(LIST_ROOTS, {})).text.split('\n');
  assert.equal(roots[0], `${nodePath.basename(c.t.root)}\t${c.t.root}`);
  const line = `Ignored the client's roots ${elsewhere}, ${gone}: they are no local folder or lie outside the server's --root folders (${c.t.root}), which only the server's --root widens.`;
  assert.deepEqual(roots.slice(1), [line]);
  assert.deepEqual(c.warnings, [line]);
  assert.match((await c.call('list_directory', {})).text, /a\.txt/);
  const far = await c.call('open_file', { path: nodePath.join(outside, 'far.txt') });
  assert.equal(far.isError, true);
  assert.doesNotMatch(far.text, new RegExp(CANARY));
});

/** Answers nothing, ever; resolves `asked` when the question comes. */
function silentPerson(): { asked: Promise<void>; answer: () => Promise<ElicitResult> } {
  let resolve: () => void = () => undefined;
  const asked = new Promise<void>((r) => {
    resolve = r;
  });
  return {
    asked,
    answer: () => {
      resolve();
      return new Promise<ElicitResult>(() => undefined);
    },
  };
}

test(
  'issue 44 item 7: a question waits as long as the person takes (no 60 s request timeout), and an answer after 61 s still counts',
  { timeout: 30_000 },
  async (tc) => {
    tc.mock.timers.enable({ apis: ['setTimeout'] });
    let answer: (result: ElicitResult) => void = () => undefined;
    let asking: () => void = () => undefined;
    const askedNow = new Promise<void>((resolve) => {
      asking = resolve;
    });
    const c = await connect(tc, {
      answer: () => {
        asking();
        return new Promise<ElicitResult>((resolve) => {
          answer = resolve;
        });
      },
    });
    withSecret(c.t);
    // The client's own wait for the call is the client's to choose (this one waits as long as the server).
    const opened = c.client.callTool({ name: 'open_file', arguments: { path: '.env' } }, undefined, {
      timeout: 2 ** 31 - 1,
    }) as Promise<CallToolResult>;
    await askedNow;
    // The SDK's default request timeout is 60 s: a minute and more passes with the question open.
    tc.mock.timers.tick(61_000);
    tc.mock.timers.tick(3_600_000);
    answer(allowOnce());
    const result = await opened;
    assert.notEqual(result.isError, true, JSON.stringify(result));
  },
);

test('issue 44 item 7: with --ask-timeout, a question nobody answers is refused saying the person did not answer, not that something failed', async (tc) => {
  const person = silentPerson();
  const c = await connect(tc, { answer: person.answer, askTimeoutMs: 200 });
  withSecret(c.t);
  const opened = await c.call('open_file', { path: '.env' });
  assert.equal(opened.isError, true);
  assert.match(
    opened.text,
    /^E_SANDBOX_REFUSED: open_file on "\.env" was refused: "\.env" matches the secret rule "[^"]+".*, so the person was asked to confirm it, and did not answer within 0\.2 s \(the server's --ask-timeout\)\. It did not run\. Ask the user whether they want it before calling it again\.$/,
  );
  assert.doesNotMatch(opened.text, /Retry|failed/);
});

test(
  'issue 44 item 7: --ask-timeout is counted again from each progress the client reports on the question',
  { timeout: 30_000 },
  async (tc) => {
    tc.mock.timers.enable({ apis: ['setTimeout'] });
    let answer: (result: ElicitResult) => void = () => undefined;
    let report: () => Promise<void> = async () => undefined;
    let asking: () => void = () => undefined;
    const askedNow = new Promise<void>((resolve) => {
      asking = resolve;
    });
    const c = await connect(tc, {
      askTimeoutMs: 10_000,
      answer: () => {
        asking();
        return new Promise<ElicitResult>((resolve) => {
          answer = resolve;
        });
      },
    });
    c.client.setRequestHandler(ElicitRequestSchema, (request, extra) => {
      const token = request.params._meta?.progressToken;
      asking();
      assert.ok(token !== undefined, 'the question carries a progress token');
      report = () =>
        extra.sendNotification({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1, message: 'the person is reading' },
        });
      return new Promise<ElicitResult>((resolve) => {
        answer = resolve;
      });
    });
    withSecret(c.t);
    const opened = c.client.callTool({ name: 'open_file', arguments: { path: '.env' } }, undefined, {
      timeout: 2 ** 31 - 1,
    }) as Promise<CallToolResult>;
    await askedNow;
    for (let i = 0; i < 3; i++) {
      tc.mock.timers.tick(8_000);
      await report();
      // The notification reaches the server before the next tick.
      await new Promise((resolve) => setImmediate(resolve));
    }
    answer(allowOnce());
    const result = await opened;
    assert.notEqual(result.isError, true, JSON.stringify(result));
  },
);

test('issue 44 item 10: messages over MCP speak the server\'s words (its --policy file, this MCP session), never VS Code\'s settings, editor session or "open a folder"', async (tc) => {
  const c = await connect(tc, { rules: [{ glob: 'private/**', read: 'deny' }], answer: () => ({ action: 'decline' }) });
  mkdirSync(nodePath.join(c.t.root, 'private'));
  writeFileSync(nodePath.join(c.t.root, 'private', 'keys.txt'), CANARY);
  withSecret(c.t);
  const texts: string[] = [];
  const denied = await c.call('open_file', { path: 'private/keys.txt' });
  texts.push(denied.text);
  assert.equal(
    denied.text,
    'E_SANDBOX_REFUSED: open_file on "private/keys.txt" was refused by the rule "private/**" (read denied). Do not retry this path; work with other files or ask the user to change the server\'s --policy file.',
  );
  const gone = await c.call('artifact_read', { callId: 'art-000000-9' });
  texts.push(gone.text);
  assert.match(
    gone.text,
    /artifacts live only as long as this MCP session \(until the server stops or the client reconnects\) and this id is not one of them/,
  );
  const declined = await c.call('open_file', { path: '.env' });
  texts.push(declined.text);
  assert.match(declined.text, /^E_SANDBOX_REFUSED: The user declined open_file on the secret file "\.env"\./);
  for (const text of texts)
    assert.doesNotMatch(text, /workspaceTools\.|editor session|open a folder|protected file/, text);
});

test('issue 44 item 10 (and 5): a call that finds no folder says which roots the client sent and which --root folders the server has', async (tc) => {
  const c = await connect(tc, { noServerRoots: true, roots: (ws) => [pathToFileURL(ws).href] });
  const listed = await c.call('list_directory', { path: 'src' });
  assert.equal(listed.isError, true);
  assert.equal(
    listed.text,
    `E_SANDBOX_NOT_FOUND: No workspace folder: the client's roots (${pathToFileURL(c.t.root).href}) leave none of the server's --root folders (none). Tell the user: the server serves the folders its --root options name, in their MCP client's configuration, narrowed by the roots the client announces.`,
  );
});

test(
  'a save the client cancels after its last check, which lands, is said on the log with the save_id that undoes it, never its result (the client drops the result)',
  { timeout: 60_000 },
  async (tc) => {
    const fs = new FaultyFs();
    const c = await connect(tc, { fs });
    writeFileSync(nodePath.join(c.t.root, 'a.txt'), 'one\n');
    const staged = await c.call('stage_file', { path: 'a.txt', content: 'two\n' });
    const mediaId = /"media_id":"(m\d+)"/.exec(staged.text)?.[1];
    const controller = new AbortController();
    // The client cancels as the written file takes its place: past the save's last check.
    fs.beforeRename = (_from, to) => {
      if (to.endsWith('/a.txt')) controller.abort();
    };
    const call = c.client.callTool({ name: 'save_media', arguments: { media_id: mediaId } }, undefined, {
      signal: controller.signal,
    });
    await assert.rejects(call);
    await until(() => c.warnings.some((w) => w.includes('cancelled had already done its work')));
    assert.equal(readFileSync(nodePath.join(c.t.root, 'a.txt'), 'utf8'), 'two\n');
    assert.match(
      c.warnings.join('\n'),
      /a save_media call the client cancelled had already done its work: undo_save \{"save_id":"s1"\} takes it back\./,
    );
  },
);
