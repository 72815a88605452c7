import { cancelled, refused, type SandboxError } from '../errors.ts';
import { askedFileKind, type GateCall, type GateTarget } from '../gate.ts';
import { deniedBy, type Denial, type Judgement } from './steps.ts';
import type { HostVocabulary } from '../vocabulary.ts';
import type { Gate } from '../ports.ts';

/**
 * A batch call (`CallTargets.each`): each path judged alone. The call's one confirmation names only
 * the paths no rule denies or asks about; these are the others, each with its own summary: the ones
 * a rule denies (they fail alone, nobody is asked) and the ones an `ask` rule protects (each asked in
 * its own modal).
 */
export interface BatchPlan {
  /** Every path's verdict and own summary, in the order of the call's paths. */
  readonly entries: readonly {
    readonly target: GateTarget;
    readonly summary: string;
    readonly denial: Denial | undefined;
  }[];
  readonly denied: readonly GateTarget[];
  readonly asked: readonly GateTarget[];
}

/** Security: a batch's one confirmation covers only the paths no rule denies or asks about. */
export function planBatch(
  targets: readonly GateTarget[],
  denials: Judgement['denials'],
  each: readonly string[],
  summary: string,
): { confirmed: GateTarget[]; batch: BatchPlan } {
  const entries = targets.map((target, i) => ({ target, summary: each[i] ?? summary, denial: denials[i] }));
  const confirmed = targets.filter((t) => t.action !== 'deny' && t.action !== 'ask');
  return {
    confirmed,
    batch: {
      entries,
      denied: targets.filter((t) => t.action === 'deny'),
      asked: targets.filter((t) => t.action === 'ask'),
    },
  };
}

/**
 * Security: a batch's paths judged alone, again with the links walked since the confirmation
 * (`again`): a denied path is refused alone; a path an `ask` rule protects (by its name or, now, by a
 * link's) is asked in a modal of its own, every time, naming it alone. Returns the entries refused, by index.
 */
export async function confirmEach(
  gate: Gate,
  call: GateCall,
  batch: BatchPlan,
  again: Judgement,
  signal: AbortSignal,
  words: HostVocabulary,
): Promise<Map<number, SandboxError>> {
  const refusals = new Map<number, SandboxError>();
  const answered = new Map<string, SandboxError | undefined>();
  for (const [i, entry] of batch.entries.entries()) {
    const target = again.targets[i] ?? entry.target;
    const denial = again.denials[i] ?? entry.denial;
    if (denial !== undefined) {
      refusals.set(i, deniedBy(call.tool, denial, words));
      continue;
    }
    if (target.action !== 'ask' && entry.target.action !== 'ask') continue;
    // The same path twice in one batch is asked about once.
    if (!answered.has(target.display)) {
      if (signal.aborted) throw cancelled();
      const asked = target.action === 'ask' ? target : entry.target;
      const verdict = await gate(
        {
          tool: call.tool,
          origin: call.origin,
          risk: call.risk,
          summary: entry.summary,
          targets: [asked],
          secret: true,
        },
        signal,
      );
      answered.set(
        target.display,
        verdict.allow
          ? undefined
          : verdict.reason
            ? refused(verdict.reason.what, verdict.reason.next)
            : refused(
                `The user declined ${call.tool} on ${askedFileKind(asked)} "${asked.display}" (the rule "${asked.rule ?? ''}").`,
                'Do not retry it or look for its contents another way; ask the user for what you need.',
              ),
      );
    }
    const declined = answered.get(target.display);
    if (declined) refusals.set(i, declined);
  }
  return refusals;
}
