// Renders media/icon.svg to media/icon.png (128×128, transparent corners), the Marketplace icon,
// with Debian's Chromium through playwright-core (the same browser the tests drive). With
// --preview DIR it also writes how the icon looks at 32 px on a dark and a light background.
//
//   node scripts/icon.mjs [--preview DIR]
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { parseArgs } from 'node:util';
import { chromium } from 'playwright-core';
import { ensureChromium, repoRoot } from '../test/host/ensure.mjs';

const SIZE = 128;

async function render(page, svg, size, background) {
  await page.setViewportSize({ width: size, height: size });
  const img = `<img src="data:image/svg+xml;base64,${Buffer.from(svg).toString('base64')}" width="${size}" height="${size}" style="display:block">`;
  await page.setContent(`<!doctype html><html><body style="margin:0;background:${background}">${img}</body></html>`);
  await page.waitForFunction(() => document.images[0]?.complete === true);
  return page.screenshot({ type: 'png', omitBackground: background === 'transparent' });
}

async function main() {
  const { values } = parseArgs({ options: { preview: { type: 'string' } } });
  const svg = readFileSync(join(repoRoot, 'media/icon.svg'), 'utf8');
  const browser = await chromium.launch({
    executablePath: await ensureChromium(),
    headless: true,
    args: ['--no-sandbox', '--disable-gpu'],
  });
  try {
    const page = await browser.newPage({ deviceScaleFactor: 1 });
    const png = join(repoRoot, 'media/icon.png');
    writeFileSync(png, await render(page, svg, SIZE, 'transparent'));
    console.log(`wrote ${png}`);
    if (values.preview) {
      for (const [name, background] of [
        ['dark', '#1f1f1f'],
        ['light', '#ffffff'],
      ]) {
        const file = join(values.preview, `icon-32-${name}.png`);
        writeFileSync(file, await render(page, svg, 32, background));
        console.log(`wrote ${file}`);
      }
    }
  } finally {
    await browser.close();
  }
}

main().catch((e) => {
  console.error(e.stack ?? e);
  process.exitCode = 1;
});
