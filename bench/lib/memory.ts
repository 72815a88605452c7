/** The process's own memory figures for the child-process cases (Linux /proc; undefined elsewhere). */
import { readFileSync, writeFileSync } from 'node:fs';

/** A field of /proc/self/status in bytes (VmRSS, VmHWM), or undefined off Linux. */
export function procStatus(field: 'VmRSS' | 'VmHWM'): number | undefined {
  try {
    const m = new RegExp(`^${field}:\\s+(\\d+) kB`, 'm').exec(readFileSync('/proc/self/status', 'utf8'));
    return m ? Number(m[1]) * 1024 : undefined;
  } catch {
    return undefined;
  }
}

/** Resets the kernel's peak-RSS mark (VmHWM) to the current RSS; false when not permitted. */
export function resetPeak(): boolean {
  try {
    writeFileSync('/proc/self/clear_refs', '5');
    return true;
  } catch {
    return false;
  }
}
