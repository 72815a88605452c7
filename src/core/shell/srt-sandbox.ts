import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { existsSync } from 'node:fs';
import * as nodePath from 'node:path';
import type { ShellBoundary } from './boundary.ts';
import { descendants, pipeHolders, pipeOf, processesWithEnvironment } from './process-tree.ts';
import type { SandboxAvailability, ShellExit, ShellProcess, ShellSandbox, ShellStart } from './port.ts';
import { visibleCommand } from './display.ts';

type Srt = typeof import('@anthropic-ai/sandbox-runtime');
type SrtConfig = Parameters<Srt['SandboxManager']['initialize']>[0];

/** How long a command has to end after SIGTERM before its process group gets SIGKILL. */
const KILL_GRACE_MS = 2_000;

/** What a person installs where the sandbox is missing, by platform. */
function installAdvice(platform: NodeJS.Platform): string {
  switch (platform) {
    case 'linux':
      return 'On Debian or Ubuntu install bubblewrap and socat (sudo apt-get install bubblewrap socat; Fedora: sudo dnf install bubblewrap socat), make sure unprivileged user namespaces are enabled, then run the command again.';
    case 'darwin':
      return 'On macOS the sandbox is sandbox-exec, which ships with the system; make sure ripgrep is available (VS Code ships one).';
    default:
      return `Running shell commands needs an OS sandbox, which this extension has for Linux (bubblewrap) and macOS (sandbox-exec) only; on ${platform} use a Linux machine, WSL 2 or a dev container.`;
  }
}

export interface SrtSandboxOptions {
  /** The ripgrep binary (the library scans with it). */
  readonly ripgrepPath: string | undefined;
  /** Loads the library (tests pass one that fails, to simulate a machine without it). */
  readonly load?: () => Promise<Srt>;
}

/** A path given to the library as itself, never read as a glob (file names may hold "*" or "["). */
const literal = (paths: readonly string[]): { path: string; literal: true }[] =>
  paths.map((path) => ({ path, literal: true }));

/**
 * The OS sandbox of `@anthropic-ai/sandbox-runtime`: bubblewrap (and socat for its network proxy)
 * on Linux, sandbox-exec on macOS. The library's manager is one per process: it is initialized
 * once with nothing allowed, and each command brings its own lists.
 */
export function srtSandbox(options: SrtSandboxOptions): ShellSandbox {
  const load = options.load ?? (() => import('@anthropic-ai/sandbox-runtime'));
  /** The commands running now, latest last. */
  const running = new Set<ShellStart>();
  /**
   * The library asks one callback per process about a host, without saying which command wants
   * it: the latest running command that can ask does, and the person is shown every running
   * command. Nothing running (or nobody to ask): refused.
   */
  const askHost = async ({
    host,
    port,
  }: {
    host: string;
    port: number | undefined;
  }): Promise<boolean | { allow: false; reason: string }> => {
    const starts = [...running];
    const asker = starts.reverse().find((s) => s.askHost !== undefined);
    const allowed =
      asker?.askHost === undefined
        ? false
        : await asker.askHost(
            host,
            port,
            [...running].map((s) => visibleCommand(s.command)),
          );
    if (allowed) return true;
    // Said in the words of what happened, not the library's "user denied" (nobody may have been asked).
    // Security: a library that does not read reasons takes any object for an allow.
    if (!reasonsRead) return false;
    return {
      allow: false,
      reason:
        asker === undefined
          ? 'nobody could be asked, and no setting allows this host'
          : 'not allowed: refused when asked, or nobody could answer',
    };
  };
  /** The loaded library reads a refusal's reason (`askCallbackDenyReason`); until then only booleans are answered. */
  let reasonsRead = false;
  let ready: Promise<{ srt: Srt; availability: SandboxAvailability; ownFolders: readonly string[] }> | undefined;
  const prepare = (): Promise<{ srt: Srt; availability: SandboxAvailability; ownFolders: readonly string[] }> =>
    (ready ??= (async () => {
      const ownFolders: string[] = [];
      const platform = process.platform;
      let srt: Srt;
      try {
        srt = await load();
      } catch (e) {
        return {
          srt: undefined as unknown as Srt,
          ownFolders,
          availability: {
            available: false,
            why: `the sandbox library could not be loaded (${e instanceof Error ? e.message : String(e)})`,
            install: installAdvice(platform),
          },
        };
      }
      const manager = srt.SandboxManager;
      reasonsRead = (manager as { readonly askCallbackDenyReason?: unknown }).askCallbackDenyReason === true;
      if ((platform !== 'linux' && platform !== 'darwin') || !manager.isSupportedPlatform()) {
        return {
          srt,
          ownFolders,
          availability: {
            available: false,
            why: `${platform} has no OS sandbox this extension can use`,
            install: installAdvice(platform),
          },
        };
      }
      if (options.ripgrepPath === undefined)
        return {
          srt,
          ownFolders,
          availability: { available: false, why: 'ripgrep was not found', install: installAdvice(platform) },
        };
      const deps = manager.checkDependencies({ command: options.ripgrepPath });
      if (deps.errors.length > 0)
        return {
          srt,
          ownFolders,
          availability: { available: false, why: deps.errors.join('; '), install: installAdvice(platform) },
        };
      const config: SrtConfig = {
        network: { allowedDomains: [], deniedDomains: [] },
        filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
        ripgrep: { command: options.ripgrepPath },
        // Before each command the library looks for names it guards (.bashrc, .git/hooks, ...) below
        // this process's working folder, which in an extension host is wherever VS Code started (/,
        // a home folder): at its default depth, 0.2-0.5 s a command from /. Below the workspace
        // folders the boundary guards the protected names and every repository's config and hooks at
        // any depth, so that walk is kept as shallow as the library allows.
        mandatoryDenySearchDepth: 1,
      };
      try {
        await manager.initialize(config, askHost);
        const probe = await manager.wrapWithSandboxArgv('true', '/bin/sh', {
          network: { allowedDomains: [], deniedDomains: [] },
          filesystem: { denyRead: [], allowWrite: [], denyWrite: [] },
        });
        manager.cleanupAfterCommand();
        ownFolders.push(...ownPathsOf(probe.argv));
      } catch (e) {
        return {
          srt,
          ownFolders,
          availability: {
            available: false,
            why: `the sandbox could not start (${e instanceof Error ? e.message : String(e)})`,
            install: installAdvice(platform),
          },
        };
      }
      return {
        srt,
        ownFolders,
        availability: { available: true, mechanism: platform === 'linux' ? 'bubblewrap' : 'sandbox-exec' },
      };
    })());

  return {
    availability: async () => (await prepare()).availability,
    ownFolders: async () => (await prepare()).ownFolders,
    placeholders: () => {
      let cwd: string;
      try {
        cwd = process.cwd();
      } catch {
        return [];
      }
      return GUARDED_NAMES.map((name) => nodePath.join(cwd, name));
    },
    start: async (spec) => {
      const { srt, availability, ownFolders } = await prepare();
      // Security: never run a command without the boundary.
      if (!availability.available) throw new Error(`the OS sandbox is not available: ${availability.why}`);
      running.add(spec);
      try {
        const child = await startInSandbox(srt, spec, ownFolders);
        void child.exited.finally(() => running.delete(spec));
        return child;
      } catch (e) {
        running.delete(spec);
        throw e;
      }
    },
    dispose: async () => {
      const started = ready;
      ready = undefined;
      const state = started ? await started : undefined;
      if (state?.availability.available) await state.srt.SandboxManager.reset();
    },
  };
}

function customConfig(boundary: ShellBoundary, ownFolders: readonly string[]): SrtConfig {
  return {
    network: { allowedDomains: [], deniedDomains: [] },
    filesystem: {
      denyRead: literal(boundary.denyRead),
      allowRead: literal([...boundary.allowRead, ...ownFolders]),
      allowWrite: literal(boundary.allowWrite),
      denyWrite: [],
    },
  };
}

/** The names the library guards in its process's working folder (it makes a mount point for each one missing where writes are allowed). */
const GUARDED_NAMES = [
  '.gitconfig',
  '.gitmodules',
  '.bashrc',
  '.bash_profile',
  '.zshrc',
  '.zprofile',
  '.profile',
  '.ripgreprc',
  '.mcp.json',
  '.vscode',
  '.idea',
  '.claude/commands',
  '.claude/agents',
  '.git/hooks',
  '.git/config',
];

/**
 * What the library's own wrapping needs to see inside the sandbox, as a command it wraps names it:
 * its seccomp helper's folder and its network proxy's sockets (in the host's temp folder, which the
 * allow-list of reads hides).
 */
function ownPathsOf(argv: readonly string[]): string[] {
  const line = argv.join(' ');
  const seccomp = /(\/[^\s'"]*\/vendor\/seccomp)\/[^\s'"/]+\/apply-seccomp/.exec(line)?.[1];
  const sockets = line.match(/\/[^\s'"]*claude-[a-z]+-[0-9a-f]+\.sock/g) ?? [];
  return [...new Set([...(seccomp === undefined ? [] : [seccomp]), ...sockets])];
}

async function startInSandbox(srt: Srt, spec: ShellStart, ownFolders: readonly string[]): Promise<ShellProcess> {
  const manager = srt.SandboxManager;
  // The id binds the command's network requests to its own allow list: unguessable, per call.
  const commandId = randomBytes(16).toString('base64url');
  const shell = existsSync('/bin/bash') ? '/bin/bash' : '/bin/sh';
  if (spec.boundary.allowedDomains.length > 0)
    manager.registerCommandNetworkLists(commandId, { allowedDomains: [...spec.boundary.allowedDomains] });
  let wrapped: { argv: string[]; env: NodeJS.ProcessEnv };
  try {
    // Not given the call's signal: a wrap aborted half-way can leave its promise pending. The
    // caller checks the signal once the command started, and kills it.
    wrapped = await manager.wrapWithSandboxArgv(
      spec.command,
      shell,
      customConfig(spec.boundary, ownFolders),
      undefined,
      spec.cwd,
      { commandId, commandText: spec.command },
    );
  } catch (e) {
    manager.unregisterCommandNetworkLists(commandId);
    throw e;
  }
  const [file, ...args] = spec.wrap ? spec.wrap(wrapped.argv) : wrapped.argv;
  // Security: on Linux and macOS `wrapped.env` is this process's own environment (credentials
  // included); the sandbox's proxy settings are inside the wrapped command, so only ours is passed.
  const env: Record<string, string> = { ...spec.env };
  // Marks every process of this command (the sandbox's init among them), so that all can be found and ended.
  const mark = `WT_SHELL_CALL=${randomBytes(12).toString('hex')}`;
  env['WT_SHELL_CALL'] = mark.slice('WT_SHELL_CALL='.length);
  // Its own process group, so that one signal reaches the shell, bubblewrap and everything they started.
  const child = spawn(file!, args, { cwd: spec.cwd, env, detached: true, stdio: ['ignore', 'pipe', 'pipe'] });
  // The command's output pipes, as the kernel names them: whatever holds one is part of the command.
  const pipes =
    child.pid === undefined ? [] : [pipeOf(child.pid, 1), pipeOf(child.pid, 2)].filter((p) => p !== undefined);
  let ended = false;
  let grace: NodeJS.Timeout | undefined;
  const send = (pid: number, signal: NodeJS.Signals): void => {
    try {
      process.kill(pid, signal);
    } catch {
      /* it is gone already */
    }
  };
  /** The process group, and every process below it (the sandbox's own session among them). */
  const signalAll = (signal: NodeJS.Signals, known: readonly number[]): readonly number[] => {
    if (child.pid === undefined) return [];
    const tree = [
      ...new Set([
        ...known,
        ...(ended ? [] : descendants(child.pid)),
        ...pipeHolders(pipes),
        ...processesWithEnvironment(mark),
      ]),
    ];
    if (!ended) send(-child.pid, signal);
    for (const pid of tree) send(pid, signal);
    return tree;
  };
  const kill = (): void => {
    if (ended || grace !== undefined) return;
    const tree = signalAll('SIGTERM', []);
    grace = setTimeout(() => {
      signalAll('SIGKILL', tree);
    }, KILL_GRACE_MS);
  };
  const exited = new Promise<ShellExit>((resolve) => {
    const finish = (code: number | null, signal: string | null): void => {
      if (ended) return;
      ended = true;
      if (grace !== undefined) clearTimeout(grace);
      // Security: nothing the command started outlives the call, whatever detached itself.
      signalAll('SIGKILL', []);
      manager.unregisterCommandNetworkLists(commandId);
      const violations = manager
        .getSandboxViolationStore()
        .getViolationsForCommand(commandId)
        .map((v) => v.line);
      manager.cleanupAfterCommand();
      resolve({ code, signal, violations });
    };
    child.once('error', () => {
      if (child.pid === undefined) finish(127, null);
    });
    // Security: once the command's shell has exited, anything still holding its output (a process
    // that escaped the sandbox's teardown) is ended, so the call returns and nothing outlives it.
    child.once('exit', () => {
      if (ended || grace !== undefined) return;
      grace = setTimeout(() => {
        signalAll('SIGKILL', []);
      }, KILL_GRACE_MS);
    });
    child.once('close', (code, signal) => finish(code, signal));
  });
  return { stdout: child.stdout, stderr: child.stderr, exited, kill };
}
