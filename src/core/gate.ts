import type { RuleAction, RuleSource, ToolRisk } from './types.ts';
import type { Narration } from './errors.ts';

/** One path a call will touch, as the decider sees it (before any I/O). */
export interface GateTarget {
  /** As the model and the person see it (folder-prefixed in multi-root). */
  readonly display: string;
  /** The policy's verdict for this path: `default` = no rule matched. */
  readonly action: RuleAction | 'default';
  readonly rule?: string;
  /** Which list the deciding rule belongs to (built-in secret or protected list, user or workspace settings). */
  readonly source?: RuleSource;
  /** Why a built-in rule exists, for the person. */
  readonly reason?: string;
  /**
   * Set (after the first approval, once the path was checked on disk) when the file has this many
   * names (hard links): one of the others may be protected, so the person is told and asked again.
   */
  readonly links?: number;
}

/**
 * Where a call comes from. `chat`: VS Code already showed its own confirmation (or the person
 * auto-approved the tool). `api`: another extension invoked the tool outside a chat turn, so nobody
 * has confirmed anything yet. `unprepared`: VS Code ran a call no confirmation was prepared for
 * (its preparation failed, or was for another chat), so nothing was shown to anyone.
 * `palette`: the person ran a command. `headless`: CLI or tests.
 */
export type CallOrigin = 'chat' | 'api' | 'unprepared' | 'palette' | 'headless';

export interface GateCall {
  readonly tool: string;
  readonly origin: CallOrigin;
  readonly risk: ToolRisk;
  /** One line: what the call does, e.g. `search "TODO" in src`. */
  readonly summary: string;
  readonly targets: readonly GateTarget[];
  /**
   * True when any target matched an `ask` rule (a secret, a protected file, or the person's own
   * ask rule), `taint` is set, or a target has several names (`links`): the decider must ask the
   * person every time, whatever VS Code auto-approves or a rule allows, and never remember the answer.
   */
  readonly secret: boolean;
  /**
   * A command allowed to write protected files (`allow_protected_writes`): the globs whose files
   * are applied when it ends instead of staged for review. Asked every time (`secret` is set), never remembered.
   */
  readonly protectedWrites?: readonly string[];
  /** A call on bytes staged from a protected path (a save or a patch): where they came from (asked every time, naming both). */
  readonly taint?: { readonly from: string; readonly rule: string };
  /** The call writes to disk (a save or an undo), rather than staging in memory. */
  readonly writesDisk?: boolean;
}

/**
 * Security: bytes that came from a path the read rules protect (`ask` or `deny`): a stage of that
 * path, or the previous bytes an undo put back. Every call that can reveal them is judged by that
 * rule: `deny` refuses it, `ask` asks the person every time.
 */
export interface ReadTaint {
  /** The protected path they came from, as displayed. */
  readonly from: string;
  /** The rule that protects it. */
  readonly rule: string;
  readonly action: 'ask' | 'deny';
}

/** The read rule protecting a path (`ask` or `deny`). */
export type ReadProtection = Omit<ReadTaint, 'from'>;

export type DecidedBy = 'person' | 'rule' | 'auto-approval' | 'cli' | 'test';

export interface Verdict {
  readonly allow: boolean;
  readonly decidedBy: DecidedBy;
  /** For a refusal: why, shown to the model (`what` also to the person). */
  readonly reason?: Narration;
}

/** What an asked file is, in a refusal: a secret is not a protected file (README's two kinds), and a person's own ask rule is neither. */
export function askedFileKind(target: Pick<GateTarget, 'source'>): string {
  return target.source === 'secret'
    ? 'the secret file'
    : target.source === 'protected'
      ? 'the protected file'
      : 'the file';
}

/** Why a call the person declined did not run, for the model: a protected file is not to be sought another way. */
export function declinedReason(call: Pick<GateCall, 'tool' | 'targets'>): Narration {
  const secret = call.targets.find((t) => t.action === 'ask');
  return secret
    ? {
        what: `The user declined ${call.tool} on ${askedFileKind(secret)} "${secret.display}".`,
        next: 'Do not retry or look for its contents another way; ask the user for what you need.',
      }
    : {
        what: `The user declined ${call.tool} on ${call.targets.map((t) => `"${t.display}"`).join(', ') || 'the workspace'}.`,
        next: 'Do not retry the same call; ask the user what they want instead.',
      };
}

/**
 * Why the person must be asked about a call every time, whatever a host auto-approves, remembers or
 * a rule allows. Decided here, once, in one order (the first that holds): bytes staged from a
 * protected path, a command lifting the protection of protected files, a file with several names,
 * a target an `ask` rule covers. Hosts render it and never decide it again.
 */
export type AskedBecause =
  | { readonly kind: 'taint'; readonly from: string; readonly rule: string }
  | { readonly kind: 'protected-writes'; readonly globs: readonly string[] }
  | { readonly kind: 'links'; readonly target: GateTarget; readonly links: number }
  | { readonly kind: 'rule'; readonly target: GateTarget }
  /** Flagged secret by the pipeline with none of the above named: asked, saying only that. */
  | { readonly kind: 'secret' };

/** Why `call` must be asked every time; undefined when nothing requires it (a host may then auto-approve or remember). */
export function askedEveryTime(call: GateCall): AskedBecause | undefined {
  if (call.taint) return { kind: 'taint', from: call.taint.from, rule: call.taint.rule };
  if (call.protectedWrites) return { kind: 'protected-writes', globs: call.protectedWrites };
  const linked = call.targets.find((t) => (t.links ?? 1) > 1);
  if (linked) return { kind: 'links', target: linked, links: linked.links ?? 1 };
  const asked = call.targets.find((t) => t.action === 'ask');
  if (asked) return { kind: 'rule', target: asked };
  return call.secret ? { kind: 'secret' } : undefined;
}

/**
 * The rules alone allow `call`: nothing asks every time, and an allow rule covers every target. An
 * allow rule is about reading or writing a path, never about running a command there.
 */
export function allowedByRules(call: GateCall): boolean {
  return (
    askedEveryTime(call) === undefined &&
    call.risk !== 'exec' &&
    call.targets.length > 0 &&
    call.targets.every((t) => t.action === 'allow')
  );
}

/** The kind of rule that asks about a target, as a refusal names it: "secret", "protected-file" or "ask". */
export function askRuleKind(target: Pick<GateTarget, 'source'>): string {
  return target.source === 'protected' ? 'protected-file' : target.source === 'secret' ? 'secret' : 'ask';
}
