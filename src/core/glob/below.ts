import type Picomatch from 'picomatch';
import { lazyModule } from '../lazy-module.ts';

const matchers = new Map<string, (segment: string) => boolean>();

/** A glob segment that a brace or extglob split across `/` leaves unbalanced: it is read as matching any name. */
const unbalanced = (pattern: string): boolean =>
  (pattern.match(/\{/g)?.length ?? 0) !== (pattern.match(/\}/g)?.length ?? 0) ||
  (pattern.match(/\(/g)?.length ?? 0) !== (pattern.match(/\)/g)?.length ?? 0);

/** Whether one path segment matches one segment of a glob, in any case and across line breaks (`*`, `?`, classes, braces and escapes within a segment). */
function segmentMatches(segment: string, pattern: string): boolean {
  let matcher = matchers.get(pattern);
  if (matcher === undefined) {
    matcher = unbalanced(pattern)
      ? (): boolean => true
      : /[*?[\]{}()!+@\\]/.test(pattern)
        ? lazyModule<typeof Picomatch>('picomatch')(pattern, { dot: true, nocase: true, flags: 'is' })
        : (s: string): boolean => s.toLowerCase() === pattern.toLowerCase();
    matchers.set(pattern, matcher);
  }
  return matcher(segment);
}

/**
 * Whether `glob` could match a path below `rel` through `rel` itself: placing `rel`'s segments on the
 * glob's takes at least one segment that is not a leading `**` (a name or a place the glob names),
 * and more of the glob is left for what lies below. A symbolic link made at `rel` would then give
 * the files of an unprotected folder names the glob protects (`.cargo` → `**\/.cargo/config.toml`,
 * `a/x` → `a/**\/b/c`); under a leading `**` alone the folder it leads to matches as well by its own
 * name. A `/`-less glob matches file names, never a folder's: false. Segments compare in any case; a
 * segment a brace or extglob across `/` splits matches any name (fail closed). Memoised: linear in
 * the path's and the glob's segments, whatever the number of `**`.
 */
export function globReachesBelow(glob: string, rel: string): boolean {
  return slashBracesExpanded(glob).some((one) => reachesBelow(one, rel));
}

/** At most this many globs from one glob's braces; past it, the braces stay (and their split segments match any name). */
const MAX_EXPANSIONS = 64;

/**
 * The globs a glob's braces that hold a `/` stand for (`{deploy/prod,ops}/**` → `deploy/prod/**`,
 * `ops/**`), so that the glob can be read a segment at a time; braces within a segment are left to
 * the segment's matcher.
 */
function slashBracesExpanded(glob: string): string[] {
  const open = glob.indexOf('{');
  if (open === -1 || !glob.includes('/')) return [glob];
  let depth = 0;
  const commas: number[] = [];
  let close = -1;
  for (let i = open; i < glob.length && close === -1; i++) {
    const c = glob[i];
    if (c === '\\') i++;
    else if (c === '{') depth++;
    else if (c === '}' && --depth === 0) close = i;
    else if (c === ',' && depth === 1) commas.push(i);
  }
  const body = close === -1 ? '' : glob.slice(open + 1, close);
  if (close === -1 || commas.length === 0 || !body.includes('/')) {
    // This group stays as it is; later groups may still hold a "/".
    if (close === -1) return [glob];
    const rest = slashBracesExpanded(glob.slice(close + 1));
    return rest.map((r) => glob.slice(0, close + 1) + r);
  }
  const parts = [open, ...commas, close]
    .slice(0, -1)
    .map((at, k, all) => glob.slice(at + 1, [...all.slice(1), close][k]));
  const expanded: string[] = [];
  for (const part of parts)
    for (const one of slashBracesExpanded(glob.slice(0, open) + part + glob.slice(close + 1))) {
      if (expanded.length >= MAX_EXPANSIONS) return [glob];
      expanded.push(one);
    }
  return expanded;
}

function reachesBelow(glob: string, rel: string): boolean {
  if (!glob.includes('/')) return false;
  const g = glob.split('/').filter((s, i, all) => !(s === '**' && all[i - 1] === '**'));
  const p = rel.split('/');
  const last = p.length - 1;
  const memo = new Map<number, boolean>();
  const place = (pi: number, gi: number, anchored: boolean): boolean => {
    if (gi >= g.length) return false;
    const key = (pi * (g.length + 1) + gi) * 2 + (anchored ? 1 : 0);
    const known = memo.get(key);
    if (known !== undefined) return known;
    let found: boolean;
    if (g[gi] === '**') {
      // `**` takes no segment, or this one (and stays); only a `**` after a named segment anchors.
      const takes = anchored || gi > 0;
      found = place(pi, gi + 1, anchored) || (pi < last ? place(pi + 1, gi, anchored || takes) : takes);
    } else if (!segmentMatches(p[pi]!, g[gi]!)) found = false;
    else found = pi === last ? gi < g.length - 1 : place(pi + 1, gi + 1, true);
    memo.set(key, found);
    return found;
  };
  return place(0, 0, false);
}
