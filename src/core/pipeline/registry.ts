import type { CallOrigin } from '../gate.ts';
import type { PageBudget } from '../results/budget.ts';
import type { ProgressReporter } from '../results/progress.ts';
import type { Session } from './session.ts';
import type { Tool, ToolOutcome } from '../contract/tool.ts';
import { TOOLS, type ToolResult } from '../tools/index.ts';
import { TOOL_NAMES, type ToolName } from '../contract/names.ts';

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The tools this session's backends can serve: a tool with a missing capability is left out. */
export function availableTools(session: Session): Tool[] {
  return TOOL_NAMES.map((name): Tool => TOOLS[name]).filter((tool) => tool.requires.every((c) => session.hasCapability(c)));
}

/** How a host makes one call by name. */
export interface CallOptions {
  readonly signal?: AbortSignal;
  readonly origin?: CallOrigin;
  /** One page of result for the model (default: 50 KiB). */
  readonly page?: PageBudget;
  /** Where a long call reports how far it got. */
  readonly progress?: ProgressReporter;
}

/** Runs the tool `name` through the session's pipeline; the outcome carries that tool's result type. */
export function invoke<N extends ToolName>(session: Session, name: N, input: unknown, options: CallOptions = {}): Promise<ToolOutcome<ToolResult<N>>> {
  return session.invoke(TOOLS[name], input, options.signal, options.origin, { ...(options.page ? { page: options.page } : {}), ...(options.progress ? { progress: options.progress } : {}) });
}
