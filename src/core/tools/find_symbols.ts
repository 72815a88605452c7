import * as z from 'zod';
import { defineTool, type ToolContext } from '../contract/tool.ts';
import { pathArgument } from '../contract/schema.ts';
import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import { displayOf, modelPathOf, within } from '../host-paths.ts';
import type { WorkspaceSymbol } from '../outline/port.ts';
import { fits } from '../paging/budget.ts';
import { ResultPager } from '../results/pager.ts';
import { isPaged, renderPaged, type Paged } from '../paging/paged.ts';
import { plural } from '../text/format.ts';

export const SYMBOLS_LIMIT_DEFAULT = 200;
export const SYMBOLS_LIMIT_MAX = 2000;

export const findSymbolsSchema = () =>
  z.strictObject({
    query: z
      .string()
      .trim()
      .min(1)
      .max(200)
      .describe(
        'Part of a symbol\'s name. The language services match it as VS Code\'s "Go to Symbol in Workspace" does, fuzzily: "parseDur" finds parseDuration.',
      ),
    path: pathArgument('A folder (or file) to keep the symbols of; default: the whole workspace').optional(),
    limit: z
      .number()
      .int()
      .min(1)
      .max(SYMBOLS_LIMIT_MAX)
      .optional()
      .describe(`The most symbols returned (default ${SYMBOLS_LIMIT_DEFAULT}, at most ${SYMBOLS_LIMIT_MAX}).`),
  });

/** A symbol as the model gets it: where it is by workspace path. */
export interface FoundSymbol {
  readonly path: string;
  readonly name: string;
  readonly kind: string;
  readonly container?: string;
  readonly startLine: number;
  readonly endLine: number;
}

export interface SymbolsResult {
  readonly query: string;
  readonly scope: string;
  readonly symbols: readonly FoundSymbol[];
  /** More matched than `limit`. */
  readonly limited: boolean;
  /** Symbols left out because their files are protected (secrets; the rules' `ask`), which search never shows. */
  readonly protectedLeftOut: number;
}

export type SymbolsOutput = SymbolsResult | (Paged<string> & { readonly protectedLeftOut: number });

const symbolLine = (s: FoundSymbol): string =>
  `  ${s.kind} ${s.name}${s.container ? ` (in ${s.container})` : ''}  ${s.startLine === s.endLine ? s.startLine : `${s.startLine}-${s.endLine}`}`;

/** Each file's path, then its symbols (the items of a paged result). */
function lines(symbols: readonly FoundSymbol[]): string[] {
  const out: string[] = [];
  let previous: string | undefined;
  for (const s of symbols) {
    if (s.path !== previous) out.push(s.path);
    out.push(symbolLine(s));
    previous = s.path;
  }
  return out;
}

const count = (r: Pick<SymbolsResult, 'symbols' | 'limited'>): string =>
  `${plural(r.symbols.length, 'symbol')} in ${plural(new Set(r.symbols.map((s) => s.path)).size, 'file')}${r.limited ? ' (limited)' : ''}`;

function notes(
  r: Pick<SymbolsResult, 'protectedLeftOut'> & { readonly limited?: boolean; readonly limit?: number },
): string[] {
  const out: string[] = [];
  if (r.limited)
    out.push(`Note: more symbols match; call again with a larger limit (now ${r.limit}) or a longer query.`);
  if (r.protectedLeftOut > 0)
    out.push(`Not shown: ${plural(r.protectedLeftOut, 'symbol')} in protected files, which search never shows.`);
  return out;
}

export function renderSymbols(output: SymbolsOutput): string {
  if (isPaged<string>(output)) return [renderPaged(output, (line) => line), ...notes(output)].join('\n');
  const head =
    output.symbols.length === 0
      ? `No symbols matching "${output.query}" in ${output.scope}. The language services only know the files they index (for TypeScript and JavaScript: the projects of the files open in editors); search_files finds text anywhere.`
      : `${count(output)} matching "${output.query}" in ${output.scope} (line ranges are whole definitions):`;
  return [head, ...lines(output.symbols), ...notes({ ...output, limit: output.symbols.length })].join('\n');
}

type Ctx = ToolContext<'outline' | 'policy' | 'roots' | 'artifacts'>;

export const findSymbols = defineTool({
  name: 'find_symbols',
  displayName: 'Find Symbols',
  userDescription:
    'Find classes, functions and other symbols by name across the workspace, as VS Code\'s "Go to Symbol in Workspace" does.',
  description: `Finds the definitions of classes, functions, methods, variables and other symbols whose names match \`query\` across the workspace (or under \`path\`), from VS Code's language services (its "Go to Symbol in Workspace"; matching is fuzzy): each with its kind, name, what it is declared in, and the line range of the whole definition, grouped by file. Use it to find where something is defined by name; then open_file {path, offset, limit} reads it, or artifact_query {callId, select: "Class/method"} after an open_file without a window. Use search_files for text, usages and comments. The services only know what they index (for TypeScript/JavaScript: the projects of the files open in editors), so an empty answer is not proof of absence: use search_files then. Symbols in denied or protected files never appear. A result larger than one page goes to a result artifact, like search_files. Not in the CLI (no language services).`,
  risk: 'read',
  requires: [],
  needs: ['outline', 'policy', 'roots', 'artifacts'],
  icon: 'symbol-class',
  schema: findSymbolsSchema,
  targets: (input, scope) => ({
    paths: scope.folderScope(input.path),
    summary: `find symbols matching "${input.query}" in ${input.path ?? 'the workspace'}`,
  }),
  run: async (input, ctx): Promise<SymbolsOutput> => {
    if (ctx.outline === undefined)
      throw new SandboxError(
        'E_SANDBOX_UNSUPPORTED',
        "find_symbols needs language services (VS Code's symbol providers), and this host has none: the CLI runs no language servers.",
        'Find the definition with search_files instead, e.g. pattern "function name|class name".',
      );
    const limit = input.limit ?? SYMBOLS_LIMIT_DEFAULT;
    const found = await ctx.outline.workspaceSymbols(input.query, ctx.signal);
    if (found === undefined)
      throw new SandboxError(
        'E_SANDBOX_UNAVAILABLE',
        'No symbol provider answered in time (a language server may still be starting).',
        'Try again shortly, or use search_files.',
      );
    const { symbols, protectedLeftOut } = visible(found, ctx.targets, ctx);
    const scope = input.path ?? 'the workspace';
    const result: SymbolsResult = {
      query: input.query,
      scope,
      symbols: symbols.slice(0, limit),
      limited: symbols.length > limit,
      protectedLeftOut,
    };
    if (await fits(renderSymbols(result), ctx.page)) return result;
    const pager = new ResultPager<string>({
      store: ctx.artifacts,
      budget: ctx.page,
      ...(ctx.progress ? { progress: ctx.progress } : {}),
      label: `find_symbols "${input.query}" in ${scope}`,
      source: ctx.targets[0]!,
      render: (line) => line,
    });
    for (const line of lines(result.symbols)) await pager.add(line);
    await pager.overflow();
    const paged = await pager.finish(`${count(result)} matching "${input.query}" in ${scope}`, [
      `done complete (${count(result)})`,
    ]);
    return { ...paged, protectedLeftOut };
  },
  render: renderSymbols,
});

/**
 * Security: the symbols that may be shown: in the scopes asked about, never in a denied file (as
 * search never shows one), nor in a protected one (a name can quote a secret: `API_KEY_sk_live_…`).
 */
function visible(
  found: readonly WorkspaceSymbol[],
  scopes: readonly ModelPath[],
  ctx: Ctx,
): { symbols: FoundSymbol[]; protectedLeftOut: number } {
  const symbols: FoundSymbol[] = [];
  let protectedLeftOut = 0;
  for (const s of found) {
    const file = modelPathOf(s.address, ctx.roots);
    if (file === undefined || !scopes.some((scope) => within(file, scope))) continue;
    const action = ctx.policy.decide(file.rel, 'read', file.root.localPath).action;
    if (action === 'deny') continue;
    if (action === 'ask') {
      protectedLeftOut++;
      continue;
    }
    symbols.push({
      path: displayOf(file, ctx.roots),
      name: s.name,
      kind: s.kind,
      ...(s.container ? { container: s.container } : {}),
      startLine: s.startLine,
      endLine: s.endLine,
    });
  }
  symbols.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : a.startLine - b.startLine));
  return { symbols, protectedLeftOut };
}
