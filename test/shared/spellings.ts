/** Other spellings of a name (issue 26, item 3): shared by the attack tests and the fuzz suite. */

/** Windows spellings of a name: alternate data streams and 8.3 short names. */
export const WINDOWS_SPELLINGS: readonly string[] = [
  './.env::$DATA',
  '.env::$DATA',
  'package.json::$DATA',
  'package.json:evil',
  '.vscode::$INDEX_ALLOCATION/settings.json',
  '.git:$I30:$INDEX_ALLOCATION/hooks/x',
  'src/app.ts:Zone.Identifier',
  'ENV~1',
  'VSCODE~1/settings.json',
  'GIT~1/hooks/pre-commit',
  'PACKAG~1.JSO',
  '.github/WORKFL~1/ci.yml',
  'id_rsa/../ID_RSA~1',
];

/** Characters that display as nothing, or as a plain space, and were accepted before. */
export const INVISIBLE_CHARACTERS: readonly string[] = [
  '\u2028',
  '\u2029',
  '\u061C',
  '\u3164',
  '\u180E',
  '\u034F',
  '\u{E0041}',
  '\u{E0001}',
  '\uFE0F',
  '\u115F',
  '\uFFA0',
  '\u00A0',
  '\u2007',
  '\u3000',
  '\u2800',
];

/** Spellings a case-folding, normalizing disk opens as a protected or secret name. */
export const FOLDED_SPELLINGS: readonly (readonly [path: string, risk: 'read' | 'write', as: string])[] = [
  ['pac\u212Aage.json', 'write', 'package.json'],
  ['id_r\u017Fa', 'read', 'id_rsa'],
  ['.github/wor\u212Aflows/ci.yml', 'write', '.github/workflows/ci.yml'],
  ['.g\u0131t/hooks/pre-commit', 'write', '.git/hooks/pre-commit'],
  ['.vscode/\u017Fettings.json', 'write', '.vscode/settings.json'],
  ['config/\u017Fecrets.json', 'read', 'secrets.json'],
  ['.ssh/id_ed25519', 'read', '.ssh/id_ed25519'],
];
