import type * as vscode from 'vscode';

/** An AbortSignal that follows a VS Code cancellation token; `dispose` removes the token listener. */
export interface SignalBridge extends vscode.Disposable {
  readonly signal: AbortSignal;
}

/** The one token → signal bridge: dispose it when the call it serves is over. */
export function signalOf(token: vscode.CancellationToken): SignalBridge {
  const controller = new AbortController();
  if (token.isCancellationRequested) {
    controller.abort();
    return { signal: controller.signal, dispose: () => undefined };
  }
  const listener = token.onCancellationRequested(() => controller.abort());
  return { signal: controller.signal, dispose: () => listener.dispose() };
}

/** Runs `work` with a signal that follows `token`, and removes the bridge when the work settles. */
export async function withSignal<T>(
  token: vscode.CancellationToken,
  work: (signal: AbortSignal) => Promise<T>,
): Promise<T> {
  const bridge = signalOf(token);
  try {
    return await work(bridge.signal);
  } finally {
    bridge.dispose();
  }
}
