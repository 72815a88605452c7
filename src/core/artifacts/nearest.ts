/** Levenshtein distance, case-insensitive, capped at `max + 1` (enough to rank near candidates). */
function distance(a: string, b: string, max: number): number {
  const x = a.toLowerCase();
  const y = b.toLowerCase();
  if (Math.abs(x.length - y.length) > max) return max + 1;
  let previous = Array.from({ length: y.length + 1 }, (_, j) => j);
  for (let i = 1; i <= x.length; i++) {
    const current = [i];
    let best = i;
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      const value = Math.min(previous[j]! + 1, current[j - 1]! + 1, previous[j - 1]! + cost);
      current.push(value);
      best = Math.min(best, value);
    }
    if (best > max) return max + 1;
    previous = current;
  }
  return previous[y.length]!;
}

/**
 * The candidates nearest to `wanted`: those containing it first, then by edit
 * distance, then in their original order. Returns at most `limit`, and always some when any exist.
 */
export function nearest(wanted: string, candidates: readonly string[], limit: number): string[] {
  const w = wanted.toLowerCase();
  const scored = candidates.map((candidate, order) => {
    const c = candidate.toLowerCase();
    const contains = w !== '' && c.includes(w);
    return { candidate, order, score: contains ? -1 : distance(wanted, candidate, 64) };
  });
  scored.sort((a, b) => a.score - b.score || a.order - b.order);
  return scored.slice(0, limit).map((s) => s.candidate);
}
