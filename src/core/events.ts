/** Something that holds a resource until `dispose` is called (VS Code's shape, without `vscode`). */
export interface Disposable {
  dispose(): void;
}

export type Listener<T> = (event: T) => void;

/**
 * A minimal event emitter: `event` is what a class exposes as `onDidX`, `fire` stays private to it.
 * A listener that throws does not stop the others, nor the change that fired the event.
 */
export class Emitter<T> {
  private readonly listeners = new Set<Listener<T>>();
  private readonly onListenerError: ((error: unknown) => void) | undefined;

  constructor(onListenerError?: (error: unknown) => void) {
    this.onListenerError = onListenerError;
  }

  readonly event = (listener: Listener<T>): Disposable => {
    // Wrapped so that subscribing the same function twice gives two independent subscriptions.
    const entry: Listener<T> = (e) => listener(e);
    this.listeners.add(entry);
    return {
      dispose: () => {
        this.listeners.delete(entry);
      },
    };
  };

  fire(event: T): void {
    for (const listener of [...this.listeners]) {
      try {
        listener(event);
      } catch (e) {
        this.onListenerError?.(e);
      }
    }
  }

  get size(): number {
    return this.listeners.size;
  }

  dispose(): void {
    this.listeners.clear();
  }
}
