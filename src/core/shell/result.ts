import { isPaged, renderPaged, type Paged } from '../paging/paged.ts';
import { plural } from '../text/format.ts';
import type { ChangeOutcome } from './outcome.ts';
import { gitPlaceOf } from '../git/git-folder.ts';
import { condenseOutput } from './condense.ts';
import { visibleCommand } from './display.ts';
import { renderShellLine, type ShellLine } from './output.ts';

/** How the command ended. */
export interface ShellStatus {
  readonly command: string;
  /** The folder it ran in, as displayed. */
  readonly cwd: string;
  readonly exitCode: number | null;
  readonly signal: string | null;
  readonly timedOut: boolean;
  readonly durationMs: number;
  /** What the sandbox reported refusing (network hosts; file events where the platform reports them). */
  readonly violations: readonly string[];
  /** Hosts the command tried to reach that were refused (no setting allows them, and the person declined or nobody could be asked). */
  readonly refusedHosts: readonly string[];
  /** Lines on stderr that say a read or write was refused (the sandbox's refusals on Linux show up this way). */
  readonly refusedLines: number;
  readonly boundary: string;
  /** What became of each change the command made (applied, staged for review, held back). */
  readonly changes: readonly ChangeOutcome[];
  /** The save_id that undoes what was applied (undo_save). */
  readonly saveId?: string;
  /** Why what was applied cannot be undone (no save_id then). */
  readonly noUndo?: string;
  /** Files applied whose undo record could not be kept (the save_id takes back the rest). */
  readonly unrecorded?: readonly string[];
  /** The workspace was read-only to the command (no copy-on-write layer here): why. */
  readonly readOnlyBecause?: string;
  /** Where this host's person allows hosts (a setting or a flag), for the refusal line. */
  readonly hostsSetting: string;
  /** Repositories (as displayed) whose object store was unreadable, and the secret their history holds. */
  readonly hiddenHistories: readonly { readonly repository: string; readonly secret: string }[];
}

/** A command's result: every line when they fit one page, else the first page and the result artifact. */
export type ShellOutput =
  (ShellStatus & { readonly lines: readonly ShellLine[] }) | (Paged<ShellLine> & { readonly status: ShellStatus });

/** The lines that say how the command ended and what the sandbox refused. */
export function statusLines(s: ShellStatus): string[] {
  const how = s.timedOut
    ? `timed out: killed after ${s.durationMs} ms (with everything it started)`
    : s.signal !== null
      ? `ended by signal ${s.signal} after ${s.durationMs} ms`
      : `exit code ${s.exitCode ?? 'unknown'} after ${s.durationMs} ms`;
  const lines = [`$ ${visibleCommand(s.command)}  (in ${s.cwd}; ${how})`];
  for (const v of s.violations) lines.push(`sandbox refused: ${v}`);
  if (s.refusedHosts.length > 0)
    lines.push(
      `network refused: ${s.refusedHosts.join(', ')} (not in ${s.hostsSetting}, and the user did not allow it, or could not be asked). Do not retry through another host or tool; ask the user to allow the host if the command needs it.`,
    );
  lines.push(...changeSetLines(s.changes, s));
  for (const h of s.hiddenHistories)
    lines.push(
      `Note: git's object store of ${h.repository} was unreadable to this command: its history holds ${h.secret}, a secret's name, which git show or git log -p would print. git commands that read objects fail there; ask the user to run them, or to relax the rule for that name.`,
    );
  if (s.readOnlyBecause !== undefined)
    lines.push(
      `Note: the workspace was read-only to this command (${s.readOnlyBecause}); writes outside $TMPDIR fail.`,
    );
  if (s.refusedLines > 0)
    lines.push(
      `Note: ${plural(s.refusedLines, 'stderr line')} report a refused read, write or connection. The sandbox (${s.boundary}) refuses these on purpose: do not retry them another way; work inside the boundary or ask the user.`,
    );
  return lines;
}

/** The model's text: the output lines (or their first page), then how the command ended. */
export function renderShell(output: ShellOutput): string {
  if (isPaged<ShellLine>(output))
    return [renderPaged(output, (line) => renderShellLine(line)), ...statusLines(output.status)].join('\n');
  const body = condenseOutput(output.lines).map(renderShellLine);
  return [...(body.length === 0 ? ['(no output)'] : body), ...statusLines(output)].join('\n');
}

/** The lines of a command's result that say what became of its changes, and how to take them back. */
export function changeSetLines(
  given: readonly ChangeOutcome[],
  undo: Pick<ShellStatus, 'saveId' | 'noUndo' | 'unrecorded'>,
): string[] {
  const { saveId, noUndo, unrecorded = [] } = undo;
  // Security: names and link targets are the command's: shown with their line breaks and hidden
  // characters escaped, so that a name cannot forge a line of the result.
  // A name with a space or a separator of these lines is quoted: "README.md -src/index.ts" is one file.
  const named = (path: string): string => {
    const shown = visibleCommand(path);
    return /[\s;,()"]|^[-+@]/.test(shown) ? JSON.stringify(shown) : shown;
  };
  const outcomes = given.map((o) => ({
    ...o,
    path: named(o.path),
    ...(o.why !== undefined ? { why: visibleCommand(o.why) } : {}),
  }));
  const lines: string[] = [];
  const inGit = (o: ChangeOutcome): boolean => o.path.includes('.git') && gitPlaceOf(o.path) !== undefined;
  const applied = outcomes.filter((o) => o.action === 'applied' && o.kind !== 'folder' && !inGit(o));
  const appliedInGit = outcomes.filter((o) => o.action === 'applied' && o.kind !== 'folder' && inGit(o)).length;
  const staged = outcomes.filter((o) => o.action === 'staged');
  const held = outcomes.filter((o) => o.action === 'held');
  if (applied.length + appliedInGit > 0) {
    const shown = applied
      .slice(0, 20)
      .map((o) => `${o.kind === 'delete' ? '-' : o.kind === 'link' ? '@' : '+'}${o.path}`);
    if (applied.length > 20) shown.push('…');
    if (appliedInGit > 0) shown.push(`${plural(appliedInGit, 'file')} of git's own (objects, refs, index)`);
    lines.push(
      `changes applied: ${plural(applied.length, 'file')} (${shown.join(' ')})${saveId === undefined ? (noUndo !== undefined ? `; they cannot be undone: ${noUndo}` : '') : unrecorded.length === 0 ? `; undo_save {"save_id":"${saveId}"} takes the whole command back` : `; undo_save {"save_id":"${saveId}"} takes the command back but for ${unrecorded.map(named).join(', ')}, whose undo records could not be kept`}.`,
    );
  }
  if (staged.length > 0) {
    lines.push(
      `staged for review, NOT on disk: ${staged.map((o) => `${o.kind === 'delete' ? 'delete ' : ''}${o.path} (${o.mediaId}: ${o.why})`).join('; ')}. Save them with save_media {"media_ids":[${staged.map((o) => JSON.stringify(o.mediaId)).join(',')}]} if they are wanted (the user is asked), or leave them.`,
    );
  }
  if (held.length > 0) lines.push(`held back, not written: ${held.map((o) => `${o.path} (${o.why})`).join('; ')}.`);
  return lines;
}
