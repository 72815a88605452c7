import * as vscode from 'vscode';
import type { Answer, ConfirmRequest, Decider } from './gate.ts';

/** The environment variable that scripts the modal decider; honoured only in the extension test host. */
export const TEST_DECIDER_ENV = 'WORKSPACE_TOOLS_TEST_DECIDER';

/**
 * Test-only decider: answers modal confirmations from a script instead of a person and records
 * what the person would have been asked. Active only when the extension runs under a test runner
 * (ExtensionMode.Test) AND the environment variable is set; never in a normal install.
 */
export class ScriptedDecider implements Decider {
  readonly asked: { message: string; detail: string; tool: string; secret: boolean }[] = [];
  answer: Answer;

  constructor(answer: Answer) {
    this.answer = answer;
  }

  async confirm(request: ConfirmRequest): Promise<Answer> {
    this.asked.push({
      message: request.message,
      detail: request.detail,
      tool: request.call.tool,
      secret: request.call.secret,
    });
    return this.answer;
  }
}

export function scriptedDeciderFromEnvironment(mode: vscode.ExtensionMode): ScriptedDecider | undefined {
  if (mode !== vscode.ExtensionMode.Test) return undefined;
  const value = process.env[TEST_DECIDER_ENV];
  if (value === 'approve') return new ScriptedDecider('allow-once');
  if (value === 'deny') return new ScriptedDecider('decline');
  return undefined;
}
