/** Case results, goals, the printed table and bench/results.json. */
import { execFileSync } from 'node:child_process';
import { cpus, loadavg, release, totalmem } from 'node:os';
import { round, summarize, type Sample, type Summary } from './stats.ts';

export type Unit = 'ms' | 'MiB' | 'KB' | 'bytes';

/**
 * - ratio: ours median / peer median must be at most `max` ("≤1.15×").
 * - speedup: peer median / ours median must be at least `min` ("≥5× faster").
 * - max: ours median must be at most `value` (in the case's unit).
 * - smaller: ours must be below the peer (result size).
 * - none: printed for reference.
 */
export type Goal =
  | { readonly kind: 'ratio'; readonly max: number }
  | { readonly kind: 'speedup'; readonly min: number }
  | { readonly kind: 'max'; readonly value: number }
  | { readonly kind: 'smaller' }
  | { readonly kind: 'none' };

export type Status = 'PASS' | 'MISS' | 'INFO' | 'SKIP' | 'ERROR';

export interface CaseResult {
  readonly id: string;
  readonly title: string;
  readonly unit: Unit;
  readonly goal: Goal;
  readonly status: Status;
  readonly ours?: Summary;
  readonly peer?: Summary;
  /** ours median / peer median. */
  readonly ratio?: number;
  readonly note?: string;
  readonly details?: Record<string, unknown>;
}

export function evaluate(
  goal: Goal,
  ours: Summary | undefined,
  peer: Summary | undefined,
): { status: Status; ratio?: number } {
  const ratio = ours && peer && peer.median > 0 ? ours.median / peer.median : undefined;
  if (!ours) return { status: 'SKIP' };
  switch (goal.kind) {
    case 'ratio':
      return ratio === undefined ? { status: 'INFO' } : { status: ratio <= goal.max ? 'PASS' : 'MISS', ratio };
    case 'speedup':
      return ratio === undefined ? { status: 'INFO' } : { status: 1 / ratio >= goal.min ? 'PASS' : 'MISS', ratio };
    case 'max':
      return { status: ours.median <= goal.value ? 'PASS' : 'MISS', ...(ratio !== undefined ? { ratio } : {}) };
    case 'smaller':
      return ratio === undefined ? { status: 'INFO' } : { status: ratio < 1 ? 'PASS' : 'MISS', ratio };
    case 'none':
      return { status: 'INFO', ...(ratio !== undefined ? { ratio } : {}) };
  }
}

/** The id suffix of a row against ripgrep given exactly the arguments ours gives it (INFO: our layer's own cost). */
export const OUR_ARGS = '.our-args';

/** Builds a result from samples (or fixed values) and evaluates its goal. */
export function result(spec: {
  id: string;
  title: string;
  unit?: Unit;
  goal: Goal;
  ours?: Sample;
  peer?: Sample;
  note?: string;
  details?: Record<string, unknown>;
}): CaseResult {
  const ours = spec.ours && spec.ours.values.length ? summarize(spec.ours) : undefined;
  const peer = spec.peer && spec.peer.values.length ? summarize(spec.peer) : undefined;
  const { status, ratio } = evaluate(spec.goal, ours, peer);
  return {
    id: spec.id,
    title: spec.title,
    unit: spec.unit ?? 'ms',
    goal: spec.goal,
    status,
    ...(ours ? { ours } : {}),
    ...(peer ? { peer } : {}),
    ...(ratio !== undefined ? { ratio: Number(ratio.toPrecision(4)) } : {}),
    ...(spec.note ? { note: spec.note } : {}),
    ...(spec.details ? { details: spec.details } : {}),
  };
}

export function skipped(id: string, title: string, goal: Goal, why: string, status: Status = 'SKIP'): CaseResult {
  return { id, title, unit: 'ms', goal, status, note: why };
}

export function formatValue(n: number, unit: Unit): string {
  switch (unit) {
    case 'ms':
      return n >= 10_000
        ? `${(n / 1000).toFixed(1)} s`
        : n >= 1000
          ? `${(n / 1000).toFixed(2)} s`
          : n >= 100
            ? `${n.toFixed(0)} ms`
            : n >= 10
              ? `${n.toFixed(1)} ms`
              : `${n.toFixed(2)} ms`;
    case 'MiB':
      return `${n.toFixed(1)} MiB`;
    case 'KB':
      return `${n.toFixed(1)} KB`;
    case 'bytes':
      return n >= 1024 * 1024
        ? `${(n / 1024 / 1024).toFixed(1)} MiB`
        : n >= 10 * 1024
          ? `${(n / 1024).toFixed(1)} KiB`
          : `${n} B`;
  }
}

function side(s: Summary | undefined, unit: Unit): string {
  if (!s) return '—';
  if (s.runs === 1 || s.min === s.median) return formatValue(s.median, unit);
  return `${formatValue(s.min, unit)} / ${formatValue(s.median, unit)}`;
}

export function formatGoal(goal: Goal, unit: Unit): string {
  switch (goal.kind) {
    case 'ratio':
      return `≤${goal.max}×`;
    case 'speedup':
      return `≥${goal.min}× faster`;
    case 'max':
      return `≤${formatValue(goal.value, unit).replace(/\.0 /, ' ')}`;
    case 'smaller':
      return 'smaller';
    case 'none':
      return '—';
  }
}

function ratioCell(r: CaseResult): string {
  if (r.ratio === undefined) return '—';
  if (r.goal.kind === 'speedup') return `${r.ratio.toFixed(2)}× (${(1 / r.ratio).toFixed(1)}× faster)`;
  if (r.goal.kind === 'smaller' && r.ratio < 1) {
    const times = 1 / r.ratio;
    return `${r.ratio < 0.01 ? r.ratio.toExponential(1) : r.ratio.toFixed(2)}× (${times >= 100 ? Math.round(times).toLocaleString('en-US') : times.toFixed(1)}× smaller)`;
  }
  return `${r.ratio.toFixed(2)}×`;
}

/** A Markdown table (pasteable into README): ours and the peer as "min / median". */
export function table(results: readonly CaseResult[]): string {
  const rows = [['case', 'ours (min / median)', 'peer', 'peer (min / median)', 'ratio', 'goal', 'result']];
  for (const r of results) {
    rows.push([
      r.title,
      side(r.ours, r.unit),
      r.peer?.label ?? (r.note && !r.ours ? r.note : '—'),
      side(r.peer, r.unit),
      ratioCell(r),
      formatGoal(r.goal, r.unit),
      r.status,
    ]);
  }
  const esc = (s: string): string => s.replace(/\|/g, '\\|');
  const lines = rows.map((row) => `| ${row.map(esc).join(' | ')} |`);
  lines.splice(1, 0, `|${rows[0]!.map(() => '---').join('|')}|`);
  return lines.join('\n');
}

export interface Machine {
  readonly cpu: string;
  readonly cores: number;
  readonly memoryGiB: number;
  readonly os: string;
  readonly node: string;
  readonly ripgrep: string;
  readonly loadAverageStart: readonly number[];
}

export function machine(rgPath: string): Machine {
  let rg = 'unknown';
  try {
    rg = execFileSync(rgPath, ['--version'], { encoding: 'utf8' }).split('\n')[0]!.trim();
  } catch {
    /* reported as unknown */
  }
  return {
    cpu: cpus()[0]?.model.trim() ?? 'unknown',
    cores: cpus().length,
    memoryGiB: round(totalmem() / 1024 ** 3),
    os: `${process.platform} ${release()}`,
    node: process.version,
    ripgrep: rg,
    loadAverageStart: loadavg().map(round),
  };
}
