// One mapping from an absolute path to a workspace path (paths.ts placeOf), shared by the model's
// absolute paths (normalizeModelPath), the files a host reports (host-paths.ts modelPathOf) and the
// shell's change set. With nested workspace folders they used to disagree: the model's absolute path
// took the first folder listed, the others the deepest, so one file had two model paths (two policy
// decisions by folder, two media for one file).
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import { normalizeModelPath, placeOf, type WorkspaceRoot } from '../../src/core/paths.ts';
import { modelPathOf } from '../../src/core/host-paths.ts';
import { tempDir } from './harness.ts';

/** A workspace folder `app` with `app/web` opened as a folder of its own too, listed outer first and inner first. */
function nestedFolders(t: { after(fn: () => void): void }): { app: string; web: string; orders: WorkspaceRoot[][] } {
  const dir = tempDir('wt-nested-');
  t.after(() => dir.dispose());
  const app = nodePath.join(dir.path, 'app');
  const web = nodePath.join(app, 'web');
  mkdirSync(web, { recursive: true });
  const outer: WorkspaceRoot = { name: 'app', address: app, localPath: app };
  const inner: WorkspaceRoot = { name: 'web', address: web, localPath: web };
  return {
    app,
    web,
    orders: [
      [outer, inner],
      [inner, outer],
    ],
  };
}

const placed = (p: { root: WorkspaceRoot; rel: string } | undefined): string | undefined =>
  p && `${p.root.name}:${p.rel}`;

test("nested workspace folders: an absolute path the model gives belongs to the deepest folder, whatever the folders' order", (t) => {
  const { web, orders } = nestedFolders(t);
  for (const roots of orders) {
    assert.equal(placed(normalizeModelPath(nodePath.join(web, 'src', 'a.ts'), roots)), 'web:src/a.ts');
    assert.equal(normalizeModelPath(nodePath.join(web, 'src', 'a.ts'), roots).display, 'web/src/a.ts');
  }
});

test("nested workspace folders: the model's path, a host's report and the shell's change set name a file alike", (t) => {
  const { app, web, orders } = nestedFolders(t);
  const files = [
    nodePath.join(web, 'src', 'a.ts'),
    web,
    nodePath.join(app, 'README.md'),
    app,
    nodePath.join(app, 'web2', 'b.ts'),
  ];
  for (const roots of orders) {
    for (const file of files) {
      const model = placed(normalizeModelPath(file, roots));
      assert.equal(placed(modelPathOf(file, roots)), model, `a host's report of ${file}`);
      assert.equal(placed(placeOf(file, roots)), model, `the shell's change set of ${file}`);
    }
    assert.deepEqual(
      files.map((file) => placed(placeOf(file, roots))),
      ['web:src/a.ts', 'web:', 'app:README.md', 'app:', 'app:web2/b.ts'],
    );
  }
});

test('placeOf: a sibling whose name starts like a folder is outside it, trailing separators do not count, ".." is kept for the caller to refuse', (t) => {
  const { app, orders } = nestedFolders(t);
  const [roots] = orders;
  assert.equal(placeOf(`${app}-old/x.ts`, roots!), undefined);
  assert.equal(
    placed(placeOf(`${app}/web/x.ts`, [{ name: 'app', address: `${app}//`, localPath: `${app}//` }, roots![1]!])),
    'web:x.ts',
  );
  assert.equal(placed(placeOf(`${app}/web/../x.ts`, roots!)), 'web:../x.ts');
  assert.throws(() => normalizeModelPath(`${app}/web/../x.ts`, roots!), /contains a "\.\." segment/);
  assert.equal(placed(placeOf('/etc/passwd', [{ name: 'root', address: '/', localPath: '/' }])), 'root:etc/passwd');
});
