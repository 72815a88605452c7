import { execFile } from 'node:child_process';

/** One value of the person's own git configuration (global and system), or undefined. */
function personalValue(key: string, env: Readonly<Record<string, string | undefined>>, home: string): Promise<string | undefined> {
  return new Promise((resolve) => {
    const clean = Object.fromEntries(Object.entries({ ...env, HOME: home }).filter((e): e is [string, string] => e[1] !== undefined));
    execFile('git', ['config', '--global', '--get', key], { env: clean, timeout: 5_000 }, (error, stdout) => resolve(error ? undefined : stdout.trim() || undefined));
  });
}

const quoted = (value: string): string => `"${value.replace(/[\\"]/g, (c) => `\\${c}`).replace(/\n/g, ' ')}"`;

/**
 * The git configuration a command's private home gets: the person's name and email, so `git commit`
 * works, and nothing else of theirs (no credential helper, no hooks path, no aliases).
 */
export async function personalIdentity(env: Readonly<Record<string, string | undefined>>, home: string): Promise<string> {
  const name = await personalValue('user.name', env, home);
  const email = await personalValue('user.email', env, home);
  const lines = ['[user]'];
  if (name !== undefined) lines.push(`\tname = ${quoted(name)}`);
  if (email !== undefined) lines.push(`\temail = ${quoted(email)}`);
  return lines.length > 1 ? `${lines.join('\n')}\n` : '';
}
