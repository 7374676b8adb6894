/**
 * JSON helpers for the output path: serialization that never throws, UTF-8 byte counting without
 * `Buffer`, and a JSON parse that refuses prose cheaply (N9, N10).
 */
import { parseJsonExact } from './exact-json.js';
import { NativeBuffer } from './native.js';

/** What {@link safeStringify} returns when even the cycle-safe replacer fails. */
export const UNSERIALIZABLE = '"[unserializable]"';

/** A plain JSON object as read from an untrusted payload. */
export type JsonObject = Record<string, unknown>;

/**
 * `record[key]` only when `record` has `key` as its own property: a downstream's names (a tool
 * called `constructor`, a MIME type `__proto__`) must never read what `Object.prototype` has.
 * @example ownValue({ a: 1 }, 'constructor') // undefined
 */
export function ownValue<V>(record: Readonly<Record<string, V>> | undefined, key: string): V | undefined {
  return record !== undefined && Object.hasOwn(record, key) ? record[key] : undefined;
}

/** Whether `value` nests objects or arrays deeper than `max` levels. Iterative: never overflows. */
export function deeperThan(value: unknown, max: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** True for a non-null, non-array object, its values unknown. */
export function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** True for a non-null, non-array object (the only shape MCP calls an "object"). */
export function isJsonObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/**
 * Replacer for the second layer: marks cycles, stringifies BigInt. It tracks the ancestors of the
 * current key (not every object seen), so a value referenced twice without a cycle is serialized
 * twice instead of being reported as circular.
 */
function cycleSafeReplacer(): (this: unknown, key: string, value: unknown) => unknown {
  const ancestors: unknown[] = [];
  return function replace(this: unknown, _key: string, value: unknown): unknown {
    if (typeof value === 'bigint') return value.toString();
    if (typeof value !== 'object' || value === null) return value;
    while (ancestors.length > 0 && ancestors[ancestors.length - 1] !== this) ancestors.pop();
    if (ancestors.includes(value)) return '[Circular]';
    ancestors.push(value);
    return value;
  };
}

/**
 * JSON text of any value; never throws (N10: the output path is total). Layers: plain
 * `JSON.stringify` (the fast path), then a cycle- and BigInt-safe replacer, then the fixed
 * sentinel {@link UNSERIALIZABLE} (a throwing `toJSON`, for instance). Values JSON cannot express
 * at top level (`undefined`, functions, symbols) give `null`.
 * @example safeStringify({ a: 1n }) // '{"a":"1"}'
 */
export function safeStringify(value: unknown): string {
  try {
    return JSON.stringify(value) ?? 'null';
  } catch {
    try {
      return JSON.stringify(value, cycleSafeReplacer()) ?? 'null';
    } catch {
      return UNSERIALIZABLE;
    }
  }
}

/**
 * JSON text of a JSON value with every object's keys in code-unit order, so two values equal as
 * JSON give one text whatever order their keys came in (a fingerprint of tool arguments, Q3).
 * Total like {@link safeStringify}.
 * @example canonicalJson({ b: 1, a: [{ d: 2, c: 3 }] }) // '{"a":[{"c":3,"d":2}],"b":1}'
 */
export function canonicalJson(value: unknown): string {
  try {
    return (
      JSON.stringify(value, (_key, item: unknown) =>
        isRecord(item)
          ? Object.fromEntries(Object.entries(item).sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0)))
          : item,
      ) ?? 'null'
    );
  } catch {
    return UNSERIALIZABLE;
  }
}

/**
 * Number of bytes `str` takes in UTF-8. A lone surrogate counts as 3 bytes (U+FFFD), as
 * `TextEncoder` would encode it.
 * @example utf8ByteLength('é') // 2
 */
export function utf8ByteLength(str: string): number {
  if (NativeBuffer !== undefined) return NativeBuffer.byteLength(str, 'utf8');
  return portableUtf8ByteLength(str);
}

/** {@link utf8ByteLength} without `Buffer`: a scan of the UTF-16 code units. */
export function portableUtf8ByteLength(str: string): number {
  let bytes = str.length;
  for (let i = 0; i < str.length; i++) {
    const c = str.charCodeAt(i);
    if (c < 0x80) continue;
    if (c < 0x800) {
      bytes += 1;
    } else if (c >= 0xd800 && c <= 0xdbff && i + 1 < str.length) {
      const next = str.charCodeAt(i + 1);
      if (next >= 0xdc00 && next <= 0xdfff) {
        // A surrogate pair is 2 code units and 4 bytes.
        bytes += 2;
        i++;
      } else {
        bytes += 2;
      }
    } else {
      bytes += 2;
    }
  }
  return bytes;
}

/**
 * True when `str` takes more than `limit` bytes in UTF-8. Decides from the length alone when it
 * can (a UTF-16 code unit is 1 to 3 bytes), so most strings are never scanned.
 */
export function utf8ExceedsLimit(str: string, limit: number): boolean {
  if (str.length > limit) return true;
  if (str.length * 3 <= limit) return false;
  return utf8ByteLength(str) > limit;
}

/**
 * The outcome of {@link tryParseJson}: the value, and the number tokens kept as strings because a
 * double could not carry their digits (N13).
 */
export type JsonParse = { ok: true; value: unknown; inexact: readonly string[] } | { ok: false };

const NOT_JSON: JsonParse = Object.freeze({ ok: false });

/** Index of the first non-whitespace character (JSON whitespace: space, tab, CR, LF). */
function firstSignificant(text: string): number {
  let i = 0;
  while (i < text.length) {
    const c = text.charCodeAt(i);
    if (c !== 0x20 && c !== 0x0a && c !== 0x0d && c !== 0x09) return i;
    i++;
  }
  return i;
}

/**
 * True when `text` could be JSON judging by its first significant character: `{`, `[`, `"`, a
 * digit, `-`, or the first letter of `true`, `false`, `null`. Prose almost always fails this, so
 * the (expensive) parse is skipped for it.
 */
export function looksLikeJson(text: string): boolean {
  const i = firstSignificant(text);
  if (i >= text.length) return false;
  const c = text.charCodeAt(i);
  return (
    c === 0x7b /* { */ ||
    c === 0x5b /* [ */ ||
    c === 0x22 /* " */ ||
    c === 0x2d /* - */ ||
    (c >= 0x30 && c <= 0x39) ||
    c === 0x74 /* t */ ||
    c === 0x66 /* f */ ||
    c === 0x6e /* n */
  );
}

/**
 * Parses `text` as JSON when it looks like JSON ({@link looksLikeJson}), keeping every digit
 * (N13: a number a double cannot carry becomes a string of its digits); never throws.
 * @example tryParseJson('{"a":1}') // { ok: true, value: { a: 1 }, inexact: [] }
 * @example tryParseJson('done.') // { ok: false } (no parse attempted)
 */
export function tryParseJson(text: string): JsonParse {
  if (!looksLikeJson(text)) return NOT_JSON;
  return parseJsonExact(text);
}

/**
 * An upper bound on the UTF-8 size of the compact JSON of `JSON.parse(text)`, from the text's
 * length alone, so that N9 can skip a stringify when the text was small. Re-serializing never
 * lengthens whitespace, keys or strings beyond 6 bytes per code unit (a raw lone surrogate becomes
 * `\ud800`; anything else is at most 3 bytes). Only a number token can grow (`1e20` becomes 21
 * digits): an expanding token has at least 3 characters plus a separator and serializes to at
 * most 24 characters plus that separator, i.e. under 6.25 bytes per text character. Hence
 * bytes ≤ 7L + 12, generously.
 */
export function parsedJsonBytesBound(textLength: number): number {
  return 7 * textLength + 12;
}

/**
 * An upper bound on the UTF-8 size of `JSON.stringify(str)`: a control character escapes to 6
 * bytes (`\u001f`), any other code unit to at most 3, plus the two quotes.
 */
export function stringJsonBytesBound(str: string): number {
  return 6 * str.length + 2;
}
