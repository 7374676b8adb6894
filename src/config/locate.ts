/**
 * Where a setting was written: key path → file:line:col (C5).
 *
 * Locations come from the parsed yaml Document and its LineCounter, so they are exact for YAML
 * and for JSON alike (JSON files are parsed with the yaml package: YAML is a superset of JSON).
 */
import { isMap, isScalar, isSeq, type Document, type LineCounter, type Node } from 'yaml';
import { closest } from '../core/suggest.js';

/** A key path into the config tree: object keys and array indices. */
export type KeyPath = readonly (string | number)[];

/**
 * One problem found in a config file (C5): what is wrong, where, and how to fix it.
 * Rendered as one line by `formatProblem` in load.ts.
 */
export interface ConfigProblem {
  /** The file the problem is in (the main config or a `servers_dir` file). */
  readonly file: string;
  /** One-based line, when known. */
  readonly line?: number;
  /** One-based column, when known. */
  readonly column?: number;
  /** The key path in that file's tree (empty for the whole file or a syntax error). */
  readonly path: KeyPath;
  /** What is wrong, then how to fix it. */
  readonly message: string;
  /**
   * A warning about a key that is ignored (C2: an `mcpServers` entry's key we do not use):
   * `check` counts these as problems, since a misspelt key does nothing (C5).
   */
  readonly ignoredKey?: true;
}

/** One parsed file: its name, its yaml Document and the LineCounter that saw its text. */
export interface ParsedFile {
  readonly file: string;
  readonly doc: Document;
  readonly lineCounter: LineCounter;
}

const PLAIN_KEY = /^[A-Za-z0-9_$-]+$/;

/**
 * A key path as users read it: `servers.fs.args[2]`; keys with dots or spaces are quoted
 * (`servers["my.server"].url`) so the path stays unambiguous.
 * @example formatPath(['servers', 'fs', 'args', 2]) // 'servers.fs.args[2]'
 */
export function formatPath(path: KeyPath): string {
  let out = '';
  for (const segment of path) {
    if (typeof segment === 'number') out += `[${segment}]`;
    else if (PLAIN_KEY.test(segment)) out += out === '' ? segment : `.${segment}`;
    else out += `[${JSON.stringify(segment)}]`;
  }
  return out;
}

interface Found {
  /** The deepest node found along the path (the value when the whole path exists). */
  readonly node?: Node;
  /** The key node of the last map entry found along the path. */
  readonly key?: Node;
  /** True when every segment of the path was found. */
  readonly complete: boolean;
}

function keyMatches(key: unknown, segment: string | number): boolean {
  const value = isScalar(key) ? key.value : key;
  return String(value) === String(segment);
}

/** Walks the document's nodes along `path`, as far as it goes. */
function walk(doc: Document, path: KeyPath): Found {
  let node: unknown = doc.contents;
  let key: Node | undefined;
  let deepest: Node | undefined = (doc.contents as Node | null) ?? undefined;
  for (const segment of path) {
    if (isMap(node)) {
      const pair = node.items.find((item) => keyMatches(item.key, segment));
      if (pair === undefined) return { node: deepest, key, complete: false };
      key = (pair.key as Node | null) ?? undefined;
      node = pair.value;
      // A key with no value (`fs:`) has a null value node: point at the key then.
      deepest = (pair.value as Node | null) ?? key;
    } else if (isSeq(node) && typeof segment === 'number') {
      const item: unknown = node.items[segment];
      if (item === undefined || item === null) return { node: deepest, key, complete: false };
      node = item;
      deepest = item as Node;
    } else {
      return { node: deepest, key, complete: false };
    }
  }
  return { node: deepest, key, complete: true };
}

/** Line and column of a node's first character, when the node has a range. */
function position(
  node: Node | undefined,
  lineCounter: LineCounter,
): { line: number; column: number } | undefined {
  const offset = node?.range?.[0];
  if (offset === undefined) return undefined;
  const { line, col } = lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * Line and column of the value at `path` (or, with `target: 'key'`, of its key: used for unknown
 * keys, so the message points at the typo). A path that does not exist in the file (a missing
 * key) resolves to the deepest ancestor that does.
 */
export function locate(
  parsed: ParsedFile,
  path: KeyPath,
  target: 'value' | 'key' = 'value',
): { line?: number; column?: number } {
  const found = walk(parsed.doc, path);
  const node = target === 'key' && found.complete && found.key !== undefined ? found.key : found.node;
  return position(node, parsed.lineCounter) ?? {};
}

/** Line and column of a character offset in the file's text. */
export function locateOffset(
  parsed: Pick<ParsedFile, 'lineCounter'>,
  offset: number,
): { line: number; column: number } {
  const { line, col } = parsed.lineCounter.linePos(offset);
  return { line, column: col };
}

/**
 * A ConfigProblem for `path` in `parsed`, located at the value (or key).
 * @example problemAt(parsed, ['servers', 'fs', 'comand'], 'unknown key "comand"', 'key')
 */
export function problemAt(
  parsed: ParsedFile,
  path: KeyPath,
  message: string,
  target: 'value' | 'key' = 'value',
): ConfigProblem {
  return { file: parsed.file, ...locate(parsed, path, target), path, message };
}

/* ------------------------------------------------------------------------------------------------
 * zod issues → problems (C5): one problem per unknown key, wrong type or bad value, located at
 * the key or value it is about, with expected vs got and a "did you mean".
 * --------------------------------------------------------------------------------------------- */

interface ZodDefLike {
  readonly type?: string;
  readonly shape?: Record<string, unknown>;
  readonly innerType?: unknown;
  readonly in?: unknown;
  readonly keyType?: unknown;
  readonly valueType?: unknown;
  readonly element?: unknown;
  readonly entries?: Record<string, string>;
}

function defOf(schema: unknown): ZodDefLike | undefined {
  return (schema as { _zod?: { def?: ZodDefLike } } | undefined)?._zod?.def;
}

/** Strips optional/nullable/default/prefault/pipe wrappers. */
function unwrap(schema: unknown): ZodDefLike | undefined {
  let def = defOf(schema);
  for (let depth = 0; def !== undefined && depth < 10; depth++) {
    const inner = def.innerType ?? (def.type === 'pipe' ? def.in : undefined);
    if (inner === undefined) break;
    def = defOf(inner);
  }
  return def;
}

function schemaAt(schema: unknown, path: KeyPath): unknown {
  let current = schema;
  for (const segment of path) {
    const def = unwrap(current);
    if (def?.type === 'object') current = def.shape?.[String(segment)];
    else if (def?.type === 'record') current = def.valueType;
    else if (def?.type === 'array') current = def.element;
    else return undefined;
  }
  return current;
}

/** The keys valid at `path`: an object's keys, or a record's enum keys (error types). */
function keysAt(schema: unknown, path: KeyPath): { keys: string[]; enumKeys: boolean } {
  const def = unwrap(schemaAt(schema, path));
  if (def?.type === 'object') return { keys: Object.keys(def.shape ?? {}), enumKeys: false };
  const keyDef = def?.type === 'record' ? unwrap(def.keyType) : undefined;
  if (keyDef?.type === 'enum') return { keys: Object.values(keyDef.entries ?? {}), enumKeys: true };
  return { keys: [], enumKeys: false };
}

/** Reads the value at `path` in a plain tree (what the user wrote, after interpolation). */
export function valueAt(tree: unknown, path: KeyPath): unknown {
  let current = tree;
  for (const segment of path) {
    if (current === null || typeof current !== 'object') return undefined;
    current = (current as Record<string | number, unknown>)[segment];
  }
  return current;
}

/** "got …" for a value: `string "abc"`, `number 5`, `a list`, `a map`, `null`. */
export function describeValue(value: unknown): string {
  if (value === undefined) return 'nothing';
  if (value === null) return 'nothing (null)';
  if (Array.isArray(value)) return 'a list';
  if (typeof value === 'object') return 'a map';
  if (typeof value === 'string') {
    const shown = value.length > 40 ? `${value.slice(0, 37)}...` : value;
    return `string ${JSON.stringify(shown)}`;
  }
  return `${typeof value} ${String(value)}`;
}

const TYPE_NAMES: Record<string, string> = {
  object: 'a map',
  record: 'a map',
  array: 'a list',
  string: 'string',
  number: 'number',
  int: 'integer',
  boolean: 'true or false',
};

/** The subset of a zod 4 issue that the messages read. */
export interface IssueLike {
  readonly code: string;
  readonly path: readonly PropertyKey[];
  readonly message: string;
  readonly expected?: string;
  readonly keys?: readonly string[];
  readonly values?: readonly unknown[];
  readonly origin?: string;
  readonly minimum?: unknown;
  readonly maximum?: unknown;
  /** false for an exclusive bound (`.positive()`: more than 0). */
  readonly inclusive?: boolean;
  readonly format?: string;
}

function suggestion(name: string, candidates: readonly string[]): string {
  const [best] = closest(name, candidates, { limit: 1 });
  return best === undefined ? '' : ` (did you mean "${best}"?)`;
}

function unknownKeyMessage(key: string, path: KeyPath, schema: unknown): string {
  const { keys, enumKeys } = keysAt(schema, path);
  const hint = suggestion(key, keys);
  if (enumKeys) return `unknown error type "${key}"${hint}; valid: ${keys.join(', ')}`;
  // VS Code's mcp.json prompts for secrets with `inputs`; we read them from the environment.
  if (path.length === 0 && key === 'inputs') {
    return 'unknown key "inputs": VS Code inputs are not supported; pass secrets as environment variables with ${VAR}';
  }
  if (hint !== '') return `unknown key "${key}"${hint}`;
  return `unknown key "${key}": remove it; valid keys here: ${keys.join(', ')}`;
}

function bound(issue: IssueLike, value: unknown, op: '>=' | '<='): string {
  const limit = String(op === '>=' ? issue.minimum : issue.maximum);
  if (issue.origin === 'string')
    return op === '>=' ? 'must not be empty' : `must be at most ${limit} characters`;
  if (issue.origin === 'array') return `expected a list of ${op} ${limit} items`;
  const strict = issue.inclusive === false ? op.slice(0, 1) : op;
  return `expected a number ${strict} ${limit}, got ${describeValue(value)}`;
}

/**
 * One problem per zod issue (several for an issue listing several unknown keys), at most `limit`;
 * `skipped` counts the rest.
 * @param schema the schema that produced the issues, to list valid keys for "did you mean"
 * @param tree the validated tree, to say what was written ("got …")
 */
export function issueProblems(
  parsed: ParsedFile,
  schema: unknown,
  tree: unknown,
  issue: IssueLike,
  limit = Number.POSITIVE_INFINITY,
): { problems: ConfigProblem[]; skipped: number } {
  if (issue.code === 'unrecognized_keys') {
    const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
    const keys = issue.keys ?? [];
    const shown = keys.slice(0, limit);
    return {
      problems: shown.map((key) =>
        problemAt(parsed, [...path, key], unknownKeyMessage(key, path, schema), 'key'),
      ),
      skipped: keys.length - shown.length,
    };
  }
  return {
    problems: limit > 0 ? oneIssueProblem(parsed, schema, tree, issue) : [],
    skipped: limit > 0 ? 0 : 1,
  };
}

function oneIssueProblem(
  parsed: ParsedFile,
  schema: unknown,
  tree: unknown,
  issue: IssueLike,
): ConfigProblem[] {
  const path = issue.path.map((segment) => (typeof segment === 'number' ? segment : String(segment)));
  const value = valueAt(tree, path);
  switch (issue.code) {
    case 'invalid_type': {
      const expected = TYPE_NAMES[issue.expected ?? ''] ?? issue.expected ?? 'another type';
      if (value === undefined) return [problemAt(parsed, path, `required: expected ${expected}`)];
      return [problemAt(parsed, path, `expected ${expected}, got ${describeValue(value)}`)];
    }
    case 'invalid_value': {
      const options = (issue.values ?? []).map(String);
      const hint = typeof value === 'string' ? suggestion(value, options) : '';
      return [
        problemAt(parsed, path, `expected one of ${options.join(' | ')}, got ${describeValue(value)}${hint}`),
      ];
    }
    case 'too_small':
      return [problemAt(parsed, path, bound(issue, value, '>='))];
    case 'too_big':
      return [problemAt(parsed, path, bound(issue, value, '<='))];
    case 'invalid_format':
      return [problemAt(parsed, path, `${issue.message}, got ${describeValue(value)}`)];
    case 'invalid_key':
      return [
        problemAt(parsed, path, `invalid key ${JSON.stringify(path.at(-1))}: keys must not be empty`, 'key'),
      ];
    default:
      return [problemAt(parsed, path, issue.message)];
  }
}
