import type { Session } from './session.ts';
import type { Tool } from '../contract/tool.ts';
import { TOOLS } from '../tools/index.ts';
import { TOOL_NAMES, type ToolName } from '../contract/names.ts';

export function isToolName(name: string): name is ToolName {
  return (TOOL_NAMES as readonly string[]).includes(name);
}

/** The tools this session's backends can serve: a tool with a missing capability is left out. */
export function availableTools(session: Session): Tool[] {
  return TOOL_NAMES.map((name): Tool => TOOLS[name]).filter((tool) =>
    tool.requires.every((c) => session.hasCapability(c)),
  );
}
