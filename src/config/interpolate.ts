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
  /**
   * L2: non-empty env values substituted where a secret goes ({@link isSecretReference}): they
   * never reach any output. Any other value (a path, a host, a port) is no secret.
   */
  readonly secrets: readonly string[];
  /** L2: every non-empty env value substituted, secret or not: never in a log line (the shared L2). */
  readonly values: readonly string[];
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
  /** Every non-empty env value substituted. */
  readonly values: string[];
  readonly errors: { variable?: string; message: string }[];
}

/**
 * L2: words that make a name a credential's: a variable (`GITHUB_TOKEN`, `DB_PASSWORD`), an env
 * entry of a server (`OPENAI_API_KEY:`) or a config key (`client_secret`, `state_key`,
 * `headers`, `auth`).
 */
const CREDENTIAL = /key|token|secret|passw|pwd|credential|auth|cookie|session|private|signature|header/i;

/** Where a `${VAR}` reference stands: its variable, the string's text around it, the config path. */
export interface ReferenceSite {
  readonly name: string;
  readonly before: string;
  readonly after: string;
  readonly path: readonly (string | number)[];
}

/**
 * L2: whether the value of a reference is a secret: its variable's name says it is one or it is
 * listed in `secret_env`; it stands under a key that names a credential (`headers`, `auth`,
 * `token`, `client_secret`, an env entry `API_KEY`...); or it is a URL's user information or
 * query (`https://${USER}:${PASS}@host`, `?key=${K}`). A path, a host or a port is none.
 */
export function isSecretReference(site: ReferenceSite, marked: ReadonlySet<string> = new Set()): boolean {
  if (marked.has(site.name) || CREDENTIAL.test(site.name)) return true;
  if (site.path.some((key) => typeof key === 'string' && CREDENTIAL.test(key))) return true;
  if (site.before.includes('?')) return true;
  // user information: after `scheme://`, before an `@` that comes before the path.
  const authority = /^[A-Za-z][A-Za-z0-9+.-]*:\/\/([^/?#]*)$/.exec(site.before);
  return authority !== null && !authority[1]!.includes('@') && /^[^/?#]*@/.test(site.after);
}

/**
 * L2: the values a server entry holds in credential positions, written literally or not: every
 * header's value, each env entry whose name says it is a credential, and its URL's password and
 * the values of query parameters whose names do.
 */
export function credentialValues(entry: {
  readonly headers?: unknown;
  readonly env?: unknown;
  readonly url?: unknown;
}): string[] {
  const values = (record: unknown, pick: (key: string) => boolean): string[] =>
    record !== null && typeof record === 'object'
      ? Object.entries(record).flatMap(([key, value]) =>
          typeof value === 'string' && pick(key) ? [value] : [],
        )
      : [];
  const out = [...values(entry.headers, () => true), ...values(entry.env, (key) => CREDENTIAL.test(key))];
  if (typeof entry.url === 'string') {
    try {
      const url = new URL(entry.url);
      if (url.password !== '') out.push(decodeURIComponent(url.password));
      for (const [key, value] of url.searchParams) if (CREDENTIAL.test(key) && value !== '') out.push(value);
    } catch {
      // Not a URL: the schema says so.
    }
  }
  return out;
}

/** Interpolates one string. Exported for the table test. */
export function interpolateString(
  input: string,
  env: EnvMap,
  /** Whether the value of the reference to `name` at `before`/`after` is a secret (default: all). */
  secretAt: (name: string, before: string, after: string) => boolean = () => true,
): StringResult {
  let text = '';
  let used = false;
  const secrets: string[] = [];
  const values: string[] = [];
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
        if (value !== '') values.push(value);
        if (value !== '' && secretAt(name, input.slice(0, i), input.slice(end + 1))) secrets.push(value);
        text += value;
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
  return { text, used, secrets, values, errors };
}

/**
 * Replaces `${VAR}` references in every string value of `tree` (C4).
 * @example interpolate({ url: 'http://${HOST:-localhost}' }, {}).value // { url: 'http://localhost' }
 */
export function interpolate(tree: unknown, env: EnvMap): InterpolationResult {
  const secrets = new Set<string>();
  const values = new Set<string>();
  // L2: variables the config marks as secrets wherever they stand.
  const listed = (tree as { secret_env?: unknown } | null)?.secret_env;
  const marked = new Set(Array.isArray(listed) ? listed.filter((name) => typeof name === 'string') : []);
  const interpolatedPaths: KeyPath[] = [];
  const errors: InterpolationError[] = [];

  const visit = (node: unknown, path: (string | number)[]): unknown => {
    if (typeof node === 'string') {
      if (!node.includes('${')) return node;
      const result = interpolateString(node, env, (name, before, after) =>
        isSecretReference({ name, before, after, path }, marked),
      );
      if (result.used) interpolatedPaths.push(path);
      for (const secret of result.secrets) secrets.add(secret);
      for (const value of result.values) values.add(value);
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
  return { value, secrets: [...secrets], values: [...values], interpolatedPaths, errors };
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
