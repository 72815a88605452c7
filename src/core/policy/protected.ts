import { BUILD_FAMILIES } from './protected-builds.ts';
import { SERVICE_FAMILIES } from './protected-services.ts';
import { REASONS, type ProtectedFamily } from './protected-reasons.ts';

export { REASONS, type ProtectedFamily } from './protected-reasons.ts';

/**
 * Security: files whose writes change what an agent may do, or run code later. A gate the gated
 * agent can rewrite is no gate, so writing any of them (staging new content, patching, saving,
 * saving another media to that path) asks the person in a modal dialog every time, even after
 * "Always Allow". Reading them stays ordinary.
 *
 * Fail closed, not by names: the first family is a rule over the forms a tool's configuration
 * takes when it runs code, whatever the tool; the families after it record, ecosystem by
 * ecosystem, the config-file names the tools document, each with where the names come from, so a
 * review checks a source instead of adding the name it happened to try. The last matching rule
 * decides, so a family's own glob (and reason) wins over the general forms for the names it lists.
 */
const EXECUTABLE_CONFIG_FORMS: ProtectedFamily = {
  family: 'executable configuration forms',
  source:
    'cosmiconfig\'s default search places for any module name ("package.json", ".<name>rc", ".<name>rc.{json,yaml,yml,js,ts,mjs,cjs}", the same inside ".config/", "<name>.config.{js,ts,mjs,cjs}"), which Prettier, stylelint, lint-staged, commitlint, semantic-release, Babel (lilconfig), PostCSS and many more use; "<name>.conf.js" is Karma\'s, WebdriverIO\'s and Protractor\'s form',
  reason: REASONS.executableConfig,
  globs: ['*.config.{js,cjs,mjs,ts,cts,mts}', '*.conf.{js,cjs,mjs,ts,cts,mts}', '.*rc', '.*rc.*', '**/.config/**'],
};

/** VS Code's own always-confirmed list for chat edits (the default of `chat.tools.edits.autoApprove` in VS Code 1.139). */
const VSCODE: ProtectedFamily = {
  family: 'VS Code',
  source:
    "the default of VS Code's chat.tools.edits.autoApprove (1.139), VS Code's profile files, and Ruby LSP's documented add-on locations",
  reason: REASONS.vscode,
  globs: [
    '**/.vscode/**',
    '*.code-workspace',
    '**/User/settings.json',
    '**/User/keybindings.json',
    '**/User/tasks.json',
    '**/User/mcp.json',
    '**/User/prompts/**',
    '**/ruby_lsp/*/addon',
    '**/ruby_lsp/**/addon.rb',
  ],
};

const AGENTS: ProtectedFamily = {
  family: 'AI agents',
  source:
    "each agent's documented project files: VS Code Copilot (.github/…, *.agent.md, *.prompt.md, *.instructions.md, AGENTS.md), MCP (.mcp.json), Claude Code, Codex, Gemini CLI, Cursor, Roo Code and Cline (Roo Code's own protected list), Windsurf, Continue, Aider, Kiro, Junie, Amazon Q, opencode",
  reason: REASONS.agents,
  globs: [
    '.mcp.json',
    '**/.github/agents/**',
    '**/.github/hooks/**',
    '**/.github/skills/**',
    '**/.github/copilot-instructions.md',
    '**/.github/instructions/**',
    '**/.github/prompts/**',
    '*.agent.md',
    '*.chatmode.md',
    '*.prompt.md',
    '*.instructions.md',
    'AGENTS.md',
    'AGENT.md',
    'CLAUDE.md',
    'CLAUDE.local.md',
    'GEMINI.md',
    '**/.claude/**',
    '**/.codex/**',
    '**/.gemini/**',
    '**/.cursor/**',
    '.cursorrules',
    '**/.roo/**',
    '.roomodes',
    '.rooignore',
    '.roorules*',
    '.clinerules*',
    '.windsurfrules',
    '**/.windsurf/**',
    '**/.continue/**',
    '.aider.conf.y*ml',
    '**/.kiro/**',
    '**/.junie/**',
    '**/.amazonq/**',
    '**/.opencode/**',
    'opencode.json*',
  ],
};

const GIT: ProtectedFamily = {
  family: 'git',
  source: 'gitattributes(5) (filter and diff drivers), gitmodules(5), git-config(1) include, git-lfs-config(5)',
  reason: REASONS.git,
  globs: ['.gitattributes', '.gitmodules', '.gitconfig', '.lfsconfig'],
};

/** Every family, in the order their rules are evaluated (the last match decides). */
export const PROTECTED_FAMILIES: readonly ProtectedFamily[] = [
  EXECUTABLE_CONFIG_FORMS,
  VSCODE,
  AGENTS,
  ...SERVICE_FAMILIES,
  ...BUILD_FAMILIES,
  GIT,
];

export const PROTECTED_GLOBS: readonly string[] = PROTECTED_FAMILIES.flatMap((g) => g.globs);

const FEW_GLOBS = 5;

/**
 * The globs a command may write with `allow_protected_writes`, as a person reads them: a few as
 * they are; more as the protected families by name (a list of ~400 globs is read by nobody), then any other glob (the
 * person's own `write: ask` rules) as it is. Every glob is in the gate status.
 */
export function describeProtectedGlobs(globs: readonly string[]): string {
  // A few globs are read as they are; families are for the long list.
  if (globs.length <= FEW_GLOBS) return globs.join(', ');
  const given = new Set(globs);
  const families = PROTECTED_FAMILIES.filter((f) => f.globs.some((glob) => given.has(glob)));
  const inFamilies = new Set(families.flatMap((f) => f.globs));
  const others = globs.filter((glob) => !inFamilies.has(glob));
  const named = families.map((f) => f.family);
  const parts = [];
  if (named.length > 0)
    parts.push(
      `the protected files of ${named.length === 1 ? `one family (${named[0]})` : `${named.length} families (${named.join('; ')})`}, ${globs.length - others.length} globs in all, each listed by the command Workspace Tools: Show Gate Status`,
    );
  if (others.length > 0) parts.push(`your own rules' ${others.join(', ')}`);
  return parts.join('; and ');
}
