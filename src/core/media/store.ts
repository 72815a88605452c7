import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock } from '../ports.ts';

export interface MediaStoreOptions {
  readonly clock: Clock;
  readonly budgetBytes: () => number;
}

/** In-memory staged versions of files (issue 6 fills this in). */
export class MediaStore {
  readonly options: MediaStoreOptions;
  constructor(options: MediaStoreOptions) {
    this.options = options;
  }
  /** The path a media was staged for, for the gate (pure). */
  target(mediaId: string): ModelPath {
    throw new SandboxError('E_SANDBOX_NOT_FOUND', `No staged media has id "${mediaId}". Call list_media to see the unsaved ones, or stage the file again.`);
  }
  clear(): void {}
}
