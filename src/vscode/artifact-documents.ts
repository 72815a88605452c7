import * as vscode from 'vscode';
import { isSandboxError } from '../core/errors.ts';
import type { ArtifactStore } from '../core/artifacts/store.ts';
import type { ArtifactHandle } from '../core/artifacts/types.ts';
import { readArtifact, readArtifactText } from '../core/artifacts/page.ts';

export const ARTIFACT_SCHEME = 'artifact';
/** Larger artifacts show their first page in the editor; the model pages the rest. */
const DOCUMENT_MAX_BYTES = 16 * 1024 * 1024;

/**
 * `artifact:/[<callId>]/<display path>?<callId>`: the snapshot the model reads, shown read-only. The
 * first segment keeps the tab's description and tooltip from passing for the live file.
 */
export function artifactUri(handle: Pick<ArtifactHandle, 'callId' | 'path'>): vscode.Uri {
  return vscode.Uri.from({ scheme: ARTIFACT_SCHEME, path: `/[${handle.callId}]/${handle.path}`, query: handle.callId });
}

/** Serves artifacts as read-only documents: exactly the bytes the model pages, not the live file. */
export class ArtifactDocuments implements vscode.TextDocumentContentProvider {
  private readonly store: ArtifactStore;

  constructor(store: ArtifactStore) {
    this.store = store;
  }

  async provideTextDocumentContent(uri: vscode.Uri): Promise<string> {
    const callId = uri.query;
    try {
      const info = this.store.get(callId);
      if (info.binary)
        return `[${info.path} is binary (${info.bytes} bytes): artifact_grep with literal: true still searches it.]`;
      if (info.bytes <= DOCUMENT_MAX_BYTES) return await readArtifactText(this.store, callId, DOCUMENT_MAX_BYTES);
      const page = await readArtifact(this.store, callId, { offset: 1 });
      return `${page.lines.map((l) => l.text).join('\n')}\n\n[${info.path}: showing lines 1-${page.endLine} of ${info.lines}; the artifact is ${info.bytes} bytes.]`;
    } catch (e) {
      if (isSandboxError(e)) return `[${e.message}]`;
      throw e;
    }
  }
}

export function registerArtifactDocuments(store: ArtifactStore): vscode.Disposable {
  return vscode.workspace.registerTextDocumentContentProvider(ARTIFACT_SCHEME, new ArtifactDocuments(store));
}
