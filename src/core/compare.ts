/**
 * Deep equality of JSON values and a short, bounded diff: what N2 needs to decide whether a JSON
 * text block disagrees with `structuredContent`, and to say how in one log line.
 */
import {
  isJsonObject,
  parsedJsonBytesBound,
  safeStringify,
  stringJsonBytesBound,
  type JsonParse,
} from './json.js';

/**
 * Deep equality of two JSON values (key order is irrelevant, array order is not). Iterative, so a
 * deeply nested payload cannot overflow the stack.
 * @example jsonEqual({ a: 1, b: [2] }, { b: [2], a: 1 }) // true
 */
export function jsonEqual(a: unknown, b: unknown): boolean {
  const stack: unknown[] = [a, b];
  while (stack.length > 0) {
    const y = stack.pop();
    const x = stack.pop();
    if (x === y) continue;
    if (typeof x !== 'object' || typeof y !== 'object' || x === null || y === null) return false;
    if (Array.isArray(x)) {
      if (!Array.isArray(y) || x.length !== y.length) return false;
      for (let i = 0; i < x.length; i++) stack.push(x[i], y[i]);
      continue;
    }
    if (Array.isArray(y)) return false;
    const xo = x as Record<string, unknown>;
    const yo = y as Record<string, unknown>;
    const keys = Object.keys(xo);
    if (keys.length !== Object.keys(yo).length) return false;
    for (const key of keys) {
      if (!Object.prototype.hasOwnProperty.call(yo, key)) return false;
      stack.push(xo[key], yo[key]);
    }
  }
  return true;
}

/** Limits of {@link jsonDiff}. */
export interface DiffOptions {
  /**
   * How many differing paths to report.
   * @default 3
   */
  readonly maxPaths?: number;
  /**
   * Maximum length of the whole diff string.
   * @default 300
   */
  readonly maxLength?: number;
}

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;
const MAX_DEPTH = 64;
const VALUE_CHARS = 40;

function childPath(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

function show(value: unknown, present: boolean): string {
  if (!present) return '(missing)';
  const text = safeStringify(value);
  return text.length > VALUE_CHARS ? `${text.slice(0, VALUE_CHARS - 1)}…` : text;
}

/**
 * A short description of where two JSON values differ: the first few differing paths, each as
 * `path: left ≠ right`, joined by `; `, bounded in length. Empty when the values are equal.
 * @example jsonDiff({ a: { b: 1 } }, { a: { b: 2 } }) // '$.a.b: 1 ≠ 2'
 */
export function jsonDiff(left: unknown, right: unknown, options: DiffOptions = {}): string {
  const maxPaths = options.maxPaths ?? 3;
  const maxLength = options.maxLength ?? 300;
  const found: string[] = [];
  let more = false;

  const walk = (a: unknown, b: unknown, path: string, depth: number, aHas: boolean, bHas: boolean): void => {
    if (more) return;
    if (aHas && bHas && depth < MAX_DEPTH) {
      if (Array.isArray(a) && Array.isArray(b)) {
        const n = Math.max(a.length, b.length);
        for (let i = 0; i < n && !more; i++) {
          walk(a[i], b[i], childPath(path, i), depth + 1, i < a.length, i < b.length);
        }
        return;
      }
      if (isJsonObject(a) && isJsonObject(b)) {
        const keys = new Set([...Object.keys(a), ...Object.keys(b)]);
        for (const key of keys) {
          if (more) return;
          const inA = Object.prototype.hasOwnProperty.call(a, key);
          const inB = Object.prototype.hasOwnProperty.call(b, key);
          walk(a[key], b[key], childPath(path, key), depth + 1, inA, inB);
        }
        return;
      }
    }
    if (aHas === bHas && jsonEqual(a, b)) return;
    // One path past the limit only sets `more`: the reader learns there is more without the cost.
    if (found.length >= maxPaths) more = true;
    else found.push(`${path}: ${show(a, aHas)} ≠ ${show(b, bHas)}`);
  };

  walk(left, right, '$', 0, true, true);
  let text = found.join('; ');
  if (more) text += '; …';
  return text.length > maxLength ? `${text.slice(0, maxLength - 1)}…` : text;
}

/** The only key of `value` when it is an object with exactly one key. */
function soleKey(value: unknown): string | undefined {
  if (!isJsonObject(value)) return undefined;
  let found: string | undefined;
  for (const key in value) {
    if (!Object.prototype.hasOwnProperty.call(value, key)) continue;
    if (found !== undefined) return undefined;
    found = key;
  }
  return found;
}

/**
 * N2: does the text block `text` (parsed to `parsed`) say the same as `structured`? Returns an
 * upper bound on the structured value's JSON size when it does (for N9), `undefined` otherwise.
 *
 * Equal means deeply equal, or the single-key wrapper that MCP forces on servers: structuredContent
 * must be an object, so a server returning an array or a string wraps it (`{entities: [...]}` with
 * the bare array as text, server-memory; `{content: "<file text>"}` with the file's text, which
 * may itself be JSON, server-filesystem). Flagging those would put a warning on every call of the
 * reference servers, while the two channels do agree.
 */
export function textAgrees(structured: unknown, text: string, parsed: JsonParse): number | undefined {
  if (parsed.ok && jsonEqual(structured, parsed.value)) return parsedJsonBytesBound(text.length);
  const key = soleKey(structured);
  if (key === undefined) return undefined;
  const inner = (structured as Record<string, unknown>)[key];
  const wrapper = stringJsonBytesBound(key) + 3;
  if (inner === text) return stringJsonBytesBound(text) + wrapper;
  if (parsed.ok && jsonEqual(inner, parsed.value)) return parsedJsonBytesBound(text.length) + wrapper;
  return undefined;
}
