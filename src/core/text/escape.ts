/**
 * Security: much of what a person is asked about was chosen by the model: commands, paths, hosts,
 * patterns, globs. Each medium that shows a question takes that text through one function here,
 * so nothing the model wrote can reshape the question: hide part of it, fake a line of it, or turn
 * into markup (a forged "**Safe: read-only command.**", or an HTML comment hiding the rest of a
 * command from the person while the client still runs it).
 */

/**
 * Characters that change how text looks without changing what it is: control characters (a
 * carriage return can hide what precedes it, an escape sequence can rewrite a terminal),
 * bidirectional overrides and isolates (Trojan Source), zero-width and other invisible characters,
 * line and paragraph separators, and spaces other than U+0020. Tab and line feed are shown apart.
 */
const HIDDEN =
  // eslint-disable-next-line no-control-regex
  /[\u0000-\u0008\u000b-\u001f\u007f-\u009f\p{Default_Ignorable_Code_Point}\p{Bidi_Control}\p{Zl}\p{Zp}]|(?! )\p{Zs}/gu;

/**
 * The model's text for a plain-text medium (VS Code's modal dialog and a dialog's title, a
 * terminal): every hidden character as a visible `\u{…}` escape, a tab as `\t`, a line break as
 * "⏎ ", so the text is one visible line and nothing of it is cut or hidden.
 */
export function plainText(text: string): string {
  return text
    .replace(/\r\n|\n/g, '⏎ ')
    .replace(HIDDEN, (c) => `\\u{${c.codePointAt(0)!.toString(16).padStart(4, '0')}}`)
    .replace(/\t/g, '\\t');
}

/**
 * Characters that start inline Markdown (CommonMark and GitHub's extensions): escapes, code spans,
 * emphasis, strikethrough, links and images, autolinks and raw HTML (comments included), entity
 * references, math, table cells. Each may be backslash-escaped, and an escaped one is literal.
 */
const MARKDOWN_INLINE = /[\\`*_~[\]<>&$|]/g;

/** A block marker at the start of a line (heading, list item, quote, setext underline). */
const MARKDOWN_LINE_START = /^([#+\-=>]|\d+(?=[.)]))/;

/**
 * The model's text for a Markdown medium (an MCP client's elicitation message, VS Code's chat
 * confirmation): `plainText`'s visible line, with every character that could start Markdown or
 * HTML escaped, so the person reads exactly the text, literally, wherever it is placed.
 */
export function markdownText(text: string): string {
  const line = plainText(text).replace(MARKDOWN_INLINE, '\\$&');
  // Leading spaces would make an indented code block at the start of a paragraph: as entities they are only spaces.
  const indent = /^ */.exec(line)![0].length;
  const rest = line
    .slice(indent)
    .replace(MARKDOWN_LINE_START, (marker) => (/^\d/.test(marker) ? `${marker}\\` : `\\${marker}`));
  return `${'&#32;'.repeat(indent)}${rest}`;
}
