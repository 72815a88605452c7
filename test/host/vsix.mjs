// The extension as a person gets it: packaged into a .vsix (`vsce package`, the .vscodeignore file
// list) and installed by VS Code's own installer (`code-server --install-extension`), as opposed to
// loaded from the source folder as a development extension.
import { spawn } from 'node:child_process';
import { mkdirSync, readdirSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { buildPackage, UNIVERSAL } from '../../scripts/package.mjs';
import { ensureCodeServer, ensureNode24 } from './ensure.mjs';

function run(cmd, args, options) {
  return new Promise((resolve, reject) => {
    const child = spawn(cmd, args, { stdio: ['ignore', 'pipe', 'pipe'], ...options });
    let output = '';
    child.stdout.on('data', (d) => {
      output += d;
    });
    child.stderr.on('data', (d) => {
      output += d;
    });
    child.on('error', reject);
    child.on('close', (code) =>
      code === 0 ? resolve(output) : reject(new Error(`${cmd} ${args.join(' ')} exited ${code}:\n${output}`)),
    );
  });
}

/**
 * Packages the extension at `extensionPath` (its dist/ must be built) into `tmpDir` with
 * scripts/package.mjs — the universal package, or `target`'s (`linux-x64`, …) — and installs it
 * there with code-server's installer; returns the installed extension's folder.
 */
export async function installPackagedExtension(extensionPath, tmpDir, { target = UNIVERSAL } = {}) {
  const node = await ensureNode24();
  const codeServer = await ensureCodeServer(node);
  const { vsix } = await buildPackage(target, { root: extensionPath, outDir: tmpDir });
  const extensionsDir = join(tmpDir, 'installed-extensions');
  const home = join(tmpDir, 'installer-home');
  mkdirSync(home, { recursive: true });
  await run(
    node,
    [
      codeServer,
      '--extensions-dir',
      extensionsDir,
      '--user-data-dir',
      join(home, 'user-data'),
      '--install-extension',
      vsix,
      '--force',
    ],
    {
      env: {
        ...process.env,
        PATH: `${dirname(node)}:${process.env.PATH ?? ''}`,
        HOME: home,
        XDG_CONFIG_HOME: join(home, 'config'),
        XDG_DATA_HOME: join(home, 'data'),
        XDG_CACHE_HOME: join(home, 'cache'),
      },
    },
  );
  const installed = readdirSync(extensionsDir).filter((name) => name.startsWith('workspace-tools.workspace-tools-'));
  if (installed.length !== 1)
    throw new Error(
      `code-server --install-extension left ${JSON.stringify(readdirSync(extensionsDir))} in ${extensionsDir}`,
    );
  return join(extensionsDir, installed[0]);
}
