/**
 * run_shell_command's sandbox overhead: the same command through the core session (bubblewrap,
 * the boundary derived from the policy, output streamed into the result) and run plainly with
 * `bash -c`. Reported per command as a ratio and as milliseconds added (the paired difference of
 * each run, ours minus plain); goal: at most 150 ms added.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdirSync, mkdtempSync, writeFileSync } from 'node:fs';
import { homedir, tmpdir } from 'node:os';
import * as nodePath from 'node:path';
import type { BenchContext } from '../lib/context.ts';
import { coreHost, ripgrep, run } from '../lib/hosts.ts';
import { result, skipped } from '../lib/report.ts';
import { compare, compareAll } from '../lib/stats.ts';
import { benchDir, type SourceTree } from '../lib/workloads.ts';
import { srtSandbox } from '../../src/core/shell/srt-sandbox.ts';
import { DEFAULT_MAX_TIMEOUT_MS } from '../../src/core/shell/port.ts';
import { makeLayer, runToEnd } from '../../src/core/shell/layer.ts';

const ADDED_GOAL_MS = 150;
/** A command's change set landed (judged, applied, recorded), against `cp -a` of the same files: at most this many times as long. */
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
      await replaceCost(ctx, dir, host);
    } finally {
      await host.dispose();
    }
  } finally {
    await sandbox.dispose();
  }
}

/**
 * What landing a command's writes costs: `cp -a` of a folder of the source tree inside the sandbox
 * writes into the copy-on-write layer; once it has ended, its change set is judged and applied (a
 * new folder moved in by one rename, with its undo record). That landing — the result's time less
 * the command's own, which the result reports — is held against `cp -a` of the same files run
 * plainly (the goal). Reported beside it: the whole call against the plain copy, and the same copy
 * through overlayfs alone (no sandbox, nothing judged), the kernel's share of the difference. Each
 * run writes a new folder (or layer); the copies of earlier runs are removed before it, untimed, so every
 * command lists the same workspace. No `sync` between runs: on this VM's
 * disk a copy right after one took 4-9 s either way (plain or layered), which measures the disk.
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
  /** Before each run (untimed), the copies of the runs before it go: every command lists the same workspace. */
  const clear = (): void => {
    for (const folder of made.splice(0)) execFileSync('rm', ['-rf', folder]);
  };
  /** Each run's landing: its wall time less the command's own ("exit code 0 after N ms"). */
  const landing: number[] = [];
  const layers = mkdtempSync(nodePath.join(tmpdir(), 'wt-bench-layer-'));
  try {
    ctx.log(`run_shell_command "cp -a ${from} OUT" vs cp -a ${from} OUT in ${dir}`);
    const [ours, [peer, layerAlone]] = await compareAll(
      {
        label: `run_shell_command "cp -a ${from} …" (written to the layer, applied with its undo record)`,
        before: clear,
        run: async () => {
          const started = performance.now();
          const out = await host.invoke('run_shell_command', { command: `cp -a ${from} ${target('ours')}` });
          return { out, wall: performance.now() - started };
        },
        check: ({ out, wall }) => {
          const own = /exit code 0 after (\d+) ms[\s\S]*changes applied/.exec(out.text);
          if (own === null) throw new Error(`run_shell_command cp: ${out.text.slice(0, 500)}`);
          landing.push(wall - Number(own[1]));
        },
        elapsed: ({ wall }) => wall,
      },
      [
        {
          label: `cp -a ${from} … (plain)`,
          before: clear,
          run: () => run('cp', ['-a', from, target('plain')], { cwd: dir }),
          check: (out) => {
            const { code, stderr } = out as { code: number | null; stderr: string };
            if (code !== 0) throw new Error(`cp -a exited ${code}: ${stderr}`);
          },
        },
        {
          label: `cp -a ${from} … through overlayfs alone (unshare and mount; no sandbox, nothing judged or applied)`,
          before: clear,
          run: async () => {
            // A new layer each run, like each command's (outside the workspace; all removed at the end).
            const layer = await makeLayer(mkdtempSync(nodePath.join(layers, 'run-')), [dir]);
            return runToEnd(
              'unshare',
              layer.wrap(['cp', '-a', nodePath.join(dir, from), nodePath.join(dir, 'bench-out-layer')]).slice(1),
            );
          },
          check: (out) => {
            const { code, stderr } = out as { code: number | null; stderr: string };
            if (code !== 0) throw new Error(`cp -a through the layer exited ${code}: ${stderr}`);
          },
        },
      ],
      ctx.runs(5),
    );
    // The warm-up run's landing is not one of the timed ones.
    const landed = {
      label: "the result less the command's own time: setup, judging, moving in, undo record",
      values: landing.slice(-ours.values.length),
    };
    ctx.add(
      result({
        id: 'shell.apply.ratio',
        title: `a command's writes landed (cp -a of ${from}/: judged, moved in, undo record) vs cp -a of the same files`,
        goal: { kind: 'ratio', max: APPLY_GOAL_RATIO },
        ours: landed,
        peer,
      }),
    );
    ctx.add(
      result({
        id: 'shell.apply.command',
        title: `run_shell_command "cp -a ${from}/" as a whole (sandbox, layer, landing) vs cp -a`,
        goal: { kind: 'none' },
        ours,
        peer,
      }),
    );
    ctx.add(
      result({
        id: 'shell.apply.overlay',
        title: `cp -a of ${from}/ through overlayfs alone vs cp -a (the kernel's share)`,
        goal: { kind: 'none' },
        ours: layerAlone,
        peer,
      }),
    );
  } finally {
    for (const folder of made) execFileSync('rm', ['-rf', folder]);
    execFileSync('rm', ['-rf', layers]);
  }
}

/** Files a build rewrites in a folder that is already there: this many small ones, and a few large ones of this size. */
const REWRITTEN_SMALL = 2_000;
const REWRITTEN_LARGE = 4;
const LARGE_MIB = 32;

/**
 * What landing costs when a command replaces files in a folder that exists (an incremental build's
 * `target/` or `dist/`, a checkout of another branch): no new folder to move in whole, so each file
 * is journaled, written and recorded for undo one by one, its old and new bytes read into memory.
 * Held against `cp -a` of the same files over an existing copy. Reported, not judged (no goal is
 * met here yet: see bench/README.md).
 */
async function replaceCost(ctx: BenchContext, dir: string, host: Awaited<ReturnType<typeof coreHost>>): Promise<void> {
  const made = ['bench-gen-a', 'bench-gen-b', 'bench-rewritten-ours', 'bench-rewritten-plain'].map((name) =>
    nodePath.join(dir, name),
  );
  const [genA, genB, oursDir, plainDir] = made as [string, string, string, string];
  try {
    for (const [gen, fill] of [
      [genA, 'a'],
      [genB, 'b'],
    ] as const) {
      mkdirSync(nodePath.join(gen, 'src'), { recursive: true });
      mkdirSync(nodePath.join(gen, 'bin'));
      for (let i = 0; i < REWRITTEN_SMALL; i++)
        writeFileSync(nodePath.join(gen, 'src', `m${i}.js`), `// ${fill}\n`.repeat(300));
      for (let i = 0; i < REWRITTEN_LARGE; i++)
        writeFileSync(nodePath.join(gen, 'bin', `out${i}.bin`), Buffer.alloc(LARGE_MIB * 1024 * 1024, fill));
    }
    execFileSync('cp', ['-a', genA, oursDir]);
    execFileSync('cp', ['-a', genA, plainDir]);
    // Each side copies the other generation over what it holds, so every file changes each run.
    const turns = { ours: 0, plain: 0 };
    const next = (side: keyof typeof turns): string => nodePath.basename(++turns[side] % 2 === 1 ? genB : genA);
    const landing: number[] = [];
    const what = `${REWRITTEN_SMALL} files and ${REWRITTEN_LARGE} of ${LARGE_MIB} MiB`;
    ctx.log(`run_shell_command "cp -a GEN/. OUT/" over ${what} vs cp -a in ${dir}`);
    const [ours, peer] = await compare(
      {
        label: `run_shell_command "cp -a GEN/. ${nodePath.basename(oursDir)}/" (every file replaced)`,
        run: async () => {
          const started = performance.now();
          const out = await host.invoke('run_shell_command', {
            command: `cp -a ${next('ours')}/. ${nodePath.basename(oursDir)}/`,
          });
          return { out, wall: performance.now() - started };
        },
        check: ({ out, wall }) => {
          const own = /exit code 0 after (\d+) ms[\s\S]*changes applied/.exec(out.text);
          if (own === null) throw new Error(`run_shell_command cp over a folder: ${out.text.slice(0, 500)}`);
          landing.push(wall - Number(own[1]));
        },
        elapsed: ({ wall }) => wall,
      },
      {
        label: `cp -a GEN/. ${nodePath.basename(plainDir)}/ (plain)`,
        run: () => run('cp', ['-a', `${next('plain')}/.`, `${nodePath.basename(plainDir)}/`], { cwd: dir }),
        check: (out) => {
          const { code, stderr } = out as { code: number | null; stderr: string };
          if (code !== 0) throw new Error(`cp -a exited ${code}: ${stderr}`);
        },
      },
      ctx.runs(3),
    );
    ctx.add(
      result({
        id: 'shell.apply.replaced',
        title: `a command's writes landed over an existing folder (${what}, every one replaced) vs cp -a of the same files`,
        goal: { kind: 'none' },
        ours: { label: "the result less the command's own time", values: landing.slice(-ours.values.length) },
        peer,
      }),
    );
  } finally {
    for (const folder of made) execFileSync('rm', ['-rf', folder]);
  }
}
