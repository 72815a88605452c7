import { execFile } from 'node:child_process';

/** The person's own `user.name` and `user.email` (their global git configuration), as git reads them: one call. */
function personalValues(env: Readonly<Record<string, string | undefined>>, home: string): Promise<Map<string, string>> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(
      Object.entries({ ...env, HOME: home }).filter((e): e is [string, string] => e[1] !== undefined),
    );
    execFile(
      'git',
      ['config', '--global', '--null', '--get-regexp', '^user\\.(name|email)$'],
      { env: clean, timeout: 5_000 },
      (error, stdout) => {
        const values = new Map<string, string>();
        // --null: each entry is "key\nvalue\0"; the last of a key wins, as for git.
        if (!error)
          for (const entry of stdout.split('\0')) {
            const at = entry.indexOf('\n');
            if (at > 0 && entry.slice(at + 1).trim() !== '') values.set(entry.slice(0, at), entry.slice(at + 1).trim());
          }
        resolve(values);
      },
    );
  });
}

const quoted = (value: string): string => `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, ' ')}"`;

/**
 * The git configuration a command's private home gets: the person's name and email, so `git commit`
 * works, and nothing else of theirs (no credential helper, no hooks path, no aliases).
 */
export async function personalIdentity(
  env: Readonly<Record<string, string | undefined>>,
  home: string,
): Promise<string> {
  const values = await personalValues(env, home);
  const name = values.get('user.name');
  const email = values.get('user.email');
  const lines = ['[user]'];
  if (name !== undefined) lines.push(`\tname = ${quoted(name)}`);
  if (email !== undefined) lines.push(`\temail = ${quoted(email)}`);
  return lines.length > 1 ? `${lines.join('\n')}\n` : '';
}
