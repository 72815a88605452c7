import * as vscode from 'vscode';
import { BUILT_IN_RULES, type Rule } from '../core/policy/policy.ts';
import { PROTECTED_FAMILIES } from '../core/policy/protected.ts';
import type { ScopedWriteRoots } from '../core/media/write-roots.ts';
import { TOOL_NAMES } from '../core/contract/names.ts';
import type { Settings } from './settings.ts';
import type { SandboxAvailability } from '../core/shell/port.ts';

const STATUS_SCHEME = 'workspace-tools-status';
export const GATE_STATUS_URI = vscode.Uri.from({ scheme: STATUS_SCHEME, path: '/Gate Status.md' });

/**
 * What VS Code 1.139's default Agent offers a model beside our tools that reads, searches or changes
 * files or runs commands (seen in the agent-mode e2e). VS Code registers them internally, so
 * `vscode.lm.tools` does not list them all.
 */
const BUILT_IN_UNGATED = [
  'read_file',
  'grep_search',
  'file_search',
  'list_dir',
  'get_errors',
  'view_image',
  'create_file',
  'create_directory',
  'replace_string_in_file',
  'insert_edit_into_file',
  'edit_notebook_file',
  'run_notebook_cell',
  'read_notebook_cell_output',
  'run_in_terminal',
  'send_to_terminal',
  'get_terminal_output',
  'create_and_run_task',
  'run_vscode_command',
  'memory',
];

/** Tools of VS Code or other extensions that read or change files or run commands: the ones our gate does not see. */
const UNGATED_KIND =
  /read|file|dir|grep|search|edit|create|replace|insert|patch|terminal|run|task|notebook|codebase|usages|fetch|change/i;

export interface GateStatusInput {
  readonly settings: Settings;
  readonly writeRoots: ScopedWriteRoots;
  readonly trusted: boolean;
  /** The tools this window's VS Code knows (vscode.lm.tools). */
  readonly allTools: readonly { readonly name: string }[];
  /** `chat.tools.global.autoApprove`: VS Code approves every tool call without asking. */
  readonly autoApproveAll: boolean;
  /** Whether run_shell_command's OS sandbox is there (undefined: not checked yet). */
  readonly shell?: SandboxAvailability | undefined;
  /** Hosts the person allowed commands to reach for this session (Reset Session Approvals forgets them). */
  readonly sessionHosts?: readonly string[];
}

function shellStatus(input: GateStatusInput): string {
  const shell = input.shell;
  const domains = input.settings.shell.allowedDomains;
  const network =
    domains.length === 0 ? 'the network is off' : `the network reaches only ${domains.map(code).join(', ')}`;
  if (shell === undefined) return 'Shell sandbox: not checked yet.';
  const session = input.sessionHosts?.length
    ? ` Hosts you allowed for this session: ${input.sessionHosts.map(code).join(', ')} (Reset Session Approvals forgets them).`
    : '';
  return shell.available
    ? `Shell sandbox: available (${shell.mechanism}). \`run_shell_command\` runs commands inside it: what the rules protect from reading is unreadable, writes go only under the write roots, protected files are read-only, ${network}.${session}`
    : `Shell sandbox: **not available** (${shell.why}), so \`run_shell_command\` refuses every command. ${shell.install}`;
}

/** Built-in tools that sit beside ours in agents other than the Workspace Tools agent. */
export function ungatedTools(allTools: readonly { readonly name: string }[]): string[] {
  const ours = new Set<string>(TOOL_NAMES);
  const registered = allTools.map((t) => t.name).filter((name) => !ours.has(name) && UNGATED_KIND.test(name));
  return [...new Set([...BUILT_IN_UNGATED, ...registered])].sort();
}

const code = (text: string): string => `\`${text.replace(/`/g, "'")}\``;
const actions = (rule: Rule): string =>
  [rule.read ? `read: ${rule.read}` : '', rule.write ? `write: ${rule.write}` : ''].filter(Boolean).join(', ');

/** The gate in force, for the person: every rule and where it came from, write roots, and what other agents offer. */
export function gateStatusMarkdown(input: GateStatusInput): string {
  const { settings, writeRoots } = input;
  const { rules } = settings;
  const out: string[] = ['# Workspace Tools: gate status', ''];
  out.push(
    `Workspace ${input.trusted ? 'trusted: read and write tools are registered' : 'not trusted: only the read tools are registered, and every read asks'}.`,
    '',
  );

  out.push('## Rules in force', '');
  out.push(
    'For each path the last matching rule decides; a rule from workspace or folder settings can only make that decision stricter.',
    '',
  );
  if (rules.errors.length) out.push(`**Every call asks until the rules are fixed:** ${rules.errors.join(' ')}`, '');
  const secrets = BUILT_IN_RULES.filter((r) => r.source === 'secret').map((r) => code(r.rule.glob));
  out.push(`- **Built-in secrets** (read: ask, write: ask, a modal every time): ${secrets.join(', ')}.`);
  for (const group of PROTECTED_FAMILIES) {
    out.push(
      `- **Built-in protected** (write: ask, a modal every time) because ${group.reason} (${group.family}): ${group.globs.map(code).join(', ')}.`,
    );
  }
  for (const r of BUILT_IN_RULES.filter((x) => x.source === 'built-in'))
    out.push(`- **Built-in** ${code(r.rule.glob)} (${actions(r.rule)}): ${r.reason}.`);
  const user = settings.policy.userRules;
  out.push(
    user.length
      ? `- **Your user settings** (may loosen): ${user.map((r) => `${code(r.glob)} (${actions(r)})`).join(', ')}.`
      : '- **Your user settings:** no rules.',
  );
  out.push(
    rules.workspaceRules.length
      ? `- **Workspace settings** (applied, tightening only): ${rules.workspaceRules.map((r) => `${code(r.glob)} (${actions(r)}) from ${r.where}`).join(', ')}.`
      : '- **Workspace settings:** no rules applied.',
  );
  for (const text of rules.ignored) out.push(`- **Ignored:** ${text}`);
  out.push('');

  out.push('## Write roots', '');
  const inForce = writeRoots.writeRoots;
  out.push(
    inForce === undefined
      ? '`save_media` may write anywhere in the workspace folders.'
      : inForce.length === 0
        ? '`save_media` may not write anywhere.'
        : `\`save_media\` may write under ${inForce.map((r) => code(r.display)).join(', ')}.`,
  );
  for (const text of [...writeRoots.errors, ...writeRoots.ignored]) out.push(`- ${text}`);
  out.push('');

  out.push('## Shell commands', '', shellStatus(input));
  for (const text of input.settings.shell.problems) out.push(`- ${text}`);
  out.push('');

  out.push('## Agents', '');
  out.push(
    `- The **Workspace Tools** agent (pick it in the chat's agent picker) offers the model only this extension's ${TOOL_NAMES.length} tools: every read and write it makes passes this gate.`,
  );
  out.push(
    `- Any other agent, VS Code's default **Agent** among them, also offers the model tools of VS Code and other extensions that this extension does not gate (a secret they read is not asked here): ${ungatedTools(input.allTools).map(code).join(', ')}. VS Code does not tell extensions which agent a chat uses, so check the agent picker.`,
  );
  if (input.autoApproveAll)
    out.push(
      "- `chat.tools.global.autoApprove` is on: VS Code runs every tool without its confirmation. Only this extension's modal dialogs for secrets and protected files still ask.",
    );
  return `${out.join('\n')}\n`;
}

/** One line for the audit log at activation and on change. */
export function gateStatusLine(input: GateStatusInput): string {
  const { rules } = input.settings;
  const others = ungatedTools(input.allTools).length;
  return (
    `Gate: ${BUILT_IN_RULES.length} built-in rules (secrets, protected files, .git), ${input.settings.policy.userRules.length} from user settings, ` +
    `${rules.workspaceRules.length} from workspace settings (${rules.ignored.length} loosening ignored)${rules.errors.length ? ', INVALID: every call asks' : ''}; ` +
    `write roots: ${input.writeRoots.writeRoots === undefined ? 'every workspace folder' : input.writeRoots.writeRoots.map((r) => r.display).join(', ') || 'none'}; ` +
    `${input.shell === undefined ? '' : input.shell.available ? `shell sandbox: ${input.shell.mechanism}; ` : `shell sandbox: NOT AVAILABLE (${input.shell.why}); `}` +
    `${others} file/terminal tools of VS Code or other extensions are not gated by this extension (outside the Workspace Tools agent).`
  );
}

/** "Workspace Tools: Show Gate Status": a read-only Markdown document, refreshed each time it is shown. */
export function registerGateStatus(
  status: () => GateStatusInput,
  beforeShowing: () => Promise<void>,
): vscode.Disposable {
  const changed = new vscode.EventEmitter<vscode.Uri>();
  const provider: vscode.TextDocumentContentProvider = {
    onDidChange: changed.event,
    provideTextDocumentContent: () => gateStatusMarkdown(status()),
  };
  return vscode.Disposable.from(
    changed,
    vscode.workspace.registerTextDocumentContentProvider(STATUS_SCHEME, provider),
    vscode.commands.registerCommand('workspaceTools.showGateStatus', async () => {
      await beforeShowing();
      changed.fire(GATE_STATUS_URI);
      const doc = await vscode.workspace.openTextDocument(GATE_STATUS_URI);
      await vscode.languages.setTextDocumentLanguage(doc, 'markdown');
      await vscode.window.showTextDocument(doc, { preview: true });
    }),
  );
}
