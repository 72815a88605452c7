import type { Session } from './session.ts';
import type { Tool } from './tool.ts';
import { TOOLS } from './tools/index.ts';
import { TOOL_NAMES, type ToolName } from './tools/names.ts';

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The tools this session's backends can serve: a tool with a missing capability is left out. */
export function availableTools(session: Session): Tool[] {
  return TOOL_NAMES.map((name) => TOOLS[name]).filter((tool) => tool.requires.every((c) => session.hasCapability(c)));
}

/** Why a tool is not available in this session, or undefined when it is. */
export function unavailableReason(session: Session, tool: Tool): string | undefined {
  const missing = tool.requires.filter((c) => !session.hasCapability(c));
  return missing.length ? `${tool.name} needs ${missing.join(', ')}, which this workspace does not offer` : undefined;
}
