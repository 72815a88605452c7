/**
 * Security: characters that change how a command looks without changing what runs: control
 * characters (a carriage return can hide what precedes it), bidirectional overrides and isolates
 * (Trojan Source), and zero-width characters.
 */
const HIDDEN =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/** The command as the person must see it: every hidden character as a visible escape, nothing cut. */
export function visibleCommand(command: string): string {
  return command
    .replace(HIDDEN, (c) => {
      const code = c.codePointAt(0)!;
      return `\\u{${code.toString(16).padStart(4, '0')}}`;
    })
    .replace(/\t/g, '\\t')
    .replace(/\n/g, '⏎ ');
}
