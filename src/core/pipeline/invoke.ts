import { BugError, SandboxError, cancelled, isSandboxError, refused } from '../errors.ts';
import type { CallOrigin, Verdict } from '../gate.ts';
import { DEFAULT_PAGE, type PageBudget } from '../paging/budget.ts';
import type { ProgressReporter } from '../results/progress.ts';
import type { Tool, ToolOutcome } from '../contract/tool.ts';
import type { ToolName } from '../contract/names.ts';
import { TOOLS, type ToolResult } from '../tools/index.ts';
import { confirmEach } from './batch-gate.ts';
import { prepare, type PreparedCall } from './prepare.ts';
import { callContext, confirmRejudged, deniedBy } from './steps.ts';
import type { Session } from './session.ts';

/** How old a walk of the workspace's links a call that does not write to disk may be judged with. */
const LINKS_MAX_AGE_MS = 5_000;

/** What a host passes along with one call. */
export interface InvokeOptions {
  readonly signal?: AbortSignal;
  /** Where the call comes from (default: `headless`); the gate decides by it. */
  readonly origin?: CallOrigin;
  /**
   * The call as it was prepared for the person's confirmation (VS Code's chat confirmation), carried
   * to its run: it is not validated, planned or judged again, so what runs is what was confirmed
   * (undo_save of "the latest save" undoes the save the person was shown, whatever landed since).
   * The links walked since, the gate, and the policy's verdicts on the real paths still apply.
   */
  readonly prepared?: PreparedCall;
  /** One page of result for the model (default: 50 KiB); the host's token budget makes it smaller. */
  readonly page?: PageBudget;
  /** Where a long call reports how far it got (throttled by the caller as it needs). */
  readonly progress?: ProgressReporter;
}

/** Runs the tool `name` through the session's pipeline, for every host; the outcome carries that tool's result type. */
export function invoke<N extends ToolName>(
  session: Session,
  name: N,
  input: unknown,
  options: InvokeOptions = {},
): Promise<ToolOutcome<ToolResult<N>>> {
  return invokeTool(session, TOOLS[name] as Tool<ToolResult<N>>, input, options);
}

/** A call that cannot run here is refused before anyone is asked to approve it. */
function checkAvailable(session: Session, tool: Tool): void {
  const missing = tool.requires.filter((c) => !session.hasCapability(c));
  if (missing.includes('writable')) {
    throw refused(
      `${tool.name} is not available here: this workspace is read-only or not trusted.`,
      `Tell the user what you wanted to change instead.`,
    );
  }
  if (missing.length > 0) {
    const why = missing.includes('ripgrep')
      ? ': ripgrep was not found'
      : missing.includes('search')
        ? ': ripgrep was not found, or the workspace is not on a local disk'
        : missing.includes('shell')
          ? ': this host runs no commands, or the workspace is not on a local disk'
          : '';
    throw new SandboxError(
      'E_SANDBOX_UNSUPPORTED',
      `${tool.name} is not available in this workspace (it needs ${missing.join(', ')}${why}).`,
      `Use list_directory and open_file instead.`,
    );
  }
}

/**
 * Runs one call of `tool` down the pipeline: validate → policy → gate → translate path → open.
 * Throws a SandboxError on refusal or failure; every call, however it ends, is in the audit trail.
 */
export async function invokeTool<R>(
  session: Session,
  tool: Tool<R>,
  raw: unknown,
  options: InvokeOptions = {},
): Promise<ToolOutcome<R>> {
  const signal = options.signal ?? new AbortController().signal;
  const origin = options.origin ?? 'headless';
  const started = session.clock.now();
  let prepared: PreparedCall<R> | undefined;
  let verdict: Verdict | undefined;
  try {
    checkAvailable(session, tool);
    prepared =
      options.prepared === undefined ? prepare(session, tool, raw, origin) : carried(options.prepared, tool, origin);
    if (prepared.denial !== undefined) {
      verdict = { allow: false, decidedBy: 'rule' };
      throw deniedBy(tool.name, prepared.denial, session.vocabulary);
    }
    if (signal.aborted) throw cancelled();
    // A batch whose every path is denied or asked alone has nothing for one confirmation to cover.
    verdict =
      prepared.batch && prepared.call.targets.length === 0
        ? { allow: true, decidedBy: 'rule' }
        : await session.gate(prepared.call, signal);
    if (!verdict.allow) {
      const target = prepared.call.targets[0]?.display;
      throw verdict.reason
        ? refused(verdict.reason.what, verdict.reason.next)
        : refused(
            `The user declined ${tool.name}${target ? ` on "${target}"` : ''}.`,
            'Do not retry the same call; ask the user what they want instead.',
          );
    }
    if (signal.aborted) throw cancelled();
    // A call that writes to disk is judged with the links as they are now; others with a recent walk.
    // A command's writes are held by the kernel, which follows links itself: its cwd is judged as a read.
    // Links anywhere in the folders whose rules judge the roots count (a narrowed root's file may be `.env` above it).
    await session.links.refresh(
      session.ruleRoots,
      tool.needs.includes('saveGuard') && tool.risk !== 'exec' ? 0 : LINKS_MAX_AGE_MS,
    );
    const refusals = prepared.batch
      ? await confirmEach(session.gate, prepared.call, prepared.batch, prepared.rejudge(), signal, session.vocabulary)
      : undefined;
    if (!prepared.batch)
      await confirmRejudged(session.gate, tool.name, prepared.call, prepared.rejudge(), signal, session.vocabulary);
    if (signal.aborted) throw cancelled();
    const ports = {
      fs: session.fs,
      gate: session.gate,
      policy: () => session.policy,
      roots: () => session.roots,
      environment: session.environment,
    };
    const ctx = callContext(
      ports,
      {
        toolName: tool.name,
        call: prepared.call,
        risks: prepared.risks,
        paths: prepared.paths,
        ...(refusals ? { refusals } : {}),
      },
      signal,
      options.page ?? DEFAULT_PAGE,
      options.progress,
    );
    const outcome = await prepared.execute(ctx, session.services);
    audit(session, tool, prepared, verdict, started, `ok ${Buffer.byteLength(outcome.text)} bytes`);
    return outcome;
  } catch (e) {
    audit(
      session,
      tool,
      prepared,
      verdict,
      started,
      isSandboxError(e) ? e.code : 'E_BUG',
      prepared === undefined ? 'invalid' : undefined,
    );
    throw e;
  }
}

/** A call prepared earlier (for its confirmation), now run from `origin`. */
function carried<R>(prepared: PreparedCall, tool: Tool<R>, origin: CallOrigin): PreparedCall<R> {
  if (prepared.tool !== tool)
    throw new BugError(`a call prepared for ${prepared.tool.name} was carried to a call of ${tool.name}`);
  // The same tool object, so the same result type.
  return { ...(prepared as PreparedCall<R>), call: { ...prepared.call, origin } };
}

function audit(
  session: Session,
  tool: Tool,
  prepared: PreparedCall | undefined,
  verdict: Verdict | undefined,
  started: number,
  outcome: string,
  forced?: 'invalid',
): void {
  session.log.audit({
    tool: tool.name,
    target: prepared?.call.targets.map((t) => t.display).join(', ') ?? '',
    verdict: forced ?? (verdict?.allow ? 'allowed' : 'refused'),
    decidedBy: verdict?.decidedBy ?? (forced ? 'validation' : 'rule'),
    durationMs: session.clock.now() - started,
    outcome,
  });
}
