import type { CallOrigin, GateCall } from '../gate.ts';
import type { ModelPath } from '../paths.ts';
import type { Risk } from '../types.ts';
import type { CallContext, CallServices, DiskWrite, Tool, ToolOutcome } from '../contract/tool.ts';
import { validateInput } from '../contract/schema.ts';
import { protectedWriteGlobs } from '../shell/boundary.ts';
import { planBatch, type BatchPlan } from './batch-gate.ts';
import { checkOpenFolder, judge, risksOf, type Denial, type Judgement } from './steps.ts';
import type { Session } from './session.ts';

/**
 * A call validated, planned and judged by the policy, nothing touched yet: what the gate will be
 * asked. A host that shows it for confirmation (VS Code's chat) carries it to its run, so the call
 * that runs is the one the person confirmed, prepared once.
 */
export interface PreparedCall<R = unknown> {
  readonly tool: Tool<R>;
  readonly call: GateCall;
  /** The risks the policy judged the targets by: the tool's own, and `read` when a write also reads. */
  readonly risks: readonly Risk[];
  readonly paths: readonly ModelPath[];
  /** What the call writes to disk (`CallTargets.writes`). */
  readonly writes: readonly DiskWrite[];
  /** The first target a rule denies, with that rule and the risk it denies. */
  readonly denial: Denial | undefined;
  /** The policy's verdicts on the targets again, by the policy in force now. */
  rejudge(): Judgement;
  /**
   * A batch (`CallTargets.each`): each path judged alone. `call` names only the paths its one
   * confirmation covers; these are the others, each with its own summary: the ones a rule denies
   * (they fail alone, nobody is asked) and the ones an `ask` rule protects (each asked in its own modal).
   */
  readonly batch?: BatchPlan;
  execute(call: CallContext, services: CallServices): Promise<ToolOutcome<R>>;
}

/** Validates, plans (the tool's `targets`, once) and judges a call without touching the filesystem. */
export function prepare<R>(
  session: Session,
  tool: Tool<R>,
  raw: unknown,
  origin: CallOrigin = 'headless',
): PreparedCall<R> {
  const input = validateInput(tool.name, tool.inputSchema(session.declaration), raw);
  const prepared = tool.prepare(input, session);
  for (const path of prepared.targets.paths) checkOpenFolder(path, session.roots, tool.name);
  const risks = risksOf(tool.risk, prepared.targets);
  const policy = session.policy;
  const { targets, denial: ruled, denials } = judge(policy, prepared.targets, risks);
  const taint = prepared.targets.taint;
  // Security: bytes from a read-denied path stay denied whatever the target's own rules say.
  const denial =
    ruled ??
    (taint?.action === 'deny'
      ? { display: taint.from, rule: taint.rule, risk: 'read' as const, taintOf: targets[0]?.display ?? taint.from }
      : undefined);
  const each = prepared.targets.each;
  const rejudge = (): Judgement => judge(session.policy, prepared.targets, risks);
  const common = {
    tool,
    risks,
    paths: prepared.targets.paths,
    rejudge,
    writes: prepared.targets.writes ?? [],
    execute: (ctx: CallContext, services: CallServices) => prepared.execute(ctx, services),
  };
  if (each !== undefined && taint === undefined) {
    const { confirmed, batch } = planBatch(targets, denials, each, prepared.targets.summary);
    const call: GateCall = {
      tool: tool.name,
      origin,
      risk: tool.risk,
      summary: prepared.targets.summary,
      targets: confirmed,
      secret: false,
    };
    return { ...common, call, denial: undefined, batch };
  }
  // Security: lifting the protection of protected files is asked every time, naming what it lifts.
  const protectedWrites = prepared.targets.protectedWrites ? protectedWriteGlobs(policy) : undefined;
  const call: GateCall = {
    tool: tool.name,
    origin,
    risk: tool.risk,
    summary: prepared.targets.summary,
    targets,
    secret: taint !== undefined || protectedWrites !== undefined || targets.some((t) => t.action === 'ask'),
    ...(taint ? { taint: { from: taint.from, rule: taint.rule } } : {}),
    ...(protectedWrites ? { protectedWrites } : {}),
    ...(prepared.targets.writes?.length ? { writesDisk: true } : {}),
  };
  return { ...common, call, denial };
}
