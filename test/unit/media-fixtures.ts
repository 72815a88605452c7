import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import * as nodePath from 'node:path';
import { SandboxError, type SandboxCode } from '../../src/core/errors.ts';
import { NodeFs } from '../../src/core/fs/node-fs.ts';
import type { Clock, FileStat, WriteOptions } from '../../src/core/ports.ts';

/** Asserts that `promise` rejects with exactly this sandbox code and message. */
export async function rejectsWith(promise: Promise<unknown>, code: SandboxCode, message: string): Promise<void> {
  await assert.rejects(promise, (e: unknown) => {
    assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
    assert.equal(e.message, message);
    assert.equal(e.code, code);
    return true;
  });
}

/** Throws synchronously with exactly this sandbox code and message. */
export function throwsWith(fn: () => unknown, code: SandboxCode, message: string): void {
  assert.throws(fn, (e: unknown) => {
    assert.ok(e instanceof SandboxError, `expected a SandboxError, got ${String(e)}`);
    assert.equal(e.message, message);
    assert.equal(e.code, code);
    return true;
  });
}

/** A clock the test moves by hand. */
export function manualClock(start = 1_700_000_000_000): Clock & { advance(ms: number): void } {
  let now = start;
  return {
    now: () => now,
    advance: (ms: number) => {
      now += ms;
    },
  };
}

export function errno(code: string, message = code): Error {
  return Object.assign(new Error(message), { code });
}

type Fault = (address: string) => void | Promise<void>;

/**
 * The real node fs, with faults injected at the port: each hook runs before the real call and may
 * throw to simulate what the disk or the process did.
 */
export class FaultyFs extends NodeFs {
  beforeWrite: Fault | undefined;
  beforeRename: ((from: string, to: string) => void | Promise<void>) | undefined;
  beforeDelete: Fault | undefined;
  /** Runs before each lstat: the person acting at that moment. */
  beforeLstat: ((address: string) => void) | undefined;
  readonly writes: string[] = [];
  readonly renames: [string, string][] = [];

  override async writeFile(address: string, data: Uint8Array, options?: WriteOptions): Promise<void> {
    this.writes.push(address);
    await this.beforeWrite?.(address);
    await super.writeFile(address, data, options);
  }

  override async rename(from: string, to: string): Promise<void> {
    this.renames.push([from, to]);
    await this.beforeRename?.(from, to);
    await super.rename(from, to);
  }

  override async lstat(address: string): Promise<FileStat> {
    this.beforeLstat?.(address);
    return super.lstat(address);
  }

  override async delete(address: string): Promise<void> {
    await this.beforeDelete?.(address);
    await super.delete(address);
  }
}

/** Names in a folder, sorted (to assert that no temp file was left behind). */
export function namesIn(folder: string): string[] {
  return readdirSync(folder).sort();
}

export function join(...parts: string[]): string {
  return nodePath.join(...parts);
}
