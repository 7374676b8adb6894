/**
 * Environment interpolation over the PARSED config tree (C4, L2).
 *
 * Working on string scalars after YAML parsing (not on the raw text) means a value can never
 * break the YAML structure: a password with `: ` or `#` in it stays one string.
 *
 * Syntax, in string values only (keys are never interpolated):
 * - `${VAR}`: the variable's value; unset → an error naming the variable (C4). Set but empty → "".
 * - `${VAR:-default}`: the default when VAR is unset OR empty (shell semantics), so
 *   `token: ${MCP_NORMALIZER_TOKEN:-}` gives "" (no token). The default is literal text.
 * - `$${`: a literal `${` (Docker Compose's escape). A lone `$` or `$VAR` without braces is
 *   literal text, so `$` in passwords needs no escaping.
 * Names are `[A-Za-z_][A-Za-z0-9_]*`; anything else inside `${…}` is an error.
 *
 * Pure: the env map is a parameter.
 */
import { secretScrubber } from '../core/secrets.js';
import type { KeyPath } from './locate.js';

/** A problem found while interpolating one string value. */
export interface InterpolationError {
  /** Path of the string value in the tree. */
  readonly path: KeyPath;
  /** The variable, when the problem is about one. */
  readonly variable?: string;
  readonly message: string;
}

/** What {@link interpolate} returns. */
export interface InterpolationResult {
  /** A copy of the tree with every reference replaced (unchanged where a reference failed). */
  readonly value: unknown;
  /** Non-empty env values that were substituted: they must never be logged (L2). */
  readonly secrets: readonly string[];
  /** Paths of every string value that contained at least one reference. */
  readonly interpolatedPaths: readonly KeyPath[];
  readonly errors: readonly InterpolationError[];
}

/** Environment variables, as `process.env` gives them. */
export type EnvMap = Readonly<Record<string, string | undefined>>;

const NAME = /^[A-Za-z_][A-Za-z0-9_]*$/;

interface StringResult {
  readonly text: string;
  readonly used: boolean;
  readonly secrets: string[];
  readonly errors: { variable?: string; message: string }[];
}

/** Interpolates one string. Exported for the table test. */
export function interpolateString(input: string, env: EnvMap): StringResult {
  let text = '';
  let used = false;
  const secrets: string[] = [];
  const errors: { variable?: string; message: string }[] = [];
  let i = 0;
  while (i < input.length) {
    if (input.startsWith('$${', i)) {
      text += '${';
      i += 3;
      used = true;
      continue;
    }
    if (!input.startsWith('${', i)) {
      text += input[i];
      i += 1;
      continue;
    }
    used = true;
    const end = input.indexOf('}', i + 2);
    if (end === -1) {
      errors.push({
        message: `unclosed "\${" in "${input}": close it with "}", or write "$\${" for a literal "\${"`,
      });
      text += input.slice(i);
      break;
    }
    const body = input.slice(i + 2, end);
    const separator = body.indexOf(':-');
    const name = separator === -1 ? body : body.slice(0, separator);
    const fallback = separator === -1 ? undefined : body.slice(separator + 2);
    if (!NAME.test(name)) {
      errors.push({
        message: `invalid variable reference "\${${body}}": write \${NAME} or \${NAME:-default} (NAME: letters, digits, _)`,
      });
      text += input.slice(i, end + 1);
    } else {
      const value = env[name];
      if (value !== undefined && (value !== '' || fallback === undefined)) {
        text += value;
        if (value !== '') secrets.push(value);
      } else if (fallback !== undefined) {
        text += fallback;
      } else {
        errors.push({
          variable: name,
          message: `environment variable "${name}" is not set: set it, or give a default with \${${name}:-default}`,
        });
        text += input.slice(i, end + 1);
      }
    }
    i = end + 1;
  }
  return { text, used, secrets, errors };
}

/**
 * Replaces `${VAR}` references in every string value of `tree` (C4).
 * @example interpolate({ url: 'http://${HOST:-localhost}' }, {}).value // { url: 'http://localhost' }
 */
export function interpolate(tree: unknown, env: EnvMap): InterpolationResult {
  const secrets = new Set<string>();
  const interpolatedPaths: KeyPath[] = [];
  const errors: InterpolationError[] = [];

  const visit = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      if (!node.includes('${')) return node;
      const result = interpolateString(node, env);
      if (result.used) interpolatedPaths.push(path);
      for (const secret of result.secrets) secrets.add(secret);
      for (const error of result.errors) errors.push({ path, ...error });
      return result.text;
    }
    if (Array.isArray(node)) return node.map((item, index) => visit(item, [...path, index]));
    if (node !== null && typeof node === 'object') {
      const out: Record<string, unknown> = {};
      for (const [key, value] of Object.entries(node)) {
        // defineProperty, not assignment: a `__proto__` key must stay a plain key.
        Object.defineProperty(out, key, {
          value: visit(value, [...path, key]),
          enumerable: true,
          writable: true,
          configurable: true,
        });
      }
      return out;
    }
    return node;
  };

  const value = visit(tree, []);
  return { value, secrets: [...secrets], interpolatedPaths, errors };
}

/**
 * A string produced by interpolation, read as the number or boolean the schema expects there:
 * `port: ${PORT:-3333}` must give a number although interpolation yields text. Returns
 * undefined when the text is not such a value (the schema then reports the type error).
 */
export function retype(text: string, expected: string): number | boolean | undefined {
  const trimmed = text.trim();
  if (expected === 'number' && /^-?\d+(\.\d+)?$/.test(trimmed)) return Number(trimmed);
  if (expected === 'boolean' && (trimmed === 'true' || trimmed === 'false')) return trimmed === 'true';
  return undefined;
}

/** Text with every secret value (at least 4 characters long, core/secrets.ts) replaced (L2). */
export function redactSecrets(text: string, secrets: readonly string[]): string {
  return secretScrubber(secrets)?.(text) ?? text;
}
