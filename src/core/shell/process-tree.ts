import { spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';

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
      } catch { /* it ended while we looked */ }
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
    for (const child of byParent.get(stack.pop()!) ?? []) { out.push(child); stack.push(child); }
  }
  return out;
}
