// The workbench as a person sees it: the command palette lists the extension's commands, and its
// view container opens. Screenshots go to test-results/.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { WORKBENCH } from '../host/selectors.mjs';
import * as d from './driver.mjs';

describe('command palette', () => {
  let wb;
  before(async () => {
    wb = await d.openWorkbench({ workspace: d.fixtureWorkspace, extensionDevelopmentPath: d.extensionPath });
    await d.whenWorkbenchRestored(wb.page);
  });
  after(async () => { await wb?.close(); });

  test('lists every Workspace Tools command under its category', { timeout: 60_000 }, async () => {
    const { contributes } = d.manifest();
    const expected = (contributes?.commands ?? []).map((c) => (c.category ? `${c.category}: ${c.title}` : c.title));
    assert.ok(expected.length > 0, 'package.json contributes no commands');
    // The development extension's contributions arrive shortly after the workbench restores.
    let labels = [];
    await d.waitFor(async () => {
      labels = await d.paletteLabels(wb.page, 'Workspace Tools');
      if (expected.every((e) => labels.includes(e))) return true;
      await d.closePalette(wb.page);
      return false;
    }, 'the palette to list the commands', 30_000, 500).catch(() => {});
    await wb.screenshot('palette-workspace-tools');
    await d.closePalette(wb.page);
    assert.deepEqual(expected.filter((e) => !labels.includes(e)), [], `missing from the palette (it listed: ${labels.join(' | ')})`);
  });

  test('opens the Workspace Tools view container with its views', { timeout: 60_000 }, async () => {
    const { contributes } = d.manifest();
    const container = contributes?.viewsContainers?.activitybar?.[0];
    assert.ok(container, 'package.json contributes no activity bar view container');
    await d.runCommand(wb.page, `View: Show ${container.title}`);
    const sideBar = wb.page.locator(WORKBENCH.sideBar);
    for (const view of contributes.views?.[container.id] ?? []) {
      await sideBar.getByText(view.name, { exact: false }).first().waitFor({ state: 'visible', timeout: 15_000 });
    }
    await wb.screenshot('view-container');
  });
});
