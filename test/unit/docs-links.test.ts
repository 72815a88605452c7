// The documents a person and the next engineer read link only inside the repository, and every such
// link resolves: the file exists, and an anchor (`#...`) names a heading of the file it points into.
import test from 'node:test';
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import nodePath from 'node:path';
import MarkdownIt from 'markdown-it';

const DOCUMENTS = [
  'README.md',
  'CONTRIBUTING.md',
  'bench/README.md',
  ...readdirSync('docs')
    .filter((name) => name.endsWith('.md'))
    .map((name) => `docs/${name}`),
];
const markdown = new MarkdownIt({ html: true });
type Token = ReturnType<typeof markdown.parse>[number];

function tokensOf(file: string): Token[] {
  return markdown.parse(readFileSync(file, 'utf8'), {});
}

/** An inline token's text as a reader sees it (code spans keep their text, emphasis marks go). */
function textOf(inline: Token): string {
  return (inline.children ?? [])
    .filter((child) => child.type === 'text' || child.type === 'code_inline')
    .map((child) => child.content)
    .join('');
}

/** GitHub's anchor for a heading: lower case, punctuation dropped, spaces as hyphens; repeats get -1, -2. */
function anchorsOf(file: string): Set<string> {
  const tokens = tokensOf(file);
  const seen = new Map<string, number>();
  const anchors = new Set<string>();
  tokens.forEach((token, index) => {
    if (token.type !== 'heading_open') return;
    const slug = textOf(tokens[index + 1]!)
      .toLowerCase()
      .replace(/[^\p{L}\p{N}\s_-]/gu, '')
      .replace(/ /g, '-');
    const count = seen.get(slug) ?? 0;
    seen.set(slug, count + 1);
    anchors.add(count === 0 ? slug : `${slug}-${count}`);
  });
  return anchors;
}

/** Every link and image target of a document. */
function targetsOf(file: string): string[] {
  const targets: string[] = [];
  for (const token of tokensOf(file)) {
    for (const child of token.children ?? []) {
      if (child.type === 'link_open') targets.push(String(child.attrGet('href') ?? ''));
      if (child.type === 'image') targets.push(String(child.attrGet('src') ?? ''));
    }
  }
  return targets;
}

test('the documents checked here exist: README, CONTRIBUTING, the bench figures and every page of docs/', () => {
  for (const file of [
    'README.md',
    'CONTRIBUTING.md',
    'bench/README.md',
    'docs/tools.md',
    'docs/security.md',
    'docs/shell.md',
    'docs/cli.md',
    'docs/mcp.md',
    'docs/architecture.md',
  ]) {
    assert.ok(DOCUMENTS.includes(file) && existsSync(file), `${file} is missing`);
  }
});

for (const file of DOCUMENTS) {
  test(`${file}: every link stays in the repository and resolves, anchors included`, () => {
    const root = process.cwd();
    for (const target of targetsOf(file)) {
      assert.doesNotMatch(target, /^([a-z][a-z0-9+.-]*:|\/\/)/i, `${file} links out of the repository: ${target}`);
      const [pathPart = '', anchor] = target.split('#');
      const resolved =
        pathPart === ''
          ? nodePath.resolve(file)
          : nodePath.resolve(nodePath.dirname(file), decodeURIComponent(pathPart));
      assert.ok(
        resolved === root || resolved.startsWith(root + nodePath.sep),
        `${file} links above the repository: ${target}`,
      );
      assert.ok(existsSync(resolved), `${file} links to ${target}, which does not exist`);
      if (anchor === undefined) continue;
      assert.ok(
        statSync(resolved).isFile() && resolved.endsWith('.md'),
        `${file} links to the anchor #${anchor} of ${target}, which is not a Markdown file`,
      );
      const anchors = anchorsOf(nodePath.relative(root, resolved));
      assert.ok(
        anchors.has(anchor),
        `${file} links to #${anchor} in ${nodePath.relative(root, resolved)}, which has no such heading (it has: ${[...anchors].join(', ')})`,
      );
    }
  });
}
