import * as vscode from 'vscode';
import type { AuditEntry, Log } from '../core/ports.ts';

/** The audit trail in a LogOutputChannel: tool, target, verdict, decider, duration, outcome — never contents. */
export class AuditLog implements Log {
  readonly channel: vscode.LogOutputChannel;
  /** Every entry of this window's session (the tests read it; it holds no file contents). */
  readonly entries: AuditEntry[] = [];
  /** This window's warnings (setting problems, ignored loosening values), for the gate status and the tests. */
  readonly warnings: string[] = [];

  constructor() {
    this.channel = vscode.window.createOutputChannel('Workspace Tools', { log: true });
  }

  audit(entry: AuditEntry): void {
    this.entries.push(entry);
    if (this.entries.length > 10_000) this.entries.shift();
    const line = `${entry.tool} ${JSON.stringify(entry.target)} ${entry.verdict} by ${entry.decidedBy} in ${entry.durationMs} ms: ${entry.outcome}`;
    if (entry.verdict === 'allowed') this.channel.info(line);
    else this.channel.warn(line);
  }

  info(message: string): void {
    this.channel.info(message);
  }
  warn(message: string): void {
    this.warnings.push(message);
    if (this.warnings.length > 1_000) this.warnings.shift();
    this.channel.warn(message);
  }

  dispose(): void {
    this.channel.dispose();
  }
}
