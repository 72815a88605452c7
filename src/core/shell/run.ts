import { lstat, mkdir, mkdtemp, rm, writeFile } from 'node:fs/promises';
import { hostname, tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import { SandboxError, cancelled, invalidInput, refused } from '../errors.ts';
import { placeOf, type GatedPath, type ResolveGated, type WorkspaceRoot } from '../paths.ts';
import type { Clock } from '../ports.ts';
import type { Policy } from '../policy/policy.ts';
import type { SaveGuard } from '../media/save-guard.ts';
import type { Ripgrep } from '../ripgrep/process.ts';
import { fits } from '../paging/budget.ts';
import { isPaged } from '../paging/paged.ts';
import { ResultPager } from '../results/pager.ts';
import { streamResult, type StreamingCall } from '../results/stream.ts';
import { plural } from '../text/format.ts';
import { boundaryLineOf, deriveBoundary } from './boundary.ts';
import { visibleCommand } from './display.ts';
import { QUIET_TOOLS, scrubEnvironment } from './env.ts';
import { LineFeed, renderShellLine, type ShellLine } from './output.ts';
import { DEFAULT_TIMEOUT_MS, type ShellExit, type ShellServices } from './port.ts';
import { ripgrepLister } from './tree.ts';
import { callLayerFolder, makeLayer } from './layer.ts';
import { toolchainFolders } from './reads.ts';
import { applyChanges, type ApplyContext, type LandedSet } from './apply.ts';
import { judgeLayer } from './change-set.ts';
import { renderShell, statusLines, type ShellOutput, type ShellStatus } from './result.ts';
import { gitNamedBy, type GitNamed } from '../git/named.ts';
import { personalIdentity } from './identity.ts';

/** What a command is given: the sandbox, the rules and folders it is derived from, where its output streams. */
interface ShellContext extends StreamingCall, Omit<ApplyContext, 'signal' | 'log'> {
  readonly shell: ShellServices | undefined;
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

const REFUSAL =
  /Permission denied|Read-only file system|Operation not permitted|Connection blocked by network allowlist/;

/** What a call is checked to have before anything is made for it: the shell, a sandbox, a folder to run in, a timeout within bounds. */
async function checkCall(
  input: ShellInput,
  ctx: ShellContext,
  target: GatedPath | undefined,
): Promise<{
  readonly shell: ShellServices;
  readonly ripgrep: Ripgrep;
  readonly folder: GatedPath;
  readonly timeoutMs: number;
  readonly cwd: string;
  readonly cwdShown: string;
}> {
  const shell = ctx.shell;
  if (shell === undefined || ctx.ripgrep === undefined)
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      'run_shell_command is not available in this host.',
      'Use the file tools instead.',
    );
  if (target === undefined)
    throw refused(
      'run_shell_command needs a workspace folder to run in, and none is open.',
      shell.words.noFolder().next ?? 'Ask the user to open a folder.',
    );
  const host = shell.host;
  const maxTimeout = host.maxTimeoutMs();
  const timeoutMs = input.timeout_ms ?? Math.min(DEFAULT_TIMEOUT_MS, maxTimeout);
  if (timeoutMs > maxTimeout)
    throw invalidInput(
      `timeout_ms ${timeoutMs} is above the largest allowed, ${maxTimeout} ms.`,
      `Pass at most ${maxTimeout}${shell.words.shellTimeout === undefined ? '' : `, or ask the user to raise ${shell.words.shellTimeout}`}.`,
    );
  const availability = await host.sandbox.availability();
  // Security: never unsandboxed. Where the boundary cannot be built, nothing runs.
  if (!availability.available)
    throw new SandboxError(
      'E_SANDBOX_UNAVAILABLE',
      `run_shell_command cannot run "${visibleCommand(input.command)}": the OS sandbox is not available (${availability.why}), and commands never run without it; nothing was run.`,
      `Tell the user: ${availability.install}`,
    );
  const resolved = await ctx.resolve(target);
  const rootPath = resolved.realRoot ?? resolved.root.localPath;
  if (rootPath === undefined)
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      `"${target.display}" is not on a local disk, so no command can run there.`,
      'Use the file tools instead.',
    );
  if (!resolved.exists || (resolved.checked !== undefined && resolved.checked.type !== 'directory'))
    throw invalidInput(
      `cwd "${target.display}" is not a folder.`,
      'Pass a folder relative to the workspace, or omit cwd for the first workspace folder.',
    );
  const cwd = nodePath.join(rootPath, resolved.realRel);

  const shown = target.rel === '' ? target.root.name : target.display;
  return { shell, ripgrep: ctx.ripgrep, folder: target, timeoutMs, cwd, cwdShown: shown };
}

/** Runs one command in the sandbox, its output streamed into the pager; resolves once it has ended. */
export async function runInSandbox(
  input: ShellInput,
  ctx: ShellContext,
  target: GatedPath | undefined,
): Promise<ShellOutput> {
  const { shell, ripgrep, folder, timeoutMs, cwd, cwdShown } = await checkCall(input, ctx, target);
  const host = shell.host;
  const writeRoots = ctx.saveGuard.current();
  const writeFolders = (writeRoots ?? ctx.roots.map((root) => ({ root, rel: '' }))).flatMap((p) =>
    p.root.localPath === undefined ? [] : [nodePath.join(p.root.localPath, p.rel)],
  );
  const allowedDomains = host.allowedDomains();
  const allowProtectedWrites = input.allow_protected_writes === true;
  const review = host.review?.() ?? 'protected';
  const tempRoot = host.tempRoot ?? tmpdir();
  const readOnlyBecause = host.noLayer ?? (await shell.layer.unavailable(tempRoot));
  const boundaryLine = boundaryLineOf(
    shell,
    writeRoots ?? ctx.roots.map((root) => ({ root, rel: '', display: root.name })),
    allowProtectedWrites,
    readOnlyBecause === undefined,
  );
  // Security: the call's own folder (its home, temp folder and layers), readable by this user only.
  const callFolder = await mkdtemp(nodePath.join(tempRoot, 'wt-shell-'));
  /** This call's layers on the workspace's filesystem, where the temp folder is not on it. */
  let nearFolder: Promise<string | undefined> | undefined;
  const near = async (): Promise<string | undefined> => {
    const root = await host.layerRoot?.().catch(() => undefined);
    if (root === undefined || !(await shell.layer.usable(root))) return undefined;
    return callLayerFolder(root, { host: hostname(), pid: process.pid }).catch(() => undefined);
  };
  try {
    const home = nodePath.join(callFolder, 'home');
    const temp = nodePath.join(callFolder, 'tmp');
    await mkdir(home, { mode: 0o700 });
    await mkdir(temp, { mode: 0o700 });
    const hostEnv = host.env();
    // The three are independent: a command waits for the slowest, not for their sum.
    const [, layer, boundary] = await Promise.all([
      personalIdentity(hostEnv, host.home).then((identity) =>
        writeFile(nodePath.join(home, '.gitconfig'), identity, { mode: 0o600 }),
      ),
      readOnlyBecause === undefined
        ? makeLayer(callFolder, writeFolders, () => (nearFolder ??= near()))
        : Promise.resolve(undefined),
      // Judged by every name links give a path, as the file tools judge it (a deny rule on a link's name holds).
      deriveBoundary({
        policy: ctx.policy,
        roots: ctx.roots,
        writeFolders,
        home: host.home,
        privateFolders: privateFolders(ctx.artifacts.spoolDir),
        callFolders: [home, temp],
        readFolders: toolchainFolders(host.home, hostEnv['PATH'], host.readFolders?.() ?? []),
        layered: readOnlyBecause === undefined,
        allowedDomains,
        path: hostEnv['PATH'] ?? '/usr/bin:/bin',
        list: ripgrepLister(ripgrep),
        signal: ctx.signal,
        memo: shell.memo,
      }),
    ]);
    if (ctx.signal.aborted) throw cancelled();
    await hidePlaceholdersFromGit(home, host.sandbox.placeholders(), writeFolders, boundary.gitDirs);
    const env = await commandEnv(hostEnv, home, temp);
    const started = ctx.clock.now();
    const startedAt = Date.now();
    const refusedHosts = new Set<string>();
    /** Security: a host no setting allows goes through only on the person's answer, asked once per host and call. */
    const askHost = async (name: string, port: number | undefined, commands: readonly string[]): Promise<boolean> => {
      const shown = port === undefined ? name : `${name}:${port}`;
      if (refusedHosts.has(shown)) return false;
      const answer = await shell.hosts.ask(name, port, commands, host.askHost, ctx.signal);
      if (answer === 'deny') refusedHosts.add(shown);
      return answer !== 'deny';
    };
    const child = await host.sandbox.start({
      command: input.command,
      cwd,
      boundary,
      env,
      signal: ctx.signal,
      askHost,
      ...(layer ? { wrap: layer.wrap } : {}),
    });
    let timedOut = false;
    const timer = setTimeout(() => {
      timedOut = true;
      child.kill();
    }, timeoutMs);
    const onAbort = (): void => child.kill();
    ctx.signal.addEventListener('abort', onAbort, { once: true });
    if (ctx.signal.aborted) child.kill();
    const feed = new LineFeed([
      [child.stdout, 'out'],
      [child.stderr, 'err'],
    ]);
    let exit: ShellExit | undefined;
    /** When the command ended: its time is its own, without judging and applying what it wrote. */
    let endedAt: number | undefined;
    let written = 0;
    let refusedLines = 0;
    let changeSet: LandedSet | undefined;
    let landing: Promise<unknown> | undefined;
    /** The landing failed and the call says so: the cleanup does not log it again. */
    let landingSaid = false;
    /** What the command wrote, judged and applied or staged once it has ended (and everything it started with it); once. */
    const landChanges = (): Promise<unknown> => (landing ??= land());
    const land = async (): Promise<void> => {
      if (layer === undefined) {
        changeSet = { saveId: undefined, outcomes: [] };
        return;
      }
      const failed =
        (what: string, next: string) =>
        (e: unknown): never => {
          throw new SandboxError(
            'E_SANDBOX_IO',
            `The command ended, but ${what} (${(e instanceof Error ? e.message : String(e)).slice(0, 300)}).`,
            next,
            { cause: e },
          );
        };
      const gitNamed = (newTops: readonly string[]): Promise<GitNamed> =>
        gitNamedBy(boundary.gitDirs, host.home, hostEnv, newTops);
      const judged = await judgeLayer(layer, {
        path: hostEnv['PATH'] ?? '/usr/bin:/bin',
        policy: ctx.policy,
        roots: ctx.roots,
        review,
        startedAt,
        allowProtectedWrites,
        placeholders: new Set(host.sandbox.placeholders()),
        gitDirs: boundary.gitDirs,
        gitNamed,
      }).catch(
        failed(
          'what it wrote could not be read and judged, so none of it reached the workspace',
          'Tell the user. Run the command again if its changes are needed.',
        ),
      );
      changeSet = await applyChanges({ ...ctx, signal: new AbortController().signal, log: ctx.log }, judged).catch(
        failed(
          'applying what it wrote failed midway: some of it may be on disk, without an undo record',
          'Tell the user, and look at the workspace (git status) before going on.',
        ),
      );
    };
    const status = (): ShellStatus => ({
      command: input.command,
      cwd: cwdShown,
      exitCode: exit?.code ?? null,
      signal: exit?.signal ?? null,
      timedOut,
      durationMs: (endedAt ?? ctx.clock.now()) - started,
      violations: exit?.violations ?? [],
      refusedHosts: [...refusedHosts],
      refusedLines,
      boundary: boundaryLine,
      hostsSetting: shell.words.allowedDomains,
      hiddenHistories: boundary.hiddenHistories.map((h) => ({
        repository: shownRepository(h.gitDir, ctx.roots),
        secret: h.secret,
      })),
      changes: changeSet?.outcomes ?? [],
      ...(changeSet?.saveId !== undefined ? { saveId: changeSet.saveId } : {}),
      ...(changeSet?.noUndo !== undefined ? { noUndo: changeSet.noUndo } : {}),
      ...(changeSet?.unrecorded !== undefined ? { unrecorded: changeSet.unrecorded } : {}),
      ...(readOnlyBecause !== undefined ? { readOnlyBecause } : {}),
    });
    let final: ShellStatus | undefined;
    const pager = new ResultPager<ShellLine>({
      store: ctx.artifacts,
      budget: ctx.page,
      ...(ctx.progress ? { progress: ctx.progress } : {}),
      source: folder,
      stop: () => child.kill(),
      label: `run_shell_command ${JSON.stringify(visibleCommand(input.command))}`,
      render: (line) => renderShellLine(line),
    });
    try {
      const output = await streamResult<ShellLine, ShellOutput>(
        pager,
        {
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
            endedAt = ctx.clock.now();
            // The command has ended: applying what it wrote is not the command's time.
            clearTimeout(timer);
            landingSaid = true;
            await landChanges();
            landingSaid = false;
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
          brokeOff: (why) =>
            `incomplete: ${why} after ${plural(written, 'line')} of output; the lines above are all that was written`,
          warn: (message) => ctx.log.warn(message),
        },
        { untilEnd: true },
      );
      return isPaged<ShellLine>(output) ? { ...output, status: final! } : output;
    } finally {
      clearTimeout(timer);
      ctx.signal.removeEventListener('abort', onAbort);
      child.kill();
      await child.exited;
      await landChanges().catch((e: unknown) => {
        if (!landingSaid) ctx.log.warn(e instanceof Error ? e.message : String(e));
      });
    }
  } finally {
    const elsewhere = await nearFolder?.catch(() => undefined);
    await Promise.all(
      [callFolder, elsewhere].map((folder) =>
        folder === undefined ? undefined : rm(folder, { recursive: true, force: true }).catch(() => undefined),
      ),
    );
  }
}

/**
 * The command's environment: the host's, scrubbed of credentials, with the call's own HOME and
 * temp folder. The sandbox sets TMPDIR to a folder of its own, which the allow-list of reads hides:
 * bash puts the call's own back from BASH_ENV, which it reads before the command.
 */
async function commandEnv(
  hostEnv: Readonly<Record<string, string | undefined>>,
  home: string,
  temp: string,
): Promise<Record<string, string>> {
  const { env } = scrubEnvironment(hostEnv);
  const bashEnv = nodePath.join(home, '.bash_env');
  await writeFile(bashEnv, `export TMPDIR=${shellQuoted(temp)} TMP=${shellQuoted(temp)} TEMP=${shellQuoted(temp)}\n`, {
    mode: 0o600,
  });
  return Object.assign(env, QUIET_TOOLS, {
    HOME: home,
    TMPDIR: temp,
    TMP: temp,
    TEMP: temp,
    BASH_ENV: bashEnv,
    XDG_CONFIG_HOME: nodePath.join(home, '.config'),
    XDG_CACHE_HOME: nodePath.join(home, '.cache'),
  });
}

/**
 * The sandbox makes a mount point for each name it guards that is missing in its process's working
 * folder (a device, to the command): git would stop on it (`git add -A`: "can only add regular
 * files"). The call's own git ignores those that are not on disk, so git sees the work tree as it is.
 */
async function hidePlaceholdersFromGit(
  home: string,
  placeholders: readonly string[],
  writeFolders: readonly string[],
  gitDirs: readonly string[],
): Promise<void> {
  const patterns: string[] = [];
  for (const path of placeholders) {
    if (
      !writeFolders.some((w) => path.startsWith(`${w}${nodePath.sep}`)) ||
      (await lstat(path).then(
        () => true,
        () => false,
      ))
    )
      continue;
    const top = gitDirs
      .map((g) => nodePath.dirname(g))
      .filter((t) => path.startsWith(`${t}${nodePath.sep}`))
      .sort((a, b) => b.length - a.length)[0];
    if (top !== undefined) patterns.push(`/${nodePath.relative(top, path).split(nodePath.sep).join('/')}`);
  }
  if (patterns.length === 0) return;
  await mkdir(nodePath.join(home, '.config', 'git'), { recursive: true, mode: 0o700 });
  await writeFile(nodePath.join(home, '.config', 'git', 'ignore'), `${patterns.join('\n')}\n`, { mode: 0o600 });
}

/** A repository as the person knows it: its folder under a workspace folder (the deepest), or its path. */
function shownRepository(gitDir: string, roots: readonly WorkspaceRoot[]): string {
  const top = nodePath.dirname(gitDir);
  const place = placeOf(top, roots);
  if (place === undefined) return top;
  return place.rel === '' ? `the repository of ${place.root.name}` : `the repository at ${place.rel}`;
}

/** A word the shell reads as it is. */
const shellQuoted = (value: string): string => `'${value.replace(/'/g, `'\\''`)}'`;

/**
 * Security: our spool holds copies of files the person let the model read once (secrets among
 * them): every window's run folder is unreadable to commands, not only this one's.
 */
function privateFolders(spoolDir: string): string[] {
  const parent = nodePath.dirname(spoolDir);
  return parent === nodePath.parse(parent).root || parent === tmpdir() ? [spoolDir] : [parent];
}
