// Regenerates what the manifest derives from the tools: package.json's contributes.languageModelTools
// (from the zod schemas) and the `tools:` list of each contributed agent file (every tool of ours).
// `node scripts/manifest.ts` writes them; `--check` exits 1 when either disagrees.
import { readFileSync, writeFileSync } from 'node:fs';
import { agentToolReferences, languageModelToolEntries } from '../src/core/pipeline/manifest.ts';

interface Manifest {
  publisher: string;
  name: string;
  contributes?: { languageModelTools?: unknown; chatAgents?: { path: string }[] };
}

const check = process.argv.includes('--check');
const file = new URL('../package.json', import.meta.url);
const manifest = JSON.parse(readFileSync(file, 'utf8')) as Manifest;
const problems: string[] = [];

const entries = JSON.parse(JSON.stringify(languageModelToolEntries())) as unknown;
if (JSON.stringify(manifest.contributes?.languageModelTools) !== JSON.stringify(entries)) {
  if (check) problems.push('package.json contributes.languageModelTools is out of date');
  manifest.contributes = { ...manifest.contributes, languageModelTools: entries };
  if (!check) writeFileSync(file, JSON.stringify(manifest, null, 2) + '\n');
}

const toolsLine = `tools: ${JSON.stringify(agentToolReferences(`${manifest.publisher}.${manifest.name}`))}`;
for (const { path } of manifest.contributes?.chatAgents ?? []) {
  const agentFile = new URL(`../${path}`, import.meta.url);
  const text = readFileSync(agentFile, 'utf8');
  const next = text.replace(/^tools: .*$/m, toolsLine);
  if (!/^tools: /m.test(text)) problems.push(`${path} has no "tools:" line in its front matter`);
  else if (next !== text) {
    if (check) problems.push(`the tools of ${path} are out of date`);
    else writeFileSync(agentFile, next);
  }
}

if (problems.length) {
  console.error(`${problems.join('; ')}: run \`npm run manifest\`.`);
  process.exit(1);
}
console.log(
  check
    ? 'languageModelTools and agent tools match the tools.'
    : `wrote ${(entries as unknown[]).length} languageModelTools entries and the agent tool lists`,
);
