/**
 * Security: files whose writes change what an agent may do, or run code later. A gate the gated
 * agent can rewrite is no gate, so writing any of them (staging new content, patching, saving,
 * saving another media to that path) asks the person in a modal dialog every time, even after
 * "Always Allow". Reading them stays ordinary.
 *
 * Started from VS Code's own always-confirmed list for chat edits (the default of
 * `chat.tools.edits.autoApprove` in VS Code 1.139) and Roo Code's protected list.
 */
export interface ProtectedGroup {
  /** Shown to the person in the dialog and in the gate status: why a write here is dangerous. */
  readonly reason: string;
  readonly globs: readonly string[];
}

export const PROTECTED_GROUPS: readonly ProtectedGroup[] = [
  {
    reason: 'it configures VS Code and its extensions, including this extension\'s own rules, tasks and launch configurations that run code',
    globs: ['**/.vscode/**', '*.code-workspace', '**/User/settings.json', '**/User/keybindings.json', '**/User/tasks.json', '**/User/mcp.json', '**/User/prompts/**', '**/ruby_lsp/*/addon', '**/ruby_lsp/**/addon.rb'],
  },
  {
    reason: 'an editor extension or language server runs it when a file is opened, saved, linted or tested, with no command from you',
    globs: [
      'eslint.config.*', '.eslintrc.js', '.eslintrc.cjs', 'prettier.config.*', '.prettierrc.js', '.prettierrc.cjs', '.prettierrc.mjs',
      'jest.config.*', 'vitest.config.*', 'vite.config.*', 'conftest.py', '**/.cargo/config.toml', '**/.cargo/config',
      'CMakeLists.txt', '*.cmake', 'Makefile', 'GNUmakefile', '*.mk', 'go.mod', 'go.work',
    ],
  },
  {
    reason: 'it tells an AI agent what it may do or how to behave: a change can give an agent new permissions, tools or instructions',
    globs: [
      '.mcp.json', '**/.github/agents/**', '**/.github/hooks/**', '**/.github/skills/**', '**/.github/copilot-instructions.md', '**/.github/instructions/**', '**/.github/prompts/**',
      '*.agent.md', '*.chatmode.md', '*.prompt.md', '*.instructions.md', 'AGENTS.md', 'AGENT.md', 'CLAUDE.md', 'GEMINI.md',
      '**/.claude/**', '**/.codex/**', '**/.gemini/**', '**/.cursor/**', '.cursorrules', '**/.roo/**', '.roomodes', '.rooignore', '.roorules*', '.clinerules*',
    ],
  },
  {
    reason: 'it runs code later: in CI, in a git hook, in a dev container, or when a shell starts',
    globs: [
      '**/.github/workflows/**', '**/.github/actions/**', '.gitlab-ci.yml', '**/.circleci/**', 'azure-pipelines*.yml', 'Jenkinsfile', 'Dockerfile', '*.dockerfile',
      '.mise.toml', 'mise.toml', '**/.devcontainer/**', '.devcontainer.json', '**/.husky/**', '.pre-commit-config.yaml',
      '.envrc', '.bashrc', '.bash_profile', '.bash_login', '.bash_logout', '.profile', '.zshrc', '.zshenv', '.zprofile', '.zlogin',
    ],
  },
  {
    reason: 'it decides which code is installed, built and run on the next install or build',
    globs: [
      'package.json', '*.lock', '*-lock.json', '*-lock.yaml', '.npmrc', '.yarnrc', '.yarnrc.yml', '.pnpmfile.*', 'pnpm-workspace.yaml',
      'Cargo.toml', 'build.rs', '*.csproj', '*.fsproj', '*.vbproj', '*.vcxproj', '*.proj', '*.targets', '*.props',
      '*.gradle', '*.gradle.kts', 'gradle.properties', '**/gradle/wrapper/**', 'gradlew', 'gradlew.bat', 'pom.xml', '**/.mvn/**', 'mvnw', 'mvnw.cmd', 'server.xml', 'web.config',
      'pyproject.toml', 'setup.py', 'requirements*.txt',
    ],
  },
  {
    reason: 'git reads it to run filters and fetch other repositories, or git LFS to choose where a push sends large files',
    globs: ['.gitattributes', '.gitmodules', '.gitconfig', '.lfsconfig'],
  },
];

export const PROTECTED_GLOBS: readonly string[] = PROTECTED_GROUPS.flatMap((g) => g.globs);
