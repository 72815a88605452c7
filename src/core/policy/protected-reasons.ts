/**
 * One family of protected names: the config files of one kind of tool, where their names come
 * from, and why a write there is asked (see `protected.ts`).
 */
export interface ProtectedFamily {
  /** What the family holds, for the person (gate status) and the tests. */
  readonly family: string;
  /** Where the names come from: the tools' own documented config-file names. */
  readonly source: string;
  /** Shown to the person in the dialog and in the gate status: why a write here is dangerous (the end of a sentence). */
  readonly reason: string;
  readonly globs: readonly string[];
}

/** The reasons the families share, so the person reads one wording per kind of danger. */
export const REASONS = {
  executableConfig:
    'it configures a tool in a form that runs code (a JavaScript or TypeScript module, or a file naming the plugins and commands it loads), and the tool, an editor extension or a git hook loads it with no command from you',
  vscode:
    "it configures VS Code and its extensions, including this extension's own rules, tasks and launch configurations that run code",
  editorRuns:
    'an editor extension or language server runs it when a file is opened, saved, linted or tested, with no command from you',
  agents:
    'it tells an AI agent what it may do or how to behave: a change can give an agent new permissions, tools or instructions',
  runsLater: 'it runs code later: in CI, in a git hook, in a dev container, or when a shell starts',
  tasks: 'it defines the commands a build or task runner runs when you, an editor or CI start it',
  toolchain:
    'it chooses the toolchain or interpreter that runs, which a version manager or the editor downloads and starts',
  installs: 'it decides which code is installed, built and run on the next install or build',
  git: 'git reads it to run filters and fetch other repositories, or git LFS to choose where a push sends large files',
} as const;
