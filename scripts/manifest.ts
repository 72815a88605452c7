// Regenerates package.json's contributes.languageModelTools from the tools' zod schemas.
// `node scripts/manifest.ts` writes it; `--check` exits 1 when package.json disagrees.
import { readFileSync, writeFileSync } from 'node:fs';
import { languageModelToolEntries } from '../src/core/manifest.ts';

const file = new URL('../package.json', import.meta.url);
const text = readFileSync(file, 'utf8');
const manifest = JSON.parse(text) as { contributes?: { languageModelTools?: unknown } };
const entries = JSON.parse(JSON.stringify(languageModelToolEntries())) as unknown;
const current = JSON.stringify(manifest.contributes?.languageModelTools);
if (process.argv.includes('--check')) {
  if (current !== JSON.stringify(entries)) {
    console.error('package.json contributes.languageModelTools is out of date: run `npm run manifest`.');
    process.exit(1);
  }
  console.log('languageModelTools manifest matches the schemas.');
} else {
  manifest.contributes = { ...manifest.contributes, languageModelTools: entries };
  writeFileSync(file, JSON.stringify(manifest, null, 2) + '\n');
  console.log(`wrote ${(entries as unknown[]).length} languageModelTools entries`);
}
