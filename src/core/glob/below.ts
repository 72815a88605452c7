import type Picomatch from 'picomatch';
import { lazyModule } from '../lazy-module.ts';

const matchers = new Map<string, (segment: string) => boolean>();

/** Whether one path segment matches one segment of a glob, in any case (`*`, `?`, classes and braces within a segment). */
function segmentMatches(segment: string, pattern: string): boolean {
  let matcher = matchers.get(pattern);
  if (matcher === undefined) {
    matcher = /[*?[\]{}()!+@]/.test(pattern)
      ? lazyModule<typeof Picomatch>('picomatch')(pattern, { dot: true, nocase: true })
      : (s: string): boolean => s.toLowerCase() === pattern.toLowerCase();
    matchers.set(pattern, matcher);
  }
  return matcher(segment);
}

/**
 * Whether `glob` could match a path below `rel` in which `rel`'s last segment is matched by a segment
 * of the glob that is not `**`, with more of the glob below it: a symbolic link made at `rel` would
 * give the files of an unprotected folder names the glob protects (a link `.cargo` →
 * `**\/.cargo/config.toml`). A `/`-less glob matches file names, never a folder's: false.
 */
export function globReachesBelow(glob: string, rel: string): boolean {
  if (!glob.includes('/')) return false;
  const g = glob.split('/');
  const p = rel.split('/');
  const last = p.length - 1;
  const place = (pi: number, gi: number): boolean => {
    if (gi >= g.length) return false;
    // `**` takes any segment but the link's own.
    if (g[gi] === '**') return place(pi, gi + 1) || (pi < last && place(pi + 1, gi));
    if (!segmentMatches(p[pi]!, g[gi]!)) return false;
    return pi === last ? gi < g.length - 1 : place(pi + 1, gi + 1);
  };
  return place(0, 0);
}
