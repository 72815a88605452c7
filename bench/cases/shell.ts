/**
 * run_shell_command's sandbox overhead: the same command through the core session (bubblewrap,
 * the boundary derived from the policy, output streamed into the result) and run plainly with
 * `bash -c`. Reported per command as a ratio and as milliseconds added (the paired difference of
 * each run, ours minus plain); goal: at most 150 ms added.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { coreHost, ripgrep, run } from '../lib/hosts.ts';
import { result, skipped } from '../lib/report.ts';
import { compare } from '../lib/stats.ts';
import { benchDir, type SourceTree } from '../lib/workloads.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import { DEFAULT_MAX_TIMEOUT_MS } from '../../src/core/shell/port.ts';

const ADDED_GOAL_MS = 150;
/** A command's change set applied, against `cp -a` of the same files: at most this many times as long. */
const APPLY_GOAL_RATIO = 1.5;

/** A committed copy of the source tree (it is not a repository), so `git status` walks 20k clean files; its `.env` ignored. */
function gitTree(source: SourceTree, log: (m: string) => void): string {
  const dir = nodePath.join(benchDir(), 'shell-git-source-20k-v2');
  const done = nodePath.join(benchDir(), 'shell-git-source-20k-v2.done');
  if (existsSync(done)) return dir;
  log(`copying the ${source.files}-file source tree to ${dir} and committing it`);
  execFileSync('rm', ['-rf', dir]);
  cpSync(source.dir, dir, { recursive: true });
  const git = (...args: string[]): void => {
    execFileSync('git', ['-C', dir, '-c', 'user.name=bench', '-c', 'user.email=bench@example.invalid', ...args], {
      stdio: 'ignore',
    });
  };
  git('init', '-q');
  // The tree's decoy secret stays out of the history, as a person's .env does: a repository whose
  // history holds a secret's name has its object store unreadable to commands.
  writeFileSync(nodePath.join(dir, '.gitignore'), '.env\n');
  git('add', '-A');
  git('commit', '-q', '-m', 'source tree');
  writeFileSync(done, '');
  return dir;
}

export async function shellCases(ctx: BenchContext, source: SourceTree): Promise<void> {
  const sandbox = srtSandbox({ ripgrepPath: ripgrep() });
  try {
    const availability = await sandbox.availability();
    if (!availability.available) {
      ctx.add(
        skipped(
          'shell.true',
          'run_shell_command overhead',
          { kind: 'max', value: ADDED_GOAL_MS },
          `sandbox unavailable: ${availability.why} (${availability.install})`,
        ),
      );
      return;
    }
    const dir = gitTree(source, ctx.log);
    const host = await coreHost(dir, {
      shell: {
        sandbox,
        home: homedir(),
        env: () => process.env,
        allowedDomains: () => [],
        maxTimeoutMs: () => DEFAULT_MAX_TIMEOUT_MS,
      },
    });
    try {
      for (const [id, command] of [
        ['true', 'true'],
        ['git-status', 'git status --short'],
      ] as const) {
        ctx.log(`run_shell_command ${JSON.stringify(command)} vs bash -c ${JSON.stringify(command)} in ${dir}`);
        const [ours, peer] = await compare(
          {
            label: `run_shell_command ${JSON.stringify(command)} (core, sandboxed)`,
            run: () => host.invoke('run_shell_command', { command }),
            check: (out) => {
              if (!/exit code 0/.test(out.text))
                throw new Error(`run_shell_command ${command}: ${out.text.slice(0, 500)}`);
            },
          },
          {
            label: `bash -c ${JSON.stringify(command)}`,
            run: () => run('bash', ['-c', command], { cwd: dir }),
            check: (out) => {
              if (out.code !== 0) throw new Error(`bash -c ${command} exited ${out.code}: ${out.stderr}`);
            },
          },
          ctx.runs(9),
        );
        const what = id === 'true' ? '`true`' : `\`git status\` on ${source.files.toLocaleString('en-US')} files`;
        ctx.add(
          result({
            id: `shell.${id}.ratio`,
            title: `run_shell_command ${what}: sandboxed vs plain`,
            goal: { kind: 'none' },
            ours,
            peer,
          }),
        );
        const added = ours.values.map((v, i) => v - peer.values[i]!);
        ctx.add(
          result({
            id: `shell.${id}.added`,
            title: `run_shell_command ${what}: ms the sandbox adds per command`,
            goal: { kind: 'max', value: ADDED_GOAL_MS },
            ours: { label: 'sandboxed minus plain (paired runs)', values: added },
          }),
        );
      }
      await applyCost(ctx, dir, host);
    } finally {
      await host.dispose();
    }
  } finally {
    await sandbox.dispose();
  }
}

/**
 * What applying a command's writes costs: `cp -a` of a folder of the source tree inside the sandbox
 * (into the copy-on-write layer, then applied to disk as a change set with its undo record) against
 * the same `cp -a` run plainly. Each run writes a new folder; they are removed afterwards.
 */
async function applyCost(ctx: BenchContext, dir: string, host: Awaited<ReturnType<typeof coreHost>>): Promise<void> {
  const from = ['src', 'lib', 'packages'].find((name) => existsSync(nodePath.join(dir, name))) ?? '.';
  let n = 0;
  const made: string[] = [];
  const target = (who: string): string => {
    const name = `bench-out-${who}-${++n}`;
    made.push(nodePath.join(dir, name));
    return name;
  };
  try {
    ctx.log(`run_shell_command "cp -a ${from} OUT" vs cp -a ${from} OUT in ${dir}`);
    const [ours, peer] = await compare(
      {
        label: `run_shell_command "cp -a ${from} …" (written to the layer, applied with its undo record)`,
        run: () => host.invoke('run_shell_command', { command: `cp -a ${from} ${target('ours')}` }),
        check: (out) => {
          if (!/exit code 0[\s\S]*changes applied/.test(out.text))
            throw new Error(`run_shell_command cp: ${out.text.slice(0, 500)}`);
        },
      },
      {
        label: `cp -a ${from} … (plain)`,
        run: () => run('cp', ['-a', from, target('plain')], { cwd: dir }),
        check: (out) => {
          if (out.code !== 0) throw new Error(`cp -a exited ${out.code}: ${out.stderr}`);
        },
      },
      ctx.runs(5),
    );
    ctx.add(
      result({
        id: 'shell.apply.ratio',
        title: `a command's writes applied (cp -a of ${from}/) vs cp -a`,
        goal: { kind: 'ratio', max: APPLY_GOAL_RATIO },
        ours,
        peer,
      }),
    );
  } finally {
    for (const folder of made) execFileSync('rm', ['-rf', folder]);
  }
}
