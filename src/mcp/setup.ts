/** What a person pastes into another agent's settings to run this server: one snippet per client. */
export interface McpClientSnippet {
  readonly client: string;
  /** Where it goes. */
  readonly where: string;
  readonly language: 'json' | 'toml' | 'sh';
  readonly text: string;
}

export interface McpSetup {
  /** The Node binary to run the server with (Node >= 22). */
  readonly node: string;
  /** The absolute path of dist/cli.js. */
  readonly cli: string;
  /** The workspace folders (absolute paths): each becomes a --root. */
  readonly roots: readonly string[];
}

const shellQuote = (s: string): string => (/^[\w@%+=:,./-]+$/.test(s) ? s : `'${s.replace(/'/g, `'\\''`)}'`);

export function mcpClientSnippets(setup: McpSetup): McpClientSnippet[] {
  const args = (gate: string): string[] => [
    setup.cli,
    'mcp',
    ...setup.roots.flatMap((root) => ['--root', root]),
    '--gate',
    gate,
  ];
  return [
    {
      client: 'VS Code',
      where: '.vscode/mcp.json (a protected file: you write it, the agent cannot)',
      language: 'json',
      text: JSON.stringify(
        { servers: { 'workspace-tools': { type: 'stdio', command: setup.node, args: args('elicit') } } },
        null,
        2,
      ),
    },
    {
      client: 'Claude Code',
      where: 'a terminal in the project',
      language: 'sh',
      text: ['claude', 'mcp', 'add', 'workspace-tools', '--', setup.node, ...args('approve')].map(shellQuote).join(' '),
    },
    {
      client: 'Codex',
      where: '~/.codex/config.toml',
      language: 'toml',
      text: `[mcp_servers.workspace-tools]\ncommand = ${JSON.stringify(setup.node)}\nargs = [${args('approve')
        .map((a) => JSON.stringify(a))
        .join(', ')}]`,
    },
    {
      // Gemini CLI starts no MCP server in a folder it does not trust.
      client: 'Gemini CLI',
      where: 'a terminal in the project (a folder Gemini CLI trusts)',
      language: 'sh',
      text: ['gemini', 'mcp', 'add', 'workspace-tools', setup.node, '--', ...args('approve')].map(shellQuote).join(' '),
    },
    {
      client: 'Cursor',
      where: '.cursor/mcp.json',
      language: 'json',
      text: JSON.stringify(
        { mcpServers: { 'workspace-tools': { command: setup.node, args: args('approve') } } },
        null,
        2,
      ),
    },
  ];
}

/** The snippets as one Markdown document, for the palette command. */
export function mcpSetupMarkdown(setup: McpSetup): string {
  const out = [
    '# Workspace Tools as an MCP server',
    '',
    "Other agents reach the same tools and the same gate over MCP (stdio). Secrets and protected writes are asked through the client's elicitation form on every call; a client without elicitation is refused them. `--gate elicit` also asks for every call no rule allows; `--gate approve` trusts the client's own confirmation for those.",
    '',
  ];
  for (const snippet of mcpClientSnippets(setup))
    out.push(`## ${snippet.client}`, '', `In ${snippet.where}:`, '', '```' + snippet.language, snippet.text, '```', '');
  return out.join('\n');
}
