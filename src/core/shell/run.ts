import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { SandboxError, cancelled, invalidInput, refused } from '../errors.ts';
import type { GatedPath, ResolveGated, WorkspaceRoot } from '../paths.ts';
import type { Clock } from '../ports.ts';
import type { Policy } from '../policy.ts';
import type { MediaStore } from '../media/store.ts';
import type { SaveGuard } from '../media/save-guard.ts';
import type { Ripgrep } from '../search/ripgrep-process.ts';
import { fits } from '../results/budget.ts';
import { isPaged, renderPaged, type Paged } from '../results/paged.ts';
import { ResultPager } from '../results/pager.ts';
import { streamResult, type StreamingCall } from '../results/stream.ts';
import { plural } from '../text/format.ts';
import { deriveBoundary, describeBoundary } from './boundary.ts';
import { visibleCommand } from './display.ts';
import { scrubEnvironment } from './env.ts';
import { LineFeed, renderShellLine, type ShellLine } from './output.ts';
import { DEFAULT_TIMEOUT_MS, type ShellExit, type ShellProcess, type ShellServices } from './port.ts';
import { ripgrepLister } from './tree.ts';
import { markStart, modelPathIn, withdrawCreatedProtected, withdrawnLine, withdrawNow, type WithdrawnFile } from './created.ts';
import { watchRedirects } from './git-dirs.ts';
import { madeUnheld, watchUnheld } from './unheld.ts';
import { REDIRECT_WHY, watchNewRepositories } from './new-repos.ts';

/** How the command ended. */
export interface ShellStatus {
  readonly command: string;
  /** The folder it ran in, as displayed. */
  readonly cwd: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** What the sandbox reported refusing (network hosts; file events where the platform reports them). */
  readonly violations: readonly string[];
  /** Hosts the command tried to reach that were refused (no setting allows them, and the person declined or nobody could be asked). */
  readonly refusedHosts: readonly string[];
  /** Lines on stderr that say a read or write was refused (the sandbox's refusals on Linux show up this way). */
  readonly refusedLines: number;
  readonly boundary: string;
  /** Protected files the command created, taken out of the workspace when it ended. */
  readonly withdrawn: readonly WithdrawnFile[];
  /** The command was ended at once for making this file (as displayed), which would have git run or read what it chose (why). */
  readonly stopped?: { readonly path: string; readonly why: string };
}

/** A command's result: every line when they fit one page, else the first page and the result artifact. */
export type ShellOutput = (ShellStatus & { readonly lines: readonly ShellLine[] }) | (Paged<ShellLine> & { readonly status: ShellStatus });

/** What a command is given: the sandbox, the rules and folders it is derived from, where its output streams. */
interface ShellContext extends StreamingCall {
  readonly shell: ShellServices | undefined;
  readonly media: MediaStore;
  readonly policy: Policy;
  readonly roots: readonly WorkspaceRoot[];
  readonly saveGuard: SaveGuard;
  readonly ripgrep: Ripgrep | undefined;
  readonly clock: Clock;
  readonly resolve: ResolveGated;
}

interface ShellInput {
  readonly command: string;
  readonly timeout_ms?: number | undefined;
  readonly allow_protected_writes?: boolean | undefined;
}

const REFUSAL = /Permission denied|Read-only file system|Operation not permitted|Connection blocked by network allowlist/;

/** Runs one command in the sandbox, its output streamed into the pager; resolves once it has ended. */
export async function runInSandbox(input: ShellInput, ctx: ShellContext, target: GatedPath | undefined): Promise<ShellOutput> {
  const shell = ctx.shell;
  if (shell === undefined || ctx.ripgrep === undefined) throw new SandboxError('E_SANDBOX_UNSUPPORTED', 'run_shell_command is not available in this host.', 'Use the file tools instead.');
  if (target === undefined) throw refused('run_shell_command needs a workspace folder to run in, and none is open.', 'Ask the user to open a folder.');
  const host = shell.host;
  const maxTimeout = host.maxTimeoutMs();
  const timeoutMs = input.timeout_ms ?? Math.min(DEFAULT_TIMEOUT_MS, maxTimeout);
  if (timeoutMs > maxTimeout) throw invalidInput(`timeout_ms ${timeoutMs} is above the largest allowed, ${maxTimeout} ms.`, `Pass at most ${maxTimeout}, or ask the user to raise workspaceTools.shell.maxTimeoutMs.`);
  const availability = await host.sandbox.availability();
  // Security: never unsandboxed. Where the boundary cannot be built, nothing runs.
  if (!availability.available) throw new SandboxError('E_SANDBOX_UNAVAILABLE', `run_shell_command cannot run "${visibleCommand(input.command)}": the OS sandbox is not available (${availability.why}), and commands never run without it; nothing was run.`, `Tell the user: ${availability.install}`);
  const resolved = await ctx.resolve(target);
  const rootPath = resolved.realRoot ?? resolved.root.localPath;
  if (rootPath === undefined) throw new SandboxError('E_SANDBOX_UNSUPPORTED', `"${target.display}" is not on a local disk, so no command can run there.`, 'Use the file tools instead.');
  if (!resolved.exists || (resolved.checked !== undefined && resolved.checked.type !== 'directory')) throw invalidInput(`cwd "${target.display}" is not a folder.`, 'Pass a folder relative to the workspace, or omit cwd for the first workspace folder.');
  const cwd = nodePath.join(rootPath, resolved.realRel);
  const cwdShown = target.rel === '' ? target.root.name : target.display;

  const writeRoots = ctx.saveGuard.current();
  const writeFolders = (writeRoots ?? ctx.roots.map((root) => ({ root, rel: '' }))).flatMap((p) => (p.root.localPath === undefined ? [] : [nodePath.join(p.root.localPath, p.rel)]));
  const allowedDomains = host.allowedDomains();
  const allowProtectedWrites = input.allow_protected_writes === true;
  const boundaryLine = describeBoundary((writeRoots ?? ctx.roots.map((root) => ({ display: root.name }))).map((p) => p.display || '.'), allowedDomains, { allowProtectedWrites, asksHosts: host.askHost !== undefined });
  const temp = await mkdtemp(nodePath.join(host.tempRoot ?? tmpdir(), 'wt-shell-'));
  try {
    // Judged by every name links give a path, as the file tools judge it (a deny rule on a link's name holds).
    const boundary = await deriveBoundary({
      policy: ctx.policy, roots: ctx.roots, writeFolders, home: host.home, privateFolders: privateFolders(ctx.artifacts.spoolDir),
      tempFolder: temp, allowedDomains, list: ripgrepLister(ctx.ripgrep), signal: ctx.signal, allowProtectedWrites, memo: shell.memo,
    });
    if (ctx.signal.aborted) throw cancelled();
    const { env } = scrubEnvironment(host.env());
    env['TMPDIR'] = temp;
    const since = markStart();
    let withdrawn: WithdrawnFile[] | undefined;
    /** Taken out while the command ran (see watchNewRepositories). */
    const takenOut: WithdrawnFile[] = [];
    const withdrawInputs = { policy: ctx.policy, roots: ctx.roots, boundary, allowProtectedWrites, since, media: ctx.media };
    /** What the command made of what git would read or run (see `watchUnheld`), taken out. */
    const withdrawMadeUnheld = async (): Promise<WithdrawnFile[]> => {
      const taken: WithdrawnFile[] = [];
      for (const named of madeUnheld(boundary.unheld)) {
        const file = await withdrawNow(named.path, withdrawInputs);
        if (file !== undefined) taken.push(file);
      }
      return taken;
    };
    const withdraw = async (): Promise<WithdrawnFile[]> => (withdrawn ??= [...takenOut, ...await withdrawMadeUnheld(), ...await withdrawCreatedProtected(withdrawInputs)]);
    const started = ctx.clock.now();
    const refusedHosts = new Set<string>();
    /** Security: a host no setting allows goes through only on the person's answer, asked once per host and call. */
    const askHost = async (name: string, port: number | undefined, commands: readonly string[]): Promise<boolean> => {
      const shown = port === undefined ? name : `${name}:${port}`;
      if (refusedHosts.has(shown)) return false;
      const answer = await shell.hosts.ask(name, port, commands, host.askHost, ctx.signal);
      if (answer === 'deny') refusedHosts.add(shown);
      return answer !== 'deny';
    };
    let stopped: ShellStatus['stopped'];
    let running: ShellProcess | undefined;
    const stop = (path: string, why: string): void => {
      stopped ??= { path: modelPathIn(path, ctx.roots)?.display ?? path, why };
      running?.kill();
    };
    const stopWatchingRedirects = watchRedirects(boundary.gitDirs, (path) => stop(path, REDIRECT_WHY));
    /** Taken out while the command runs, by path: a path found again is looked at once the last look at it is done. */
    const takingOut = new Map<string, Promise<void>>();
    /** Ends the command and takes `path` out now, not when the command ends: it may take its time to end, and VS Code's git would not wait. */
    const takeOutNow = (path: string, why: string): Promise<void> => {
      stop(path, why);
      const next = (takingOut.get(path) ?? Promise.resolve())
        .then(() => withdrawNow(path, withdrawInputs))
        .then((taken) => { if (taken !== undefined) takenOut.push(taken); }, () => undefined);
      takingOut.set(path, next);
      return next;
    };
    const stopWatchingUnheld = watchUnheld(boundary.unheld, host.watchGit, writeFolders, (named) => { void takeOutNow(named.path, named.why); });
    const stopWatchingNew = host.watchGit === undefined ? undefined : watchNewRepositories(host.watchGit, writeFolders, new Set(boundary.gitDirs), since, (change) => takeOutNow(change.path, change.why), boundary.personal, host.home);
    /** What the watches find after this is no longer the command's doing; the walk after it takes the rest. */
    const stopWatching = async (): Promise<void> => {
      stopWatchingRedirects();
      stopWatchingUnheld();
      await stopWatchingNew?.();
      await Promise.all(takingOut.values());
    };
    let child: ShellProcess;
    try {
      child = running = await host.sandbox.start({ command: input.command, cwd, boundary, env, signal: ctx.signal, askHost });
    } catch (e) {
      await stopWatching();
      throw e;
    }
    if (stopped !== undefined) child.kill();
    let timedOut = false;
    const timer = setTimeout(() => { timedOut = true; child.kill(); }, timeoutMs);
    const onAbort = (): void => child.kill();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) child.kill();
    const feed = new LineFeed([[child.stdout, 'out'], [child.stderr, 'err']]);
    let exit: ShellExit | undefined;
    let written = 0;
    let refusedLines = 0;
    const status = (): ShellStatus => ({
      command: input.command, cwd: cwdShown, exitCode: exit?.code ?? null, signal: exit?.signal ?? null, timedOut,
      durationMs: ctx.clock.now() - started, violations: exit?.violations ?? [], refusedHosts: [...refusedHosts], refusedLines, boundary: boundaryLine, withdrawn: withdrawn ?? [],
      ...(stopped !== undefined ? { stopped } : {}),
    });
    let final: ShellStatus | undefined;
    const pager = new ResultPager<ShellLine>({
      store: ctx.artifacts, budget: ctx.page, ...(ctx.progress ? { progress: ctx.progress } : {}), source: target, stop: () => child.kill(),
      label: `run_shell_command ${JSON.stringify(visibleCommand(input.command))}`, render: (line) => renderShellLine(line),
    });
    try {
      const output = await streamResult<ShellLine, ShellOutput>(pager, {
        pull: async () => {
          for await (const batch of feed.batches()) {
            for (const line of batch) {
              written++;
              if (line.stream === 'err' && REFUSAL.test(line.text)) refusedLines++;
              const writing = pager.add(line);
              if (writing) await writing;
            }
          }
          exit = await child.exited;
          await stopWatching();
          await withdraw();
          final = status();
          if (ctx.signal.aborted && !timedOut) throw cancelled();
          return true;
        },
        small: async () => {
          const result: ShellOutput = { ...final!, lines: pager.items };
          if (await fits(renderShell(result), ctx.page)) return result;
          await pager.overflow();
          return undefined;
        },
        summary: () => `${plural(written, 'line')} of output`,
        trailer: () => [...statusLines(final!), `done complete (${plural(written, 'line')} of output)`],
        brokeOff: (why) => `incomplete: ${why} after ${plural(written, 'line')} of output; the lines above are all that was written`,
        warn: (message) => ctx.log.warn(message),
      }, { untilEnd: true });
      return isPaged<ShellLine>(output) ? { ...output, status: final! } : output;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      child.kill();
      await child.exited;
      await stopWatching();
      await withdraw();
    }
  } finally {
    await rm(temp, { recursive: true, force: true }).catch(() => undefined);
  }
}

/**
 * Security: our spool holds copies of files the person let the model read once (secrets among
 * them): every window's run folder is unreadable to commands, not only this one's.
 */
function privateFolders(spoolDir: string): string[] {
  const parent = nodePath.dirname(spoolDir);
  return parent === nodePath.parse(parent).root || parent === tmpdir() ? [spoolDir] : [parent];
}

/** The lines that say how the command ended and what the sandbox refused. */
export function statusLines(s: ShellStatus): string[] {
  const how = s.timedOut
    ? `timed out: killed after ${s.durationMs} ms (with everything it started)`
    : s.signal !== null ? `ended by signal ${s.signal} after ${s.durationMs} ms` : `exit code ${s.exitCode ?? 'unknown'} after ${s.durationMs} ms`;
  const lines = [`$ ${visibleCommand(s.command)}  (in ${s.cwd}; ${how})`];
  if (s.stopped !== undefined) lines.push(`stopped: the command made ${s.stopped.path}, ${s.stopped.why}; it was ended at once and the file taken out. Do not create it another way; ask the user if a repository needs it.`);
  for (const v of s.violations) lines.push(`sandbox refused: ${v}`);
  if (s.refusedHosts.length > 0) lines.push(`network refused: ${s.refusedHosts.join(', ')} (not in workspaceTools.shell.allowedDomains, and the user did not allow it, or could not be asked). Do not retry through another host or tool; ask the user to allow the host if the command needs it.`);
  const created = withdrawnLine(s.withdrawn);
  if (created !== undefined) lines.push(created);
  if (s.refusedLines > 0) lines.push(`Note: ${plural(s.refusedLines, 'stderr line')} report a refused read, write or connection. The sandbox (${s.boundary}) refuses these on purpose: do not retry them another way; work inside the boundary or ask the user.`);
  return lines;
}

/** The model's text: the output lines (or their first page), then how the command ended. */
export function renderShell(output: ShellOutput): string {
  if (isPaged<ShellLine>(output)) return [renderPaged(output, (line) => renderShellLine(line)), ...statusLines(output.status)].join('\n');
  const body = output.lines.map(renderShellLine);
  return [...(body.length === 0 ? ['(no output)'] : body), ...statusLines(output)].join('\n');
}
