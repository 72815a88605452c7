/** One `name = value` of a git configuration file: `section[.subsection].key`, section and key lower-cased as git compares them. */
export interface ConfigEntry {
  readonly section: string;
  readonly subsection: string | undefined;
  readonly key: string;
  readonly value: string;
}

/** A configuration file's entries as git reads them, and the lines read as neither an entry, a section header, a comment nor blank. */
export interface ParsedConfig {
  readonly entries: readonly ConfigEntry[];
  readonly unread: readonly string[];
}

const HEADER = /^\[\s*([A-Za-z0-9.-]+)(?:\s+"((?:[^"\\]|\\.)*)")?\s*\]\s*(.*)$/;
const ENTRY = /^([A-Za-z][A-Za-z0-9-]*)\s*(?:=\s*(.*))?$/;

/**
 * A git configuration file's text as git reads it: names case-insensitive (a subsection's kept),
 * `#` and `;` comments outside quotes, quotes and backslash escapes, a line continued by a final
 * backslash, an entry on its section's header line. Includes are entries like others, not followed.
 */
export function parseConfig(text: string): ParsedConfig {
  const entries: ConfigEntry[] = [];
  const unread: string[] = [];
  let section = '';
  let subsection: string | undefined;
  const lines = text
    .replace(/^\uFEFF/, '')
    .replace(/\\\r?\n/g, '')
    .split(/\r?\n/);
  for (const raw of lines) {
    let line = raw.trim();
    const header = HEADER.exec(line);
    if (header) {
      section = header[1]!.toLowerCase();
      subsection = header[2]?.replace(/\\(.)/g, '$1');
      line = header[3]!;
    }
    if (line === '' || /^[#;]/.test(line)) continue;
    const entry = ENTRY.exec(line);
    if (entry === null || section === '') {
      unread.push(raw);
      continue;
    }
    entries.push({
      section,
      subsection,
      key: entry[1]!.toLowerCase(),
      value: entry[2] === undefined ? '' : unquote(entry[2]),
    });
  }
  return { entries, unread };
}

/** The full name of an entry as `git config --list` shows it (the old `[section.subsection]` form gives the same). */
export const entryName = (e: ConfigEntry): string =>
  e.subsection === undefined ? `${e.section}.${e.key}` : `${e.section}.${e.subsection}.${e.key}`;

function unquote(raw: string): string {
  let out = '';
  let quoted = false;
  for (let i = 0; i < raw.length; i++) {
    const c = raw[i]!;
    if (c === '"') quoted = !quoted;
    else if (c === '\\' && i + 1 < raw.length) {
      const next = raw[++i]!;
      out += next === 'n' ? '\n' : next === 't' ? '\t' : next === 'b' ? '\b' : next;
    } else if (!quoted && (c === '#' || c === ';')) break;
    else out += c;
  }
  return out.trim();
}
