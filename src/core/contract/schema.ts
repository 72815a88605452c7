import * as z from 'zod';
import { invalidInput } from '../errors.ts';

/** A workspace-relative path argument. */
/** What the search backend declares; schemas are built from it. */
export interface SchemaDeclaration {
  readonly supportsFollow: boolean;
}

export function pathArgument(what: string): z.ZodString {
  return z
    .string()
    .min(1)
    .describe(
      `${what}, relative to the workspace folder ("src/app.ts"); in a multi-root workspace start with the folder's name.`,
    );
}

/** Longest pattern or glob handed to ripgrep, in UTF-8 bytes (the kernel caps one argument at 128 KiB). */
export const RIPGREP_ARGUMENT_MAX_BYTES = 64 * 1024;

/**
 * A pattern or glob that reaches ripgrep's command line. Security: a NUL cannot be passed in an
 * argument (spawning would fail with an internal error), nor can an argument over the kernel's limit.
 */
export function ripgrepArgument(): z.ZodString {
  return z
    .string()
    .min(1)
    .refine((s) => !s.includes('\0'), {
      error:
        'it contains a NUL character, which cannot be passed to ripgrep; to match a NUL byte, write \\x00 in a regex (literal: false)',
    })
    .refine((s) => Buffer.byteLength(s) <= RIPGREP_ARGUMENT_MAX_BYTES, {
      error: `it is longer than ${RIPGREP_ARGUMENT_MAX_BYTES} bytes, more than ripgrep can be given; shorten it`,
    });
}

const editSchema = z.strictObject({
  find: z
    .string()
    .min(1, { error: 'find is empty, and an empty find would match everywhere; give the exact text to replace' })
    .describe('Exact text to find (must match once unless replace_all; line endings may differ).'),
  replace: z.string().describe('Text to put in its place.'),
  replace_all: z.boolean().optional().describe('Replace every occurrence instead of requiring exactly one.'),
});

/** The edits media_apply_patch applies (and stage_file with `patch`): one find/replace, a list of them, or a unified diff. */
export function patchArgument() {
  return z
    .union(
      [
        editSchema,
        z.array(editSchema).min(1),
        z.strictObject({ unified: z.string().min(1).describe("A unified diff against the media's content.") }),
      ],
      {
        error:
          'expected one {find, replace, replace_all?} edit with a non-empty find, a non-empty list of such edits, or {unified: "<unified diff>"}, with no other keys',
      },
    )
    .describe(
      'One {find, replace, replace_all?} edit, a list of them applied in order, or {unified: "<unified diff>"}.',
    );
}

/**
 * An explicit bound: an integer >= 1. 0, negatives, fractions, Infinity and NaN are rejected so a
 * caller can never name a bound and silently get an unbounded result.
 */
export function boundArgument(description: string): z.ZodNumber {
  return z.number().int().min(1).describe(description);
}

/**
 * Security: following symlinks lets a search leave the workspace, so `follow` is only accepted when
 * the search backend declares it audited (`supportsFollow`). Undeclared, only `false` is valid.
 */
export function followRejectedUnlessDeclared(
  declaration: SchemaDeclaration,
): z.ZodOptional<z.ZodBoolean> | z.ZodOptional<z.ZodLiteral<false>> {
  if (declaration.supportsFollow) return z.boolean().optional().describe('Follow symbolic links while searching.');
  return z
    .literal(false)
    .optional()
    .describe(
      'Following symbolic links is not supported by this search backend (pending a containment audit); only false is accepted.',
    );
}

type JsonSchemaProperty = {
  description?: string;
  enum?: unknown[];
  const?: unknown;
  type?: string | string[];
  minimum?: number;
};
type ObjectJsonSchema = { properties?: Record<string, JsonSchemaProperty>; required?: string[] };

function acceptedValues(property: JsonSchemaProperty | undefined): string {
  if (!property) return '';
  if (property.enum) return `one of ${property.enum.map((v) => JSON.stringify(v)).join(', ')}`;
  if (property.const !== undefined) return `only ${JSON.stringify(property.const)}`;
  if (property.type === 'integer')
    return `an integer${property.minimum !== undefined ? ` >= ${property.minimum}` : ''}`;
  if (property.type) return `a ${Array.isArray(property.type) ? property.type.join(' or ') : property.type}`;
  return '';
}

function describeReceived(issue: z.core.$ZodIssue, raw: unknown): string {
  let value: unknown = raw;
  for (const key of issue.path) {
    if (typeof value !== 'object' || value === null) return '';
    value = (value as Record<PropertyKey, unknown>)[key as PropertyKey];
  }
  if (value === undefined) return '';
  if (typeof value === 'number' && !Number.isFinite(value)) return ` (got ${String(value)})`;
  const text = JSON.stringify(value);
  return text === undefined ? '' : ` (got ${text.length > 60 ? text.slice(0, 60) + '…' : text})`;
}

/**
 * Validates `raw` against a tool's strict schema; every failure names the argument and the values
 * it accepts.
 */
export function validateInput<S extends z.ZodType>(toolName: string, schema: S, raw: unknown): z.infer<S> {
  if (typeof raw !== 'object' || raw === null || Array.isArray(raw)) {
    throw invalidInput(
      `${toolName} takes a JSON object of arguments, not ${raw === null ? 'null' : Array.isArray(raw) ? 'an array' : typeof raw}.`,
      '',
    );
  }
  const result = schema.safeParse(raw);
  if (result.success) return result.data;
  const json = z.toJSONSchema(schema, { io: 'input', unrepresentable: 'any' }) as ObjectJsonSchema;
  const properties = json.properties ?? {};
  const accepted = Object.keys(properties).join(', ') || '(none)';
  const lines = result.error.issues.map((issue) => {
    if (issue.code === 'unrecognized_keys') {
      return `Unknown argument${issue.keys.length > 1 ? 's' : ''} ${issue.keys.map((k) => `"${k}"`).join(', ')}; ${toolName} accepts: ${accepted}.`;
    }
    const name = issue.path.map(String).join('.') || '(arguments)';
    const top = typeof issue.path[0] === 'string' ? properties[issue.path[0]] : undefined;
    const expected = acceptedValues(top);
    const received = describeReceived(issue, raw);
    if (issue.code === 'invalid_type' && received === '' && issue.path.length === 1) {
      return `Missing required argument "${name}"${expected ? `: ${expected}` : ''}.`;
    }
    return `Argument "${name}" is invalid${received}: ${issue.message}${expected ? `; expected ${expected}` : ''}.`;
  });
  throw invalidInput(`${toolName}: ${lines.join(' ')} Fix the arguments and call again.`, '');
}
