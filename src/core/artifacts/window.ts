import { isSandboxError } from '../errors.ts';
import { readArtifact } from './page.ts';
import type { ArtifactStore } from './store.ts';
import type { ArtifactHandle, ArtifactPage } from './types.ts';

/** The page an open call asks for with its handle: artifact_read's `offset` and `limit`. */
export interface PageRequest {
  readonly offset?: number;
  readonly limit?: number;
}

/**
 * The first look an open call returns beside its handle: the page asked for, or why there is none
 * (a binary file, an offset past the end), narrated; the handle stays valid either way.
 */
export type OpenWindow =
  | {
      readonly page: ArtifactPage;
      /** Cut short so that several files' pages share one result page. */ readonly cutToShare?: true;
    }
  | { readonly pageError: string };

/** Whether an open call asked for a page (without `offset` and `limit` it returns the handle alone, as before). */
export function asksForPage(request: PageRequest): boolean {
  return request.offset !== undefined || request.limit !== undefined;
}

/** Only the fields given, as artifact_read takes them. */
export function pageRequestOf(request: PageRequest): PageRequest {
  return {
    ...(request.offset !== undefined ? { offset: request.offset } : {}),
    ...(request.limit !== undefined ? { limit: request.limit } : {}),
  };
}

/** The page of a just-opened artifact, read exactly as artifact_read reads it. */
export async function windowOn(
  store: ArtifactStore,
  handle: ArtifactHandle,
  request: PageRequest,
  signal: AbortSignal,
): Promise<OpenWindow> {
  try {
    return { page: await readArtifact(store, handle.callId, pageRequestOf(request), signal) };
  } catch (e) {
    // The file is open all the same: its handle is returned, with why this page is not.
    if (isSandboxError(e) && (e.code === 'E_SANDBOX_BINARY' || e.code === 'E_SANDBOX_INVALID_INPUT'))
      return { pageError: e.message };
    throw e;
  }
}

/** `windowOn` when the call asked for a page; nothing otherwise. */
export async function windowIfAsked(
  store: ArtifactStore,
  handle: ArtifactHandle,
  request: PageRequest,
  signal: AbortSignal,
): Promise<{ readonly window?: OpenWindow }> {
  return asksForPage(request) ? { window: await windowOn(store, handle, request, signal) } : {};
}
