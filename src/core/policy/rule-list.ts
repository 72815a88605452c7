import { namePrefilter, type NameTest } from './name-prefilter.ts';
import { canonicalSpelling } from './canonical.ts';
import { anyOf, ruleRegex, type RuleRegex } from './rule-glob.ts';
import { SegmentSet } from './segment-set.ts';
import type { SourcedRule } from './types.ts';
import { NO_RULE, type PolicyDecision, type Risk, type RuleAction } from '../types.ts';

export interface CompiledRule extends SourcedRule {
  /** One of this extension's own lists: reviewed globs, matched as protective rules whatever their action. */
  readonly builtIn: boolean;
  readonly byName: boolean;
  readonly regex: RuleRegex;
  /** "secrets/**" also covers the folder "secrets" itself. */
  readonly folderRegex: RuleRegex | undefined;
  /** A path this glob matches, to test whether two rules can overlap. */
  readonly example: string;
  /** Case-sensitive and case-insensitive tests, compiled when first needed. */
  readonly tests: Partial<Record<'cs' | 'ci', (path: string) => boolean>>;
}

const nameOf = (path: string): string => path.slice(path.lastIndexOf('/') + 1);

/** Rules compiled so far, by rule object and source: every view of a policy (per folder, with links) shares the built-in lists' compiled globs. */
const compiledRules = new WeakMap<SourcedRule['rule'], Map<string, CompiledRule>>();

function compileOnce(sourced: SourcedRule): CompiledRule {
  const key = `${sourced.source}\u0000${sourced.reason ?? ''}`;
  let bySource = compiledRules.get(sourced.rule);
  if (bySource === undefined) {
    bySource = new Map();
    compiledRules.set(sourced.rule, bySource);
  }
  let compiled = bySource.get(key);
  if (compiled === undefined) {
    compiled = compile(sourced);
    bySource.set(key, compiled);
  }
  return compiled;
}

function compile({ rule, source, reason }: SourcedRule): CompiledRule {
  const builtIn = source === 'secret' || source === 'protected' || source === 'built-in';
  const folderGlob = rule.glob.endsWith('/**') ? rule.glob.slice(0, -3) : undefined;
  return {
    rule,
    source,
    ...(reason ? { reason } : {}),
    builtIn,
    byName: !rule.glob.includes('/'),
    regex: ruleRegex(rule.glob, builtIn),
    folderRegex: folderGlob ? ruleRegex(folderGlob, builtIn) : undefined,
    example:
      rule.glob
        .replace(/\*\*\/?/g, '')
        .replace(/[*?]/g, 'x')
        .replace(/\[[^\]]*\]/g, 'x')
        .replace(/\{([^,}]*)[^}]*\}/g, '$1') || 'x',
    tests: {},
  };
}

export function ruleTest(c: CompiledRule, ignoreCase: boolean): (path: string) => boolean {
  const key = ignoreCase ? 'ci' : 'cs';
  const known = c.tests[key];
  if (known) return known;
  const glob = anyOf([c.regex], ignoreCase);
  const folder = c.folderRegex ? anyOf([c.folderRegex], ignoreCase) : undefined;
  const test = c.byName
    ? (p: string) => glob(nameOf(p)) || (folder?.(p) ?? false)
    : (p: string) => glob(p) || (folder?.(p) ?? false);
  c.tests[key] = test;
  return test;
}

/**
 * Security: a rule that protects (built-in, or a person's ask/deny) matches whatever the case: on
 * the case-insensitive disks of macOS and Windows ".ENV" is ".env" and ".GIT/hooks" is ".git/hooks",
 * and on any disk "Server.PEM" holds a key. A person's allow rule stays exact, so it relaxes only
 * what it names.
 */
function protective(c: CompiledRule, action: RuleAction): boolean {
  return c.builtIn || action !== 'allow';
}

/**
 * Quick tests that one risk's rules might match a path (case-insensitive, so a superset): most
 * paths match no rule, and these say so. Only the rules that have an action for the risk count:
 * a search is judged by the read rules alone, not by the many write-only protected files.
 */
class RiskFilter {
  /** Whether a rule might match the name (last segment) of `path`, or its segment `[from, end)`. */
  readonly byName: NameTest;
  /** Path rules "**\/X/..." need a segment X. */
  readonly anywhere: SegmentSet;
  /** The other path rules, in one test, when there are any. */
  readonly otherPath: ((path: string) => boolean) | undefined;

  constructor(rules: readonly CompiledRule[]) {
    this.byName = namePrefilter(rules.filter((c) => c.byName).map((c) => ({ glob: c.rule.glob, regex: c.regex })));
    const segments = new Set<string>();
    const others: RuleRegex[] = [];
    for (const c of rules) {
      if (c.byName) continue;
      // Only for the host's RegExp, whose case-insensitive match never pairs a non-ASCII character with an ASCII one.
      const anywhere = c.regex.backtrackSafe ? /^\*\*\/([\x20-\x7e]+?)(?:\/|$)/.exec(c.rule.glob) : null;
      if (anywhere && !/[*?[\]{}()!\\]/.test(anywhere[1]!)) segments.add(anywhere[1]!.toLowerCase());
      else others.push(c.regex, ...(c.folderRegex ? [c.folderRegex] : []));
    }
    this.anywhere = new SegmentSet(segments);
    this.otherPath = others.length > 0 ? anyOf(others, true) : undefined;
  }

  byPath(path: string): boolean {
    return this.anywhere.inPath(path) || (this.otherPath?.(path) ?? false);
  }

  private lastBase: string | undefined;
  private lastBaseAnswer = false;

  /** `anywhere.inPath(base)`, remembered for the last folder: a search asks it of one folder for every result. */
  anywhereInBase(base: string): boolean {
    if (base !== this.lastBase) {
      this.lastBaseAnswer = this.anywhere.inPath(base);
      this.lastBase = base;
    }
    return this.lastBaseAnswer;
  }

  private lastClearBase: string | undefined;
  private lastClearBaseAnswer = false;

  /**
   * True only when no rule of this risk can match `relPath` (not "") nor any folder above it, below
   * the absolute folder `base`: no path rule outside the quick tests, a folder whose own path no rule
   * reaches, an ASCII path (no other spelling), no segment a name rule might match, and no segment a
   * "**\/X/..." rule needs. Quick tests in place, no string built: a search asks it of every result.
   */
  clear(relPath: string, base: string | undefined): boolean {
    if (this.otherPath !== undefined || (base !== undefined && !this.clearBase(base))) return false;
    if (!ASCII.test(relPath) || this.anywhere.inPath(relPath)) return false;
    let from = 0;
    for (;;) {
      const slash = relPath.indexOf('/', from);
      const end = slash === -1 ? relPath.length : slash;
      if (this.byName(relPath, from, end)) return false;
      if (slash === -1) return true;
      from = slash + 1;
    }
  }

  /** Whether `base` adds nothing for a rule to match (see `RuleList.decide`'s absolute path), remembered for the last folder. */
  private clearBase(base: string): boolean {
    if (base !== this.lastClearBase) {
      this.lastClearBaseAnswer = !this.anywhereInBase(base) && canonicalSpelling(base) === undefined;
      this.lastClearBase = base;
    }
    return this.lastClearBaseAnswer;
  }
}

// eslint-disable-next-line no-control-regex
const ASCII = /^[\u0000-\u007f]*$/;

/** `rel` below the absolute folder `base` (both in rule form). */
export function joinRuleForm(base: string, rel: string): string {
  return rel === '' ? base : base === '' ? rel : `${base}/${rel}`;
}

/** A list of rules where the last match wins, compiled once: rules are checked for every search result. */
export class RuleList {
  private readonly rules: readonly SourcedRule[];
  // Compiled on first use, not when the settings are read: the built-in lists' globs cost several
  // milliseconds to compile, which activation (in the extension host every extension shares) need not pay.
  private built:
    { readonly compiled: readonly CompiledRule[]; readonly filters: Readonly<Record<Risk, RiskFilter>> } | undefined;

  constructor(rules: readonly SourcedRule[]) {
    this.rules = rules;
  }

  get compiled(): readonly CompiledRule[] {
    return this.build().compiled;
  }

  private build(): {
    readonly compiled: readonly CompiledRule[];
    readonly filters: Readonly<Record<Risk, RiskFilter>>;
  } {
    if (this.built) return this.built;
    const compiled = this.rules.map(compileOnce);
    this.built = {
      compiled,
      filters: {
        read: new RiskFilter(compiled.filter((c) => c.rule.read !== undefined)),
        write: new RiskFilter(compiled.filter((c) => c.rule.write !== undefined)),
      },
    };
    return this.built;
  }

  /**
   * True only when `decide` gives no rule for `relPath` (not "") and for every folder above it,
   * with `base` as there and `absRel` the path itself; false means: ask `decide`.
   */
  clearOfRules(relPath: string, risk: Risk, base?: string): boolean {
    if (this.rules.length === 0) return true;
    return relPath !== '' && this.build().filters[risk].clear(relPath, base);
  }

  /**
   * `base`: the workspace folder's absolute path (rule form), when known: protective rules also
   * match the absolute path `base/absRel` (`absRel` is `relPath` unless the path is judged relative
   * to an outer folder). The absolute path is built only when a rule might match it.
   */
  decide(relPath: string, risk: Risk, base?: string, absRel = relPath): PolicyDecision {
    if (this.rules.length === 0) return NO_RULE;
    const { compiled, filters } = this.build();
    const filter = filters[risk];
    // Security: another spelling of the same name on a case-folding disk is the same file to the protective rules.
    const folded = canonicalSpelling(relPath);
    const mayMatch = (path: string): boolean => filter.byName(path) || filter.byPath(path);
    const relMatters = relPath !== '' && (mayMatch(relPath) || (folded !== undefined && mayMatch(folded)));
    let absolute: string | undefined;
    if (base !== undefined && (base !== '' || absRel !== '')) {
      // The absolute path ends with the relative one: it has the same name, and only its folder part adds segments.
      const mayMatchAbsolute =
        relMatters ||
        filter.anywhereInBase(base) ||
        (absRel === '' && filter.byName(base)) ||
        canonicalSpelling(base) !== undefined;
      if (mayMatchAbsolute) absolute = joinRuleForm(base, absRel);
      else if (filter.otherPath !== undefined) {
        const candidate = joinRuleForm(base, absRel);
        if (filter.otherPath(candidate)) absolute = candidate;
      }
    }
    if (!relMatters && absolute === undefined) return NO_RULE;
    const foldedAbsolute = absolute === undefined ? undefined : canonicalSpelling(absolute);
    let decision = NO_RULE;
    for (const c of compiled) {
      const action = c.rule[risk];
      if (action === undefined) continue;
      const strict = protective(c, action);
      const test = ruleTest(c, strict);
      const onRel = relMatters && (test(relPath) || (strict && folded !== undefined && test(folded)));
      const onAbsolute =
        strict && absolute !== undefined && (test(absolute) || (foldedAbsolute !== undefined && test(foldedAbsolute)));
      if (onRel || onAbsolute)
        decision = { action, rule: c.rule.glob, source: c.source, ...(c.reason ? { reason: c.reason } : {}) };
    }
    return decision;
  }
}
