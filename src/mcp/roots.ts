import { realpathSync } from 'node:fs';
import * as nodePath from 'node:path';
import { fileURLToPath } from 'node:url';
import { withDistinctNames, type WorkspaceRoot } from '../core/paths.ts';

/** `inner` is `outer` or a folder inside it (both real paths). */
function within(inner: string, outer: string): boolean {
  const rel = nodePath.relative(outer, inner);
  return rel === '' || (!rel.startsWith('..') && !nodePath.isAbsolute(rel));
}

/** A client root's real path, or undefined when it is not a local folder that exists. */
function clientFolder(uri: string): string | undefined {
  try {
    return realpathSync(fileURLToPath(uri));
  } catch {
    return undefined;
  }
}

/**
 * The folders the tools may use once the client announced its roots: never wider than `--root`.
 * A client root inside a server root narrows it to that folder; a server root inside a client root
 * stays as it is; anything else is dropped. A client root that is no local folder narrows to nothing.
 */
export function narrowRoots(server: readonly WorkspaceRoot[], clientUris: readonly string[]): WorkspaceRoot[] {
  const client = clientUris.map(clientFolder).filter((p): p is string => p !== undefined);
  const kept = new Set<string>();
  for (const root of server) {
    const own = root.localPath ?? root.address;
    if (client.some((c) => within(own, c))) {
      kept.add(own);
      continue;
    }
    for (const c of client) if (within(c, own)) kept.add(c);
  }
  return withDistinctNames([...kept].map((path) => ({ name: nodePath.basename(path), address: path, localPath: path })));
}
