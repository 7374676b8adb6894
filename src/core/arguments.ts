/**
 * Argument validation against the downstream inputSchema (CONTRACT T8): Ajv errors become issues
 * with a JSON Pointer path, and `strict_arguments` adds unknown top-level keys. The schemas are
 * checked and compiled by `schema-compiler.ts`.
 */
import { ownValue, isRecord } from './json.js';
import type { ErrorObject, ValidateFunction } from 'ajv';
import type { SchemaCompiler } from './schema-compiler.js';
import { closest } from './suggest.js';

/**
 * T8: one problem with a call's arguments. `path` is a JSON Pointer (RFC 6901) to the offending
 * value: `""` is the arguments object itself, `/query/limit` a nested key, `/items/0` an array
 * element. For a missing or unknown key the pointer names that key (`/path`), not its parent.
 */
export interface ArgumentIssue {
  readonly path: string;
  readonly message: string;
}

/** T8: validates one call's arguments; `undefined` means valid. */
export type ArgumentValidator = (args: unknown) => readonly ArgumentIssue[] | undefined;

/** T8: at most this many issues are reported per call, so one bad call cannot flood a prompt. */
export const MAX_ISSUES = 20;

function escapePointer(key: string): string {
  return key.replace(/~/g, '~0').replace(/\//g, '~1');
}

/** Ajv errors → issues; a missing/unknown key points at the key itself. */
function toIssues(errors: readonly ErrorObject[]): ArgumentIssue[] {
  const issues: ArgumentIssue[] = [];
  const seen = new Set<string>();
  for (const error of errors) {
    let path = error.instancePath;
    const params = error.params as Record<string, unknown>;
    const key = params['missingProperty'] ?? params['additionalProperty'] ?? params['unevaluatedProperty'];
    if (typeof key === 'string') path += `/${escapePointer(key)}`;
    const message = error.message ?? error.keyword;
    const id = `${path}\n${message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push({ path, message });
  }
  return issues;
}

const SCHEMA_DECIDES = ['additionalProperties', 'patternProperties', 'unevaluatedProperties'] as const;

/** Follows a local `#/$defs/x` or `#/definitions/x` reference; anything else is unknown. */
function resolveLocal(
  root: Record<string, unknown>,
  node: Record<string, unknown>,
): Record<string, unknown> | undefined {
  const ref = node['$ref'];
  if (typeof ref !== 'string') return node;
  const match = /^#\/(\$defs|definitions)\/([^/]+)$/.exec(ref);
  const defs = match ? ownValue(root, match[1] ?? '') : undefined;
  const target = match && isRecord(defs) ? ownValue(defs, match[2] ?? '') : undefined;
  return isRecord(target) ? target : undefined;
}

/**
 * T8 strict mode: the top-level keys the schema knows, or `undefined` when the schema itself
 * decides about extra keys (`additionalProperties`, `patternProperties`,
 * `unevaluatedProperties`, anywhere at the top level) or uses a reference we cannot follow.
 * Keys from `allOf`/`anyOf`/`oneOf`/`then`/`else` members count as known, so composed schemas are
 * not broken by a naive `additionalProperties: false`.
 */
export function knownTopLevelKeys(schema: Record<string, unknown>): ReadonlySet<string> | undefined {
  const keys = new Set<string>();
  const nodes: Record<string, unknown>[] = [schema];
  for (let i = 0; i < nodes.length && i < 100; i++) {
    const node = resolveLocal(schema, nodes[i] ?? {});
    if (!node) return undefined;
    if (SCHEMA_DECIDES.some((keyword) => keyword in node)) return undefined;
    if (isRecord(node['properties'])) for (const key of Object.keys(node['properties'])) keys.add(key);
    if (Array.isArray(node['required']))
      for (const key of node['required']) if (typeof key === 'string') keys.add(key);
    for (const keyword of ['allOf', 'anyOf', 'oneOf']) {
      const members = node[keyword];
      if (Array.isArray(members)) nodes.push(...members.filter(isRecord));
    }
    for (const keyword of ['then', 'else']) {
      const member = node[keyword];
      if (isRecord(member)) nodes.push(member);
    }
  }
  return keys;
}

/** Options of {@link argumentValidator}. */
export interface ArgumentValidatorOptions {
  /**
   * T8: also reject top-level keys the schema does not declare, unless the schema itself says
   * what extra keys may be (see {@link knownTopLevelKeys}). Config `strict_arguments`.
   * @default false
   */
  readonly strictArguments: boolean;
}

/**
 * T8: a validator for one tool's inputSchema. Arguments that are not an object give one issue at
 * the root; otherwise every Ajv error becomes an issue (at most {@link MAX_ISSUES}), plus, in
 * strict mode, one issue per unknown top-level key. The Ajv validator is compiled on the first
 * call (see {@link createSchemaCompiler}); should Ajv refuse a schema that passed
 * {@link SchemaCompiler.check}, the arguments are left to the downstream's own validation rather
 * than refusing every call of a listed tool.
 */
export function argumentValidator(
  compiler: SchemaCompiler,
  schema: Record<string, unknown>,
  options: ArgumentValidatorOptions,
): ArgumentValidator {
  const known = options.strictArguments ? knownTopLevelKeys(schema) : undefined;
  const hintable = known ? [...known].filter((key) => key.length >= 3) : [];
  let compiled: ValidateFunction | string | undefined;
  return (args) => {
    if (!isRecord(args)) {
      const got = args === null ? 'null' : Array.isArray(args) ? 'an array' : typeof args;
      return [{ path: '', message: `arguments must be an object, got ${got}` }];
    }
    const check = (compiled ??= compiler.validator(schema));
    const issues = typeof check === 'string' || check(args) ? [] : toIssues(check.errors ?? []);
    if (known) {
      for (const key of Object.keys(args)) {
        if (known.has(key)) continue;
        // Hints between one- or two-letter names are noise (`closest` also counts containment,
        // so "extra" would suggest "a").
        const near = key.length >= 3 ? closest(key, hintable, { limit: 1 }) : [];
        const hint = near[0] === undefined ? '' : `; did you mean "${near[0]}"?`;
        issues.push({ path: `/${escapePointer(key)}`, message: `is not a known argument${hint}` });
      }
    }
    return issues.length === 0 ? undefined : issues.slice(0, MAX_ISSUES);
  };
}
