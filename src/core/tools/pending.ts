import { SandboxError } from '../errors.ts';

/** Placeholder run for a tool whose manifest entry exists before its implementation. */
export function notImplemented(name: string): () => Promise<never> {
  return () => Promise.reject(new SandboxError('E_SANDBOX_UNSUPPORTED', `${name} is not available in this build yet. Use another tool.`));
}
