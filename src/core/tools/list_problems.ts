import * as z from 'zod';
import { defineTool, type ToolContext } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import { SandboxError, isSandboxError } from '../errors.ts';
import type { GatedPath } from '../paths.ts';
import { displayOf, modelPathOf, within } from '../host-paths.ts';
import { fits } from '../paging/budget.ts';
import { ResultPager } from '../results/pager.ts';
import { isPaged, renderPaged, type Paged } from '../paging/paged.ts';
import { plural } from '../text/format.ts';
import {
  PROBLEM_SEVERITIES,
  type FileProblems,
  type Problem,
  type ProblemScope,
  type ProblemSeverity,
} from '../problems/port.ts';
import { problemLine } from '../problems/render.ts';

/** The most paths one call names. */
export const PROBLEM_PATHS_MAX = 50;

export const listProblemsSchema = () =>
  z.strictObject({
    paths: z
      .array(pathArgument('A file or folder whose problems to list'))
      .min(1)
      .max(PROBLEM_PATHS_MAX)
      .optional()
      .describe(
        `Files or folders (at most ${PROBLEM_PATHS_MAX}; default: the whole workspace). A file named here is opened for the language services first, so its problems are current.`,
      ),
    min_severity: z
      .enum(PROBLEM_SEVERITIES)
      .optional()
      .describe('The least severe problems to include: error, warning (default), information or hint.'),
  });

export interface FileProblemList {
  readonly path: string;
  readonly problems: readonly Problem[];
}

export interface ProblemsResult {
  readonly scope: string;
  readonly files: readonly FileProblemList[];
  /** Named paths refused or failing alone, with why. */
  readonly failed: readonly {
    readonly path: string;
    readonly error: { readonly code: string; readonly message: string };
  }[];
  /** Files with problems that an `ask` rule protects, not named in `paths` (so nobody was asked): their problems are left out. */
  readonly protectedLeftOut: readonly string[];
}

export type ProblemsOutput =
  | ProblemsResult
  | (Paged<string> & { readonly failed: ProblemsResult['failed']; readonly protectedLeftOut: readonly string[] });

const RANK: Record<ProblemSeverity, number> = { error: 0, warning: 1, information: 2, hint: 3 };

function counts(files: readonly FileProblemList[]): string {
  const all = files.flatMap((f) => f.problems);
  const by = PROBLEM_SEVERITIES.map((s) => [s, all.filter((p) => p.severity === s).length] as const)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => plural(n, s));
  return `${plural(all.length, 'problem')}${by.length ? ` (${by.join(', ')})` : ''} in ${plural(files.length, 'file')}`;
}

/** The result's lines: each file's path, then its problems indented (the items of a paged result). */
function lines(files: readonly FileProblemList[]): string[] {
  return files.flatMap((f) => [f.path, ...f.problems.map((p) => `  ${problemLine(p)}`)]);
}

function notes(r: Pick<ProblemsResult, 'failed' | 'protectedLeftOut'>): string[] {
  const out = r.failed.map((f) => `${f.path}: ${f.error.code}: ${f.error.message}`);
  if (r.protectedLeftOut.length > 0)
    out.push(
      `Not shown: the problems of ${plural(r.protectedLeftOut.length, 'protected file')} (${r.protectedLeftOut.join(', ')}), whose messages can quote it; name it in paths to have the user asked.`,
    );
  return out;
}

export function renderProblems(output: ProblemsOutput): string {
  if (isPaged<string>(output)) return [renderPaged(output, (line) => line), ...notes(output)].join('\n');
  const head =
    output.files.length === 0
      ? `No problems reported in ${output.scope}.`
      : `${counts(output.files)} in ${output.scope}:`;
  return [
    head,
    ...lines(output.files),
    ...notes(output),
    'Problems are what the language services report now (for the files they have looked at); a save reports its new problems itself.',
  ].join('\n');
}

type Ctx = ToolContext<'problems' | 'policy' | 'roots' | 'artifacts'>;

export const listProblems = defineTool({
  name: 'list_problems',
  displayName: 'List Problems',
  userDescription:
    "List the errors and warnings VS Code's language services report (the Problems panel) for files or the workspace.",
  description: `Lists the problems VS Code's language services report (its Problems panel: type errors, lint warnings), for the files or folders in \`paths\`, or for the whole workspace: each with its severity, source, code, range (line:column, 1-based) and message. A file named in paths is opened for the language services first, so its problems are current; without paths you get what they report now (mostly the files open or recently checked). Use it after an edit to see what broke (save_media already lists the new problems of the file it saved), or before one to see what is wrong. Errors and warnings by default; min_severity: "hint" includes all. A result larger than one page goes to a result artifact, like search_files. Problems of denied paths never appear; those of protected files (secrets) only when named in paths, after the user allows it.`,
  risk: 'read',
  requires: [],
  needs: ['problems', 'policy', 'roots', 'artifacts'],
  icon: 'warning',
  schema: listProblemsSchema,
  targets: (input, scope) => {
    if (input.paths === undefined)
      return { paths: scope.folderScope(undefined), summary: 'list the problems of the workspace' };
    const paths = input.paths;
    return {
      paths: paths.map((p) => scope.normalize(p)),
      summary: `list the problems of ${paths.join(', ')}`,
      each: paths.map((p) => `list the problems of ${p}`),
    };
  },
  run: async (input, ctx): Promise<ProblemsOutput> => {
    const port = ctx.problems;
    if (port === undefined)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        "list_problems needs language services (VS Code's Problems panel), and this host has none: the CLI runs no language servers.",
        'Check the code another way: ask the user to run the build, the type checker or the tests.',
      );
    const minimum = RANK[input.min_severity ?? 'warning'];
    const failed: { path: string; error: { code: string; message: string } }[] = [];
    /** The scopes looked at, each with whether the person was asked about it alone (a protected file named in paths). */
    const scopes: { path: GatedPath; asked: boolean }[] = [];
    const open: ProblemScope[] = [];
    const batch = ctx.batch ?? ctx.targets.map((path) => ({ path }));
    for (const [i, entry] of batch.entries()) {
      const named = input.paths?.[i] ?? '.';
      if ('refusal' in entry) {
        failed.push({ path: named, error: { code: entry.refusal.code, message: entry.refusal.message } });
        continue;
      }
      try {
        const resolved = await ctx.resolve(entry.path);
        if (!resolved.exists)
          throw new SandboxError(
            'E_SANDBOX_NOT_FOUND',
            `"${entry.path.display}" does not exist.`,
            'Check the path with find_files or list_directory.',
          );
        scopes.push({ path: entry.path, asked: ctx.readProtection(resolved)?.action === 'ask' });
        if (input.paths !== undefined && resolved.checked?.type === 'file')
          open.push({ root: entry.path.root, rel: entry.path.rel });
      } catch (e) {
        if (!isSandboxError(e) || e.code === 'E_SANDBOX_CANCELLED') throw e;
        failed.push({ path: named, error: { code: e.code, message: e.message } });
      }
    }
    const reported = scopes.length === 0 ? [] : await port.collect(open, ctx.signal);
    const { files, protectedLeftOut } = visible(reported, scopes, minimum, ctx);
    // Only what was looked at: a refused path is named in its own failure, not as a place looked at.
    const scope =
      input.paths === undefined
        ? 'the workspace'
        : scopes.map((s) => s.path.display).join(', ') || 'none of the paths given';
    const result: ProblemsResult = { scope, files, failed, protectedLeftOut };
    if (await fits(renderProblems(result), ctx.page)) return result;
    // The result artifact is read again under the path it names: a protected file's problems keep its protection.
    const asked = scopes.find((s) => s.asked);
    const source = asked?.path ?? scopes[0]!.path;
    const pager = new ResultPager<string>({
      store: ctx.artifacts,
      budget: ctx.page,
      ...(ctx.progress ? { progress: ctx.progress } : {}),
      label: `list_problems ${scope}`,
      source,
      render: (line) => line,
    });
    for (const line of lines(files)) await pager.add(line);
    await pager.overflow();
    const paged = await pager.finish(`${counts(files)} in ${scope}`, [`done complete (${counts(files)})`]);
    return { ...paged, failed, protectedLeftOut };
  },
  render: renderProblems,
});

/**
 * Security: the problems that may be shown: of files in a scope looked at, never of a denied path (as
 * search never shows one), and of a path an `ask` rule protects only when it was named and the
 * person allowed it alone (a message can quote the file: "Unknown word (hunter2)").
 */
function visible(
  reported: readonly FileProblems[],
  scopes: readonly { path: GatedPath; asked: boolean }[],
  minimum: number,
  ctx: Ctx,
): { files: FileProblemList[]; protectedLeftOut: string[] } {
  const files: FileProblemList[] = [];
  const protectedLeftOut: string[] = [];
  const roots = ctx.roots;
  for (const report of reported) {
    const file = modelPathOf(report.address, roots);
    if (file === undefined) continue;
    const scope = scopes.find((s) => within(file, s.path));
    if (scope === undefined) continue;
    const problems = report.problems.filter((p) => RANK[p.severity] <= minimum);
    if (problems.length === 0) continue;
    const action = ctx.policy.decide(file.rel, 'read', file.root.localPath).action;
    if (action === 'deny') continue;
    const path = displayOf(file, roots);
    if (action === 'ask' && !(scope.asked && scope.path.rel === file.rel)) {
      protectedLeftOut.push(path);
      continue;
    }
    files.push({
      path,
      problems: [...problems].sort((a, b) => a.startLine - b.startLine || a.startColumn - b.startColumn),
    });
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  protectedLeftOut.sort();
  return { files, protectedLeftOut };
}
