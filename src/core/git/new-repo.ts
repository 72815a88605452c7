import { entryName, parseConfig } from './config.ts';

/**
 * What `git init`, `git clone` (a submodule's too) and everyday `git config` write in a
 * repository's configuration; none of it makes git run anything or fetch on its own (no
 * `extensions.*`, no promisor remote or partial clone: a status there fetches missing objects from
 * a URL the command chose). `*` is a subsection.
 */
const SAFE_NAMES: ReadonlySet<string> = new Set([
  ...[
    'repositoryformatversion',
    'filemode',
    'bare',
    'logallrefupdates',
    'ignorecase',
    'precomposeunicode',
    'symlinks',
    'autocrlf',
    'eol',
    'safecrlf',
    'longpaths',
    'quotepath',
    'sparsecheckout',
    'sparsecheckoutcone',
    'worktree',
  ].map((k) => `core.${k}`),
  ...['url', 'pushurl', 'fetch', 'push', 'tagopt', 'prune', 'mirror'].map((k) => `remote.*.${k}`),
  ...['remote', 'merge', 'rebase', 'pushremote', 'description', 'vscode-merge-base'].map((k) => `branch.*.${k}`),
  ...['url', 'active', 'branch'].map((k) => `submodule.*.${k}`),
  'user.name',
  'user.email',
  'init.defaultbranch',
  'pull.rebase',
  'pull.ff',
  'fetch.prune',
  'push.default',
  'push.autosetupremote',
  'gc.auto',
]);

const OUTSIDE_THE_SANDBOX = "git runs — VS Code's git too, outside the sandbox, as soon as it finds the repository";

/** Why this configuration text is unsafe in a new repository, or undefined when it only holds `SAFE_NAMES`. */
export function unsafeConfig(text: string): string | undefined {
  const parsed = parseConfig(text);
  if (parsed.unread.length > 0)
    return `a repository configuration with a line git may read as a setting (${JSON.stringify(parsed.unread[0]!.trim().slice(0, 80))}), so what ${OUTSIDE_THE_SANDBOX} cannot be told`;
  const unsafe = parsed.entries.find(
    (e) => !SAFE_NAMES.has(e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.*.${e.key}`),
  );
  return unsafe === undefined
    ? undefined
    : `a repository configuration that sets ${entryName(unsafe)}, which a command may not set in a new repository: it can name what ${OUTSIDE_THE_SANDBOX}`;
}
