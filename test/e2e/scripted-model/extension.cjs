// A language model for agent-mode tests: it "answers" by following a script of tool calls, then
// says what the tools returned. Registered with the finalized vscode.lm chat-provider API, so
// Copilot Chat's agent mode accepts it without a sign-in.
//
// Script (JSON), from $WT_SCRIPTED_MODEL_SCRIPT or the file named by $WT_SCRIPTED_MODEL_SCRIPT_FILE:
//   {
//     "steps": [
//       { "tool": "find_files", "input": { "glob": "**/*.md" } },
//       { "tool": "open_file", "input": { "path": "{{step 0 /(\\S*README\\.md)/}}" } }
//     ],
//     "final": "Done. The first result was: {{step 0}}"
//   }
// Each request continues the current turn: after k tool results the model calls step k, and once
// every step has a result it answers with `final` (default: a summary of the results). In strings
// of `input` and `final`, `{{step N}}` is the text of step N's result (0-based) and
// `{{step N /regex/}}` its first capture group; `{{workspaceFolder}}` is the first workspace folder's
// absolute path (for tools that take absolute paths, such as Copilot's read_file). A step's `tool` is matched against the tools the
// request offers: exact name first, then a name ending in `_<tool>` or starting with `<tool>`.
// A request that offers no tools (a title or summary request) gets plain text. A step's tool
// "mcp:<tool>" is that tool of an MCP server (VS Code offers it as mcp_<server>_<tool>).
//
// $WT_MCP_SERVER (JSON {command, args}): registers that stdio MCP server through VS Code's MCP
// server definition provider API, with `--root <the workspace's first folder>` appended.
//
// $WT_SCRIPTED_MODEL_LOG, when set, receives one JSON object a line: activated, extension-active
// (Copilot Chat and each id in $WT_SCRIPTED_MODEL_AWAIT, comma-separated), copilot-active, ready
// (all of those active), request, tool-call, final; tests read it to see what the model was
// offered and got back.
//
// $WT_SCRIPTED_MODEL_RECEIVED, when set, receives everything each request hands the model, one
// JSON object a line: {time, tools, messages: [{role, parts: [{type, text | callId, name, input}]}]},
// with every text part and tool result in full, so a test can check that a secret never reached
// the model (in a prompt, a tool result, an error, or anywhere else).
//
// $WT_SCRIPTED_MODEL_SEND_PROMPT=1 (the sandbox's demo, scripts/demo.mjs): once ready, the model
// runs the script's `commands` (command ids, e.g. to show a view) and sends its `prompt` itself,
// in every window that opens, in agent mode with this model selected, so a person sees the
// conversation start without typing or signing in. On a fresh profile it first enables the
// built-in Copilot Chat, as "Manage Language Models" does. A failure is logged as `error`.
/* global require, exports -- a CommonJS extension: VS Code loads it with require() */
/* eslint-disable @typescript-eslint/no-require-imports */
const vscode = require('vscode');
const fs = require('node:fs');
const { createHash } = require('node:crypto');

const VENDOR = 'wt-scripted';
const MODEL_ID = 'scripted';

function log(event, data = {}) {
  const file = process.env.WT_SCRIPTED_MODEL_LOG;
  if (!file) return;
  try {
    fs.appendFileSync(file, `${JSON.stringify({ event, time: Date.now(), ...data })}\n`);
  } catch (err) {
    console.error(`[scripted-model] cannot write ${file}: ${err}`);
  }
}

function loadScript() {
  if (process.env.WT_SCRIPTED_MODEL_SCRIPT) return JSON.parse(process.env.WT_SCRIPTED_MODEL_SCRIPT);
  if (process.env.WT_SCRIPTED_MODEL_SCRIPT_FILE)
    return JSON.parse(fs.readFileSync(process.env.WT_SCRIPTED_MODEL_SCRIPT_FILE, 'utf8'));
  return { steps: [], final: 'The scripted model has no script (set WT_SCRIPTED_MODEL_SCRIPT).' };
}

/** A message part as plain JSON: what the model received, in full. */
function describePart(p) {
  if (isToolResult(p)) return { type: 'tool-result', callId: p.callId, text: resultText(p) };
  if (isToolCall(p)) return { type: 'tool-call', callId: p.callId, name: p.name, input: p.input };
  if (typeof p?.value === 'string') return { type: 'text', text: p.value };
  if (p?.data instanceof Uint8Array)
    return { type: 'data', mimeType: p.mimeType, text: Buffer.from(p.data).toString('utf8') };
  let text;
  try {
    text = JSON.stringify(p);
  } catch {
    text = String(p);
  }
  return { type: 'other', text };
}

function logReceived(messages, tools) {
  const file = process.env.WT_SCRIPTED_MODEL_RECEIVED;
  if (!file) return;
  const record = {
    time: Date.now(),
    tools: tools.map((t) => t.name),
    messages: messages.map((m) => ({ role: m.role, name: m.name, parts: partsOf(m).map(describePart) })),
  };
  try {
    fs.appendFileSync(file, `${JSON.stringify(record)}\n`);
  } catch (err) {
    console.error(`[scripted-model] cannot write ${file}: ${err}`);
  }
}

/** Text of a tool result's content parts. */
function resultText(part) {
  return (part.content ?? [])
    .map((c) => {
      if (typeof c?.value === 'string') return c.value;
      if (isImagePart(c)) return '';
      if (c?.data instanceof Uint8Array) return Buffer.from(c.data).toString('utf8');
      return JSON.stringify(c);
    })
    .join('');
}

const isImagePart = (c) =>
  c?.data instanceof Uint8Array && typeof c.mimeType === 'string' && c.mimeType.startsWith('image/');

/** The images among a tool result's content parts, as the model receives them: MIME type and size. */
const resultImages = (part) =>
  (part.content ?? []).filter(isImagePart).map((c) => ({
    mimeType: c.mimeType,
    bytes: c.data.byteLength,
    sha256: createHash('sha256').update(c.data).digest('hex'),
  }));

const isToolResult = (p) =>
  p instanceof vscode.LanguageModelToolResultPart || (p && typeof p.callId === 'string' && Array.isArray(p.content));
const isToolCall = (p) =>
  p instanceof vscode.LanguageModelToolCallPart ||
  (p && typeof p.callId === 'string' && typeof p.name === 'string' && 'input' in p);
const partsOf = (m) =>
  Array.isArray(m.content) ? m.content : typeof m.content === 'string' ? [{ value: m.content }] : [];

/**
 * The current turn: the messages after the last one that is neither a tool call nor a tool
 * result (the user's prompt). Returns the prompt's text and this turn's tool results in order.
 */
function currentTurn(messages) {
  let i = messages.length - 1;
  while (i >= 0 && partsOf(messages[i]).some((p) => isToolResult(p) || isToolCall(p))) i--;
  const prompt =
    i >= 0
      ? partsOf(messages[i])
          .map((p) => (typeof p?.value === 'string' ? p.value : ''))
          .join('')
      : '';
  const results = messages
    .slice(i + 1)
    .flatMap((m) => partsOf(m).filter(isToolResult))
    .map((p) => ({ callId: p.callId, text: resultText(p), images: resultImages(p) }));
  return { prompt, results };
}

function fill(value, results) {
  if (typeof value === 'string') {
    const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath ?? '';
    return value.replaceAll('{{workspaceFolder}}', folder).replace(/\{\{step (\d+)(?: \/(.*?)\/)?\}\}/g, (_, n, re) => {
      const text = results[Number(n)]?.text ?? '';
      if (!re) return text;
      const m = new RegExp(re).exec(text);
      return m ? (m[1] ?? m[0]) : '';
    });
  }
  if (Array.isArray(value)) return value.map((v) => fill(v, results));
  if (value && typeof value === 'object')
    return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, fill(v, results)]));
  return value;
}

function resolveToolName(wanted, tools) {
  const names = tools.map((t) => t.name);
  // "mcp:<tool>": that tool of an MCP server (VS Code names it mcp_<server>_<tool>).
  if (wanted.startsWith('mcp:'))
    return names.find((n) => n.startsWith('mcp_') && n.endsWith(`_${wanted.slice(4)}`)) ?? wanted;
  return (
    names.find((n) => n === wanted) ??
    names.find((n) => n.endsWith(`_${wanted}`)) ??
    names.find((n) => n.startsWith(wanted)) ??
    wanted
  );
}

const provider = {
  provideLanguageModelChatInformation() {
    return [
      {
        id: MODEL_ID,
        name: 'Scripted Model',
        family: 'scripted',
        version: '1.0.0',
        detail: 'tests only',
        tooltip: 'Follows a script of tool calls (Workspace Tools tests)',
        maxInputTokens: 128_000,
        maxOutputTokens: 8_192,
        isUserSelectable: true,
        capabilities: { toolCalling: true, imageInput: true },
      },
    ];
  },

  async provideLanguageModelChatResponse(model, messages, options, progress) {
    const tools = options.tools ?? [];
    logReceived(messages, tools);
    const { prompt, results } = currentTurn(messages);
    log('request', { prompt: prompt.slice(-500), tools: tools.map((t) => t.name), results });
    if (tools.length === 0) {
      progress.report(new vscode.LanguageModelTextPart('Scripted model'));
      return;
    }
    const script = loadScript();
    const steps = script.steps ?? [];
    const k = results.length;
    if (k < steps.length) {
      const step = steps[k];
      const name = resolveToolName(step.tool, tools);
      const input = fill(step.input ?? {}, results);
      const callId = `wt-step-${k}-${Date.now().toString(36)}`;
      log('tool-call', { step: k, name, input, callId });
      progress.report(new vscode.LanguageModelToolCallPart(callId, name, input));
      return;
    }
    const text =
      script.final !== undefined
        ? fill(script.final, results)
        : [
            `Scripted model: ${steps.length} tool call(s) done.`,
            ...results.map((r, i) => `- step ${i} (${steps[i]?.tool}): ${r.text.slice(0, 300)}`),
          ].join('\n');
    log('final', { text });
    progress.report(new vscode.LanguageModelTextPart(text));
  },

  async provideTokenCount(model, text) {
    const s = typeof text === 'string' ? text : JSON.stringify(text);
    return Math.ceil(s.length / 4);
  },
};

const COPILOT_CHAT = 'GitHub.copilot-chat';
const sendsPrompt = () => process.env.WT_SCRIPTED_MODEL_SEND_PROMPT === '1';

/** The demo's prompt, sent in agent mode with this model selected (the chat view opens). */
async function sendScriptPrompt(openedManager) {
  const { prompt = 'Go.', commands = [] } = loadScript();
  // The language model manager opened as a modal editor over the workbench: close it.
  if (openedManager) await vscode.commands.executeCommand('workbench.action.closeModalEditor');
  for (const command of commands) await vscode.commands.executeCommand(command);
  await vscode.commands.executeCommand('workbench.action.chat.open', {
    mode: 'agent',
    modelSelector: { vendor: VENDOR, id: MODEL_ID },
    query: prompt,
  });
  log('prompt-sent', { prompt });
}

/**
 * $WT_MCP_SERVER (JSON {command, args}): an MCP server (stdio) this extension defines through VS
 * Code's MCP server definition provider API, run with `--root <the workspace's first folder>`.
 */
function registerMcpServer(context) {
  if (!process.env.WT_MCP_SERVER) return;
  const { command, args } = JSON.parse(process.env.WT_MCP_SERVER);
  context.subscriptions.push(
    vscode.lm.registerMcpServerDefinitionProvider('wt-mcp', {
      provideMcpServerDefinitions() {
        const folder = vscode.workspace.workspaceFolders?.[0]?.uri.fsPath;
        log('mcp-definitions', { folder });
        return folder
          ? [new vscode.McpStdioServerDefinition('workspace-tools', command, [...args, '--root', folder])]
          : [];
      },
    }),
  );
  log('mcp-registered');
}

exports.activate = (context) => {
  context.subscriptions.push(vscode.lm.registerLanguageModelChatProvider(VENDOR, provider));
  registerMcpServer(context);
  log('activated');
  // On a fresh profile the built-in Copilot Chat is disabled until chat is set up; the command
  // behind "Manage Language Models" enables it (the e2e tests run it from the palette instead).
  const openedManager = sendsPrompt() && !vscode.extensions.getExtension(COPILOT_CHAT);
  if (openedManager) {
    log('enabling-copilot-chat');
    Promise.resolve(vscode.commands.executeCommand('workbench.action.chat.manage')).catch((err) =>
      log('error', { what: 'workbench.action.chat.manage', message: String(err) }),
    );
  }
  // Agent mode needs the built-in Copilot Chat running, and a tool call fails ("does not have an
  // implementation registered") until the extension owning the tool has activated. Report when
  // each is active, then `ready`, so a test knows when a prompt will reach this model and the tools.
  const waitingFor = [
    COPILOT_CHAT,
    ...(process.env.WT_SCRIPTED_MODEL_AWAIT ?? '')
      .split(',')
      .map((s) => s.trim())
      .filter(Boolean),
  ];
  const timer = setInterval(() => {
    for (const id of [...waitingFor]) {
      if (!vscode.extensions.getExtension(id)?.isActive) continue;
      waitingFor.splice(waitingFor.indexOf(id), 1);
      log('extension-active', { id });
      if (id === COPILOT_CHAT) log('copilot-active');
    }
    if (waitingFor.length === 0) {
      clearInterval(timer);
      log('ready');
      if (sendsPrompt())
        sendScriptPrompt(openedManager).catch((err) =>
          log('error', { what: 'sending the prompt', message: String(err) }),
        );
    }
  }, 250);
  context.subscriptions.push({ dispose: () => clearInterval(timer) });
};

exports.deactivate = () => {};
