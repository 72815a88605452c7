import { askedEveryTime, askRuleKind, type GateCall, type Verdict } from '../core/gate.ts';
import type { Gate } from '../core/ports.ts';
import { describeProtectedGlobs } from '../core/policy/protected.ts';
import type { CliArgs } from './args.ts';

/**
 * The CLI's gate: nobody is here to ask, so `--gate` decides, and a call the core says must be asked
 * every time (a secret, a protected write, tainted bytes, a file with several names) is refused
 * unless `--allow-secrets`.
 */
export function cliGate(args: Pick<CliArgs, 'gate' | 'allowSecrets'>): Gate {
  return async (call) => {
    if (args.gate === 'deny')
      return {
        allow: false,
        decidedBy: 'cli',
        reason: {
          what: `${call.tool} was refused: this CLI session runs with --gate deny, which refuses every call.`,
          next: 'Do not retry.',
        },
      };
    if (askedEveryTime(call) !== undefined && !args.allowSecrets) return unconfirmed(call);
    return { allow: true, decidedBy: 'cli' };
  };
}

/** The CLI's refusal of a call that must be asked every time (as the core decided why), with nobody here to ask. */
function unconfirmed(call: GateCall): Verdict {
  const refused = (what: string, next: string): Verdict => ({ allow: false, decidedBy: 'cli', reason: { what, next } });
  const rerun = 'and nobody is here to confirm it (rerun with --allow-secrets to approve secrets and protected files)';
  const because = askedEveryTime(call);
  switch (because?.kind) {
    case 'taint':
      return refused(
        `${call.tool} on "${call.targets[0]?.display}" was refused: its content was staged from "${because.from}", which the rule "${because.rule}" protects, ${rerun}.`,
        'Do not retry with another media or path.',
      );
    case 'protected-writes':
      return refused(
        `${call.tool} with allow_protected_writes was refused: it would let the command write protected files (${describeProtectedGlobs(because.globs)}), ${rerun}.`,
        'Run it without allow_protected_writes, or tell the user which protected file the command must change.',
      );
    case 'links':
      return refused(
        `${call.tool} on "${because.target.display}" was refused: the file has ${because.links} names (hard links), one of which may be protected or outside the workspace, and nobody is here to confirm it (rerun with --allow-secrets to approve secrets, protected files and files with several names).`,
        'Do not retry it under another name.',
      );
    case 'rule':
      return refused(
        `${call.tool} on "${because.target.display}" was refused: it matches the ${askRuleKind(because.target)} rule "${because.target.rule}", ${rerun}.`,
        'Do not retry with another spelling of the path.',
      );
    case 'secret':
    case undefined:
      return refused(
        `${call.tool} was refused: a rule asks about it every time, ${rerun}.`,
        'Do not retry it another way.',
      );
  }
}
