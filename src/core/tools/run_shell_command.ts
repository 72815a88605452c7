import * as z from 'zod';
import { defineTool } from '../contract/tool.ts';
import { runInSandbox } from '../shell/run.ts';
import { renderShell, type ShellOutput } from '../shell/result.ts';
import { visibleCommand } from '../shell/display.ts';
import { DEFAULT_MAX_TIMEOUT_MS, DEFAULT_TIMEOUT_MS } from '../shell/port.ts';

export const runShellCommandSchema = () =>
  z.strictObject({
    command: z
      .string()
      .min(1)
      .max(100_000)
      .describe(
        'The command line, run by bash -c (sh -c where bash is missing) inside the OS sandbox: "npm test", "git status", "git diff HEAD~1 -- src".',
      ),
    cwd: z
      .string()
      .min(1)
      .optional()
      .describe('The folder to run it in, relative to the workspace (default: the first workspace folder).'),
    allow_protected_writes: z
      .boolean()
      .optional()
      .describe(
        'Let the command\'s changes to protected files (package.json, lockfiles, build and CI configuration, agent instructions; never secrets, .vscode or anything in a repository\'s .git folder beyond what everyday git writes) be applied when it ends instead of staged for review, e.g. for "npm install" updating package-lock.json. The user is asked in a dialog every time, naming the protected globs; pass it only when the command must write one.',
      ),
    timeout_ms: z
      .number()
      .int()
      .min(1)
      .optional()
      .describe(
        `Kill the command and everything it started after this many milliseconds (default ${DEFAULT_TIMEOUT_MS.toLocaleString('en-US')}, at most ${DEFAULT_MAX_TIMEOUT_MS.toLocaleString('en-US')} unless the user's settings allow more).`,
      ),
  });

export const runShellCommand = defineTool({
  name: 'run_shell_command',
  displayName: 'Run Shell Command',
  userDescription: 'Run a command (tests, builds, git) inside an OS sandbox built from the workspace rules.',
  description:
    'Runs a shell command (bash -c) in a workspace folder inside an OS sandbox derived from the same rules as the file tools. It reads only the workspace, the system folders and toolchains: secrets and read-protected files are unreadable ("Permission denied"), and so is everything else outside (home folders, other temp folders). It gets a private HOME and $TMPDIR, git with the user\'s name and email, no credential variables, and the network only to hosts the user allowed (a request to another host asks the user where the host can ask; refused hosts are listed). Its writes go through a copy-on-write layer: nothing it writes is on disk while it runs. When it ends, what it changed is a change set judged like a save: ordinary files are applied at once and the result gives a save_id that undo_save uses to take the whole command back; protected files (package.json, lockfiles, CI and agent configuration, .vscode), new links, a repository\'s git configuration and hooks, and files a git configuration runs are staged for review as media (listed in the result: save them with save_media, the user is asked) unless you passed allow_protected_writes; a file the user changed while the command ran is staged too. Use it for tests, builds, linters and git. Do not try to read secrets another way: the kernel refuses it, and retrying wastes the turn. The result is stdout and stderr as they arrived (stderr lines start with "[stderr] "; colour codes stripped; a node --test run (TAP or spec) is condensed: passing tests counted, each failure kept with its location, error and stack frames in the project, the summary on one line), then the exit code or signal, the duration, whether it timed out, what the sandbox refused, and what became of the command\'s changes. Output larger than one page (50 KiB, or your token budget) is not dropped: you get its first page and the callId of a result artifact with all of it; page it with artifact_read and search it with artifact_grep. There is no stdin and no terminal: pass flags that make tools non-interactive.',
  risk: 'exec',
  requires: ['writable', 'shell'],
  needs: [
    'shell',
    'artifacts',
    'media',
    'policy',
    'roots',
    'saveGuard',
    'ripgrep',
    'clock',
    'log',
    'fs',
    'saves',
    'editors',
    'journal',
  ],
  icon: 'terminal',
  schema: runShellCommandSchema,
  targets: (input, scope) => {
    const cwd = input.cwd === undefined ? scope.folderScope(undefined)[0] : scope.normalize(input.cwd);
    const paths = cwd === undefined ? [] : [cwd];
    const where = cwd === undefined ? 'the workspace' : cwd.rel === '' ? cwd.root.name : cwd.display;
    const lifts = input.allow_protected_writes === true;
    return {
      paths,
      summary: `run \`${visibleCommand(input.command)}\` in ${where} (${scope.shellBoundaryLine(lifts)})`,
      ...(lifts ? { protectedWrites: true } : {}),
    };
  },
  run: (input, ctx): Promise<ShellOutput> => runInSandbox(input, ctx, ctx.targets[0]),
  render: renderShell,
});
