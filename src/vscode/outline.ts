import * as vscode from 'vscode';
import type { CodeSymbol, OutlinePort, WorkspaceSymbol } from '../core/outline/port.ts';
import { addressOf, fileUri } from './uri.ts';

/** How long a provider may take (a language server's cold start) before the file opens without an outline. */
const ANSWER_MAX_MS = 5000;

const kindName = (kind: vscode.SymbolKind): string => (vscode.SymbolKind[kind] ?? 'symbol').toLowerCase();

function fromDocumentSymbol(s: vscode.DocumentSymbol): CodeSymbol {
  return {
    name: s.name,
    kind: kindName(s.kind),
    startLine: s.range.start.line + 1,
    endLine: s.range.end.line + 1,
    children: s.children.map(fromDocumentSymbol),
  };
}

/** A provider that answers with flat SymbolInformation (older ones): nested by containment of ranges. */
function fromSymbolInformation(list: readonly vscode.SymbolInformation[]): CodeSymbol[] {
  const sorted = [...list].sort(
    (a, b) =>
      a.location.range.start.compareTo(b.location.range.start) || b.location.range.end.compareTo(a.location.range.end),
  );
  const roots: { symbol: CodeSymbol & { children: CodeSymbol[] }; range: vscode.Range }[] = [];
  const stack: typeof roots = [];
  for (const info of sorted) {
    const node = {
      symbol: {
        name: info.name,
        kind: kindName(info.kind),
        startLine: info.location.range.start.line + 1,
        endLine: info.location.range.end.line + 1,
        children: [] as CodeSymbol[],
      },
      range: info.location.range,
    };
    while (stack.length > 0 && !stack[stack.length - 1]!.range.contains(info.location.range)) stack.pop();
    const parent = stack[stack.length - 1];
    if (parent) parent.symbol.children.push(node.symbol);
    else roots.push(node);
    stack.push(node);
  }
  return roots.map((r) => r.symbol);
}

/** A command's answer, or undefined when it fails, is later than ANSWER_MAX_MS, or the call is cancelled. */
async function answerInTime<T>(command: string, args: readonly unknown[], signal: AbortSignal): Promise<T | undefined> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<undefined>((resolve) => {
    timer = setTimeout(() => resolve(undefined), ANSWER_MAX_MS);
    signal.addEventListener('abort', () => resolve(undefined), { once: true });
  });
  try {
    const asked = Promise.resolve(vscode.commands.executeCommand<T | undefined>(command, ...args)).catch(
      () => undefined,
    );
    return await Promise.race([asked, late]);
  } finally {
    clearTimeout(timer);
  }
}

/** VS Code's symbol providers (the Outline view, Go to Symbol in Workspace) as the core's outline port. */
export function vscodeOutline(local: boolean): OutlinePort {
  return {
    async symbols(file, signal) {
      const answer = await answerInTime<(vscode.DocumentSymbol | vscode.SymbolInformation)[]>(
        'vscode.executeDocumentSymbolProvider',
        [fileUri(file.root, file.rel, local)],
        signal,
      );
      if (answer === undefined) return undefined;
      if (answer.length === 0) return [];
      return answer[0] instanceof vscode.DocumentSymbol || 'children' in answer[0]!
        ? (answer as vscode.DocumentSymbol[]).map(fromDocumentSymbol)
        : fromSymbolInformation(answer as vscode.SymbolInformation[]);
    },
    async workspaceSymbols(query, signal) {
      const answer = await answerInTime<vscode.SymbolInformation[]>(
        'vscode.executeWorkspaceSymbolProvider',
        [query],
        signal,
      );
      return answer?.map((s): WorkspaceSymbol => ({
        // TypeScript labels functions and methods "total()"; the outline (and artifact_query's paths) say "total".
        name: s.name.replace(/\(\)$/, ''),
        kind: kindName(s.kind),
        ...(s.containerName ? { container: s.containerName } : {}),
        address: addressOf(s.location.uri, local && s.location.uri.scheme === 'file'),
        startLine: s.location.range.start.line + 1,
        endLine: s.location.range.end.line + 1,
      }));
    },
  };
}
