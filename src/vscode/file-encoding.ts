import * as vscode from 'vscode';
import type { ModelPath } from '../core/paths.ts';
import type { TextEncoding } from '../core/text/encoding.ts';
import { fileUri } from './uri.ts';

/**
 * VS Code's files.encoding for a file (user, workspace or folder setting). The core names encodings
 * by VS Code's own ids ("windows1252", "iso88591", "utf16le", "utf8bom"...), so the value passes as
 * it is; the default "utf8" leaves the choice to the core's detection.
 */
export function fileEncodingOf(local: boolean): (path: ModelPath) => TextEncoding | undefined {
  return (path) => {
    const value = vscode.workspace
      .getConfiguration('files', fileUri(path.root, path.rel, local))
      .get<unknown>('encoding');
    return typeof value === 'string' && value !== '' ? value : undefined;
  };
}
