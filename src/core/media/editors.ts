import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';

/** The host's open editors (VS Code's text documents); a headless host has none. */
export interface OpenEditors {
  /** The name the person sees on the editor holding unsaved changes to the file at `path`, if one does. */
  unsavedEditor(path: ModelPath): string | undefined;
}

/**
 * Security: a write under an editor with unsaved changes would leave the person's buffer out of step
 * with disk, and their next save would silently drop what was written (or the write, theirs).
 */
export function refuseUnsavedEditor(editors: OpenEditors | undefined, path: ModelPath, tool: string): void {
  const editor = editors?.unsavedEditor(path);
  if (editor === undefined) return;
  throw new SandboxError(
    'E_SANDBOX_CONFLICT',
    `"${path.display}" has unsaved changes in the open editor "${editor}", so ${tool} did not write it: that would put the file out of step with what the user is editing.`,
    `Ask the user to save or revert that editor first; if they save it, stage the file again (its content changed), otherwise call ${tool} again.`,
  );
}
