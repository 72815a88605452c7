import type * as z from 'zod';
import type { ModelPath, ResolvedPath, ResolveOptions } from './paths.ts';
import type { PageBudget } from './results/budget.ts';
import type { Session } from './session.ts';
import type { ToolName } from './tools/names.ts';

export type Risk = 'read' | 'write';

/** What a tool needs from the host; a tool whose needs are missing is not registered. */
/** `search`: a search backend over local paths; `ripgrep`: an rg binary (artifact spools are always local). */
export type Capability = 'streaming' | 'symlinks' | 'search' | 'ripgrep' | 'writable';

/** What the search backend declares; schemas are built from it. */
export interface SchemaDeclaration {
  readonly supportsFollow: boolean;
}

export interface ToolMeta {
  readonly name: ToolName;
  readonly displayName: string;
  /** For the person (manifest userDescription). */
  readonly userDescription: string;
  /** For the model (manifest modelDescription). */
  readonly description: string;
  readonly risk: Risk;
  readonly requires: readonly Capability[];
  /** A codicon id, e.g. "file". */
  readonly icon: string;
}

/** The paths a call addresses, known before any I/O, for the gate to decide on. */
export interface CallTargets {
  readonly paths: readonly ModelPath[];
  /** One line for the person: what the call does, e.g. `search "TODO" in src`. */
  readonly summary: string;
  /**
   * A write call that also reads the targets' current bytes (stage_file without content): it is
   * judged by the read rules too, so a read-denied file cannot be staged and read back.
   */
  readonly reads?: boolean;
  /** The bytes this call writes came from a protected path (a tainted media): the person is asked every time. */
  readonly taint?: { readonly from: string; readonly rule: string };
}

export interface ToolContext {
  readonly session: Session;
  readonly signal: AbortSignal;
  /** How much of a result reaches the model in one piece; a larger result goes to a result artifact. */
  readonly page: PageBudget;
  /**
   * The I/O step of path translation for one of this call's gated targets. Refuses a path the gate
   * did not see, and re-checks the policy on where the path really leads.
   */
  resolve(path: ModelPath, options?: ResolveOptions): Promise<ResolvedPath>;
}

export interface ToolDefinition<S extends z.ZodType, R> extends ToolMeta {
  readonly schema: (declaration: SchemaDeclaration) => S;
  /** Pure: no disk I/O (in-memory stores may be read). Throws a SandboxError for a path it refuses. */
  readonly targets: (input: z.infer<S>, session: Session) => CallTargets;
  readonly run: (input: z.infer<S>, ctx: ToolContext) => Promise<R>;
  /** The compact text the model receives. */
  readonly render: (result: R) => string;
}

/** A prepared, validated call: input parsed, targets known, nothing touched yet. */
export interface PreparedInput {
  readonly targets: CallTargets;
  execute(ctx: ToolContext): Promise<ToolOutcome>;
}

export interface ToolOutcome {
  /** The typed result, as JSON (what the CLI prints). */
  readonly result: unknown;
  /** The rendering for the model. */
  readonly text: string;
}

/** A tool with its types erased, as the registry and hosts hold it. */
export interface Tool extends ToolMeta {
  inputSchema(declaration: SchemaDeclaration): z.ZodType;
  /** `input` must already be validated against `inputSchema`. */
  prepare(input: unknown, session: Session): PreparedInput;
}

export function defineTool<S extends z.ZodType, R>(definition: ToolDefinition<S, R>): Tool {
  const { schema, targets, run, render, ...meta } = definition;
  return {
    ...meta,
    inputSchema: schema,
    prepare(input, session) {
      const typed = input as z.infer<S>;
      return {
        targets: targets(typed, session),
        async execute(ctx) {
          const result = await run(typed, ctx);
          return { result, text: render(result) };
        },
      };
    },
  };
}
