import type { Narration } from './errors.ts';

/** A budget a session keeps, as its host lets the person set it (or not). */
export type BudgetName = 'media' | 'undo';

/**
 * The words a host's person knows for what they can change, so that the core's messages name the
 * host's own settings or flags: VS Code's settings, the CLI's and the MCP server's options. Each
 * host passes one to its Session; the core's messages take them from there and nowhere else.
 */
export interface HostVocabulary {
  /** Where the rules are changed ("workspaceTools.rules"; "the --policy file"). */
  readonly rules: string;
  /** Where the hosts commands may reach are allowed ("workspaceTools.shell.allowedDomains"; "--allow-domain"). */
  readonly allowedDomains: string;
  /** How long artifacts, staged media and saves live ("the editor session"). */
  readonly session: string;
  /** Where a budget is raised, in parentheses after its name: a setting, or that nothing raises it here. */
  readonly budget: (name: BudgetName) => string;
  /** A path was given and no workspace folder is there to address it in. */
  readonly noFolder: () => Narration;
  /** Where the longest timeout a command may ask for is raised; absent: nothing raises it here. */
  readonly shellTimeout?: string;
}

/** VS Code's words: its settings and its window. */
export const VSCODE_VOCABULARY: HostVocabulary = {
  rules: 'workspaceTools.rules',
  allowedDomains: 'workspaceTools.shell.allowedDomains',
  session: 'the editor session',
  budget: (name) => (name === 'media' ? 'workspaceTools.media.memoryBudgetMB' : 'workspaceTools.undo.diskBudgetMB'),
  noFolder: () => ({
    what: 'No workspace folder is open, so there is nothing to address.',
    next: 'Ask the user to open a folder.',
  }),
  shellTimeout: 'workspaceTools.shell.maxTimeoutMs',
};

/** The budgets a headless host keeps at their defaults. */
function fixedBudget(host: string): (name: BudgetName) => string {
  return () => `fixed in ${host}: no flag changes it`;
}

/** The CLI's words: its flags. */
export const CLI_VOCABULARY: HostVocabulary = {
  rules: 'the --policy file',
  allowedDomains: '--allow-domain',
  session: 'this CLI session',
  budget: fixedBudget('the CLI'),
  noFolder: () => ({
    what: 'No workspace folder was given, so there is nothing to address.',
    next: 'Tell the user to start the CLI with --root DIR.',
  }),
};

/**
 * The MCP server's words: its flags, as the person wrote them in their client's configuration.
 * `noFolder` says which roots the client sent and which --root folders the server has.
 */
export function mcpVocabulary(noFolder: () => Narration): HostVocabulary {
  return {
    rules: "the server's --policy file",
    allowedDomains: "the server's --allow-domain",
    session: 'this MCP session (until the server stops or the client reconnects)',
    budget: fixedBudget('the MCP server'),
    noFolder,
  };
}
