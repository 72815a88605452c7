import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync, readlinkSync, rmSync } from 'node:fs';

/** Each process's parent, from /proc on Linux, from ps elsewhere. */
function parents(): Map<number, number> {
  const map = new Map<number, number>();
  if (process.platform === 'linux') {
    for (const entry of readdirSync('/proc')) {
      if (!/^\d+$/.test(entry)) continue;
      try {
        // The command name (field 2) is in parentheses and may hold spaces: the parent comes after its last ")".
        const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
        const ppid = Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]);
        map.set(Number(entry), ppid);
      } catch {
        /* it ended while we looked */
      }
    }
    return map;
  }
  const ps = spawnSync('ps', ['-A', '-o', 'pid=,ppid='], { encoding: 'utf8' });
  for (const line of (ps.stdout ?? '').split('\n')) {
    const [pid, ppid] = line.trim().split(/\s+/).map(Number);
    if (pid !== undefined && ppid !== undefined && !Number.isNaN(pid)) map.set(pid, ppid);
  }
  return map;
}

/**
 * Every process below `root`. The sandbox starts its command in a session of its own, so a signal
 * to our process group does not reach it: the tree does.
 */
export function descendants(root: number): number[] {
  const byParent = new Map<number, number[]>();
  for (const [pid, ppid] of parents()) byParent.set(ppid, [...(byParent.get(ppid) ?? []), pid]);
  const out: number[] = [];
  const stack = [root];
  while (stack.length > 0) {
    for (const child of byParent.get(stack.pop()!) ?? []) {
      out.push(child);
      stack.push(child);
    }
  }
  return out;
}

/** The pipe a process has as its file descriptor `fd` ("pipe:[1234]"), on Linux; undefined elsewhere or when it is gone. */
export function pipeOf(pid: number, fd: number): string | undefined {
  if (process.platform !== 'linux') return undefined;
  try {
    const link = readlinkSync(`/proc/${pid}/fd/${fd}`);
    return link.startsWith('pipe:') ? link : undefined;
  } catch {
    return undefined;
  }
}

/**
 * Every process that holds one of `pipes` open, on Linux: whatever a command started, however it
 * detached itself (a new session, a dead parent), still holds the output pipe it inherited.
 */
export function pipeHolders(pipes: readonly string[]): number[] {
  if (process.platform !== 'linux' || pipes.length === 0) return [];
  const holders: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry) || Number(entry) === process.pid) continue;
    let fds: string[];
    try {
      fds = readdirSync(`/proc/${entry}/fd`);
    } catch {
      continue;
    }
    for (const fd of fds) {
      let link: string;
      try {
        link = readlinkSync(`/proc/${entry}/fd/${fd}`);
      } catch {
        continue;
      }
      if (pipes.includes(link)) {
        holders.push(Number(entry));
        break;
      }
    }
  }
  return holders;
}

/**
 * Every process whose environment holds `entry` ("NAME=value"), on Linux: a command's processes
 * inherit the variable the call set, however they detached themselves, and so does the sandbox's own
 * init process, whose end ends its whole PID namespace.
 */
export function processesWithEnvironment(entry: string): number[] {
  if (process.platform !== 'linux') return [];
  const found: number[] = [];
  for (const pid of readdirSync('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    try {
      if (readFileSync(`/proc/${pid}/environ`, 'latin1').split('\0').includes(entry)) found.push(Number(pid));
    } catch {
      /* it ended while we looked, or is not ours to read */
    }
  }
  return found;
}

/**
 * The environment variable a host sets on itself (its process id) before the sandbox starts its
 * helpers, which inherit it: the network proxy's socat bridges outlive a host killed with SIGKILL.
 */
export const HOST_MARK = 'WT_SANDBOX_HOST';

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch (e) {
    return (e as NodeJS.ErrnoException).code === 'EPERM';
  }
};

/**
 * Security: ends what the sandbox started for a host that is gone (a killed MCP server's socat,
 * listening on its socket under the temp folder), and removes the sockets they listened on; on
 * Linux. Returns the process ids it ended.
 */
export function endOrphanedHelpers(): number[] {
  if (process.platform !== 'linux') return [];
  const ended: number[] = [];
  for (const entry of readdirSync('/proc')) {
    const pid = Number(entry);
    if (!/^\d+$/.test(entry) || pid === process.pid) continue;
    try {
      const mark = readFileSync(`/proc/${entry}/environ`, 'latin1')
        .split('\0')
        .find((e) => e.startsWith(`${HOST_MARK}=`));
      const host = mark === undefined ? NaN : Number(mark.slice(HOST_MARK.length + 1));
      if (!Number.isInteger(host) || host === process.pid || alive(host)) continue;
      const sockets = readFileSync(`/proc/${entry}/cmdline`, 'latin1')
        .split('\0')
        .flatMap((arg) => /^UNIX-LISTEN:([^,]+)/.exec(arg)?.[1] ?? []);
      process.kill(pid, 'SIGKILL');
      ended.push(pid);
      for (const socket of sockets) rmSync(socket, { force: true });
    } catch {
      /* it ended while we looked, or is not ours */
    }
  }
  return ended;
}
