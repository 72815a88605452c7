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

/** The folders the tools may use, and the client's roots that had no part in choosing them. */
export interface NarrowedRoots {
  readonly roots: WorkspaceRoot[];
  /** Client roots that are no local folder, or lie outside every `--root` folder (and hold none). */
  readonly ignored: string[];
}

/**
 * The folders the tools may use once the client announced its roots: never wider than `--root`.
 * A client root inside a server root narrows it to that folder; a server root inside a client root
 * stays as it is; a client root outside every server root, or no local folder, is ignored. When
 * no client root is left (none announced, as the MCP Inspector does, or all ignored, as from a
 * client started in another folder), nothing is narrowed: the `--root` folders are served.
 */
export function narrowRoots(server: readonly WorkspaceRoot[], clientUris: readonly string[]): NarrowedRoots {
  const kept = new Set<string>();
  const ignored: string[] = [];
  for (const uri of clientUris) {
    const client = clientFolder(uri);
    let used = false;
    for (const root of server) {
      const own = root.localPath ?? root.address;
      if (client === undefined) break;
      if (within(own, client)) kept.add(own);
      else if (within(client, own)) kept.add(client);
      else continue;
      used = true;
    }
    if (!used) ignored.push(uri);
  }
  if (kept.size === 0) return { roots: [...server], ignored };
  return {
    roots: withDistinctNames(
      [...kept].map((path) => ({ name: nodePath.basename(path), address: path, localPath: path })),
    ),
    ignored,
  };
}
