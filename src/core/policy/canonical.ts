// eslint-disable-next-line no-control-regex
const NON_ASCII = /[^\u0000-\u007f]/;

/**
 * Security: the spelling a case-insensitive, normalization-insensitive file system (APFS, NTFS,
 * ext4 with casefold) gives a name, when it differs from the name: composed (NFC) and fully case
 * folded, so that the Kelvin sign "K" (U+212A) is "k", the long s "ſ" (U+017F) is "s" and the dotless
 * "ı" is "i", as those disks treat them: "pacKage.json" is "package.json" and "id_rſa" is "id_rsa".
 * Protective rules are tested on both spellings. An ASCII path has no other spelling than its case,
 * which the protective rules ignore already, so it costs one test.
 */
export function canonicalSpelling(path: string): string | undefined {
  if (!NON_ASCII.test(path)) return undefined;
  // Upper then lower case folds the characters whose lower case alone is themselves ("ſ", "ı", "ß").
  const folded = path.normalize('NFC').toUpperCase().toLowerCase().normalize('NFC');
  return folded === path ? undefined : folded;
}
