/** Codes the model can see. Each names a class of outcome the model can act on. */
export type SandboxCode =
  | 'E_SANDBOX_REFUSED'
  | 'E_SANDBOX_INVALID_INPUT'
  | 'E_SANDBOX_NOT_FOUND'
  | 'E_SANDBOX_CONFLICT'
  | 'E_SANDBOX_TOO_LARGE'
  | 'E_SANDBOX_BINARY'
  | 'E_SANDBOX_IO'
  | 'E_SANDBOX_UNSUPPORTED'
  | 'E_SANDBOX_CANCELLED'
  | 'E_SANDBOX_UNAVAILABLE'
  | 'E_READER_NOT_DESCRIBABLE';

/** A message for the model in two parts: what happened, and what to do next ("" when nothing is to be done). */
export interface Narration {
  readonly what: string;
  readonly next: string;
}

/**
 * A failure written for the model: `message` says what happened and what to do next, in one or two
 * sentences, with the actual values. The person sees `what` alone (the next step is the model's).
 */
export class SandboxError extends Error {
  readonly code: SandboxCode;
  readonly what: string;
  readonly next: string;
  constructor(code: SandboxCode, what: string, next: string, options?: { cause?: unknown }) {
    super(next === '' ? what : `${what} ${next}`, options);
    this.name = 'SandboxError';
    this.code = code;
    this.what = what;
    this.next = next;
  }
  toJSON(): { code: SandboxCode; message: string } {
    return { code: this.code, message: this.message };
  }
}

/** A programmer fault: never shown to the model as a sandbox outcome. */
export class BugError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'BugError';
  }
}

export function isSandboxError(e: unknown): e is SandboxError {
  return e instanceof SandboxError;
}

export function cancelled(): SandboxError {
  return new SandboxError(
    'E_SANDBOX_CANCELLED',
    'The call was cancelled before it finished; nothing was changed.',
    'Ask again if it is still needed.',
  );
}

/** Cancellation is recognised by this predicate, never treated as a failure. */
export function isCancellation(e: unknown): boolean {
  return (
    (e instanceof SandboxError && e.code === 'E_SANDBOX_CANCELLED') || (e instanceof Error && e.name === 'AbortError')
  );
}

export function refused(what: string, next: string): SandboxError {
  return new SandboxError('E_SANDBOX_REFUSED', what, next);
}

export function invalidInput(what: string, next: string): SandboxError {
  return new SandboxError('E_SANDBOX_INVALID_INPUT', what, next);
}

/** The `code` of a Node or VS Code filesystem error (ENOENT, FileNotFound, ...), or "". */
export function errnoCode(e: unknown): string {
  return typeof e === 'object' && e !== null && 'code' in e ? String((e as { code: unknown }).code) : '';
}

/** Maps a Node/VS Code filesystem error to a narrated sandbox error about `displayPath`. */
export function fromFsError(e: unknown, displayPath: string, verb: string): SandboxError {
  if (e instanceof SandboxError) return e;
  switch (errnoCode(e)) {
    case 'ENOENT':
    case 'FileNotFound':
      return new SandboxError(
        'E_SANDBOX_NOT_FOUND',
        `"${displayPath}" does not exist.`,
        `Check the path with find_files or list_directory; paths are relative to the workspace folder.`,
        { cause: e },
      );
    case 'EISDIR':
    case 'FileIsADirectory':
      return new SandboxError(
        'E_SANDBOX_INVALID_INPUT',
        `"${displayPath}" is a directory, not a file.`,
        `Use list_directory to see what it holds.`,
        { cause: e },
      );
    case 'ENOTDIR':
    case 'FileNotADirectory':
      return new SandboxError(
        'E_SANDBOX_INVALID_INPUT',
        `A component of "${displayPath}" is a file, not a directory.`,
        `Check the path with list_directory.`,
        { cause: e },
      );
    case 'EACCES':
    case 'EPERM':
    case 'NoPermissions':
      return new SandboxError(
        'E_SANDBOX_IO',
        `Permission denied while trying to ${verb} "${displayPath}". The file is not readable or writable by the editor; ask the user to check its permissions.`,
        '',
        { cause: e },
      );
    case 'ENOSPC':
    case 'EDQUOT':
      return new SandboxError(
        'E_SANDBOX_IO',
        `The disk is full while trying to ${verb} "${displayPath}"; nothing was changed.`,
        `Ask the user to free space, then retry.`,
        { cause: e },
      );
    case 'ELOOP':
      return new SandboxError(
        'E_SANDBOX_REFUSED',
        `"${displayPath}" goes through a symbolic link loop; it cannot be opened.`,
        `Use a path without links.`,
        { cause: e },
      );
    default: {
      const reason = e instanceof Error ? e.message : String(e);
      return new SandboxError(
        'E_SANDBOX_IO',
        `Could not ${verb} "${displayPath}": ${reason}.`,
        `Retry once; if it fails again, tell the user.`,
        { cause: e },
      );
    }
  }
}
