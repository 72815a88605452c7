import * as nodePath from 'node:path';
import { withDistinctNames } from '../paths.ts';
import { fsLister } from '../list/fs-lister.ts';
import { resolvedFs } from '../fs/resolved-fs.ts';
import { ArtifactStore } from '../artifacts/store.ts';
import { MediaStore } from '../media/store.ts';
import { SaveHistory } from '../media/history.ts';
import { SetJournal } from '../media/journal.ts';
import { SaveGuard } from '../media/save-guard.ts';
import { journalFolder, privateStateDir } from '../state-dir.ts';
import { LinkCache } from '../links/walk.ts';
import { VerdictMemo } from '../shell/boundary.ts';
import { LayerCheck } from '../shell/layer.ts';
import { SessionHosts } from '../shell/hosts.ts';
import { VSCODE_VOCABULARY } from '../vocabulary.ts';
import { DEFAULT_LIMITS, type SessionLimits, type SessionOptions } from './session-options.ts';
import { Session } from './session.ts';

/**
 * The one place a session is built, for every host (VS Code, the CLI, the MCP server) and the tests:
 * from the host's ports and settings, the stores that live across calls (artifacts, media, saves and
 * their journal, the save guard, the links), and what the shell keeps between commands.
 */
export function assemble(options: SessionOptions): Session {
  const vocabulary = options.vocabulary ?? VSCODE_VOCABULARY;
  const limits = (): SessionLimits => options.limits?.() ?? DEFAULT_LIMITS;
  const encodingOf = options.encodingOf ? { encodingOf: options.encodingOf } : {};
  const artifacts = new ArtifactStore({
    lifetime: vocabulary.session,
    fs: options.fs,
    dir: options.spoolDir,
    clock: options.clock,
    budgetBytes: () => limits().artifactBudgetBytes,
    nonStreamingMaxBytes: () => limits().nonStreamingMaxBytes,
    ...encodingOf,
  });
  const media = new MediaStore({
    budgetSetting: vocabulary.budget('media'),
    clock: options.clock,
    budgetBytes: () => limits().mediaBudgetBytes,
    ...encodingOf,
  });
  const spoolFolder = async (name: string): Promise<string> => {
    await artifacts.start();
    return nodePath.join(artifacts.spoolDir, name);
  };
  const saves = new SaveHistory({
    dir: () => spoolFolder('saves'),
    budgetBytes: () => limits().undoBudgetBytes,
    budgetSetting: vocabulary.budget('undo'),
    clock: options.clock,
  });
  const stateFolder = (): Promise<string> =>
    journalFolder(options.stateDir, withDistinctNames(options.roots()), options.log, () => spoolFolder('state'));
  const journal = new SetJournal({ dir: stateFolder, clock: options.clock });
  let layerRoot: Promise<string> | undefined;
  const shell = options.shell
    ? {
        host: {
          // The state folder is usually on the workspace's filesystem where the temp folder may not be.
          layerRoot: () =>
            (layerRoot ??= stateFolder().then(async (dir) => {
              await privateStateDir(dir);
              return privateStateDir(nodePath.join(dir, 'layers'));
            })),
          ...options.shell,
          home: options.home,
          env: options.env,
        },
        hosts: new SessionHosts(),
        memo: new VerdictMemo(),
        layer: new LayerCheck(),
        words: vocabulary,
      }
    : undefined;
  return new Session(options, {
    resolvedFs: resolvedFs(options.fs),
    lister: options.lister ?? fsLister(options.fs),
    artifacts,
    media,
    saves,
    journal,
    shell,
    vocabulary,
    saveGuard: new SaveGuard(options.writeRoots),
    links: new LinkCache(options.fs, options.clock, options.log),
  });
}
