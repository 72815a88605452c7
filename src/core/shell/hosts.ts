/** A command's request to reach a host no setting allows, as the person is asked about it. */
export interface HostRequest {
  readonly host: string;
  readonly port: number | undefined;
  /** The commands running when it was made, as shown (the sandbox cannot tell which of them made it when several run at once). */
  readonly commands: readonly string[];
}

/** The person's answer about a host: this once, for the rest of the session, or not. */
export type HostAnswer = 'allow-once' | 'allow-session' | 'deny';

/**
 * The host's gate for network hosts (a modal in VS Code, elicitation over MCP, a refusal in the
 * CLI). Asked only about hosts neither `allowedDomains` nor an earlier "for this session" covers.
 */
export type HostDecider = (request: HostRequest, signal: AbortSignal) => Promise<HostAnswer>;

/** A host as remembered: case does not matter in a host name. */
const keyOf = (host: string): string => host.toLowerCase();

/** An answer that comes when the person answers, or `deny` once the call ended (a modal cannot be taken back). */
function untilAborted(answer: Promise<HostAnswer>, signal: AbortSignal): Promise<HostAnswer> {
  if (signal.aborted) return Promise.resolve('deny');
  return new Promise((resolve) => {
    const onAbort = (): void => resolve('deny');
    signal.addEventListener('abort', onAbort, { once: true });
    answer.then(resolve, () => resolve('deny')).finally(() => signal.removeEventListener('abort', onAbort));
  });
}

/**
 * The network hosts the person allowed "for this session", and the questions about hosts being
 * asked now. Security: a host is remembered only when the person said so; an answer for one
 * connection covers only that connection, and one question is asked at a time per host (a
 * command that opens ten connections does not open ten dialogs).
 */
export class SessionHosts {
  private readonly allowed = new Set<string>();
  private readonly pending = new Map<string, Promise<HostAnswer>>();

  /** The hosts allowed for the session so far. */
  get remembered(): readonly string[] {
    return [...this.allowed].sort();
  }

  /** Forgets every host allowed for the session; returns how many there were. */
  forget(): number {
    const count = this.allowed.size;
    this.allowed.clear();
    return count;
  }

  /**
   * Whether one connection to `host` may go through: allowed for the session already, or the
   * person's answer now (`deny` when there is nobody to ask).
   */
  async ask(
    host: string,
    port: number | undefined,
    commands: readonly string[],
    decide: HostDecider | undefined,
    signal: AbortSignal,
  ): Promise<HostAnswer> {
    const key = keyOf(host);
    if (this.allowed.has(key)) return 'allow-session';
    if (decide === undefined) return 'deny';
    let asking = this.pending.get(key);
    if (asking === undefined) {
      asking = decide({ host, port, commands }, signal).catch((): HostAnswer => 'deny');
      this.pending.set(key, asking);
      void asking.then((answer) => {
        this.pending.delete(key);
        if (answer === 'allow-session') this.allowed.add(key);
      });
    }
    return untilAborted(asking, signal);
  }
}
