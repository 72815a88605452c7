import { isSandboxError } from '../errors.ts';

/** A failed call as every host gives it back to the model (chat, CLI, MCP): the one mapping of an error to a result. */
export interface CallFailure {
  /** `E_SANDBOX_*`, or `E_INTERNAL` for a failure nobody narrated (a bug). */
  readonly code: string;
  readonly message: string;
  /** What the model reads: the code leads the message. */
  readonly text: string;
  /** The model's arguments were wrong, and it should fix them and call again. */
  readonly invalidInput: boolean;
  /** Not a narrated failure: a bug, which a host may also report as its own. */
  readonly internal: boolean;
}

export function callFailure(e: unknown): CallFailure {
  if (isSandboxError(e))
    return {
      code: e.code,
      message: e.message,
      text: `${e.code}: ${e.message}`,
      invalidInput: e.code === 'E_SANDBOX_INVALID_INPUT',
      internal: false,
    };
  const message = e instanceof Error ? e.message : String(e);
  return { code: 'E_INTERNAL', message, text: `E_INTERNAL: ${message}`, invalidInput: false, internal: true };
}
