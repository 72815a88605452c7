import { SandboxError } from '../errors.ts';
import type { ModelPath } from '../paths.ts';
import type { Clock, WorkspaceFs } from '../ports.ts';

export interface ArtifactStoreOptions {
  readonly fs: WorkspaceFs;
  /** Private folder for spool files. */
  readonly dir: string;
  readonly clock: Clock;
  readonly budgetBytes: () => number;
  readonly nonStreamingMaxBytes: () => number;
}

/** Spooled, line-indexed snapshots of files (issue 4 fills this in). */
export class ArtifactStore {
  readonly options: ArtifactStoreOptions;
  constructor(options: ArtifactStoreOptions) {
    this.options = options;
  }
  /** The path an artifact was opened from, for the gate (pure: no disk I/O). */
  target(callId: string): ModelPath {
    throw new SandboxError('E_SANDBOX_NOT_FOUND', `No artifact has callId "${callId}" (it may have been evicted). Open the file again with open_file.`);
  }
  async dispose(): Promise<void> {}
}
