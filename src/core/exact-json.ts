/**
 * JSON that loses no digit (N13). `JSON.parse` turns every number into a double: the text
 * `18446744073709551616` (2^64) becomes 18446744073709552000, `1e400` becomes `Infinity` (which
 * serializes as `null`), `-0` loses its sign. The digits a server wrote must reach the model, so
 * a number that a double cannot carry exactly is kept as a string holding exactly the digits the
 * server wrote; every other number stays a number.
 *
 * Exact means: the double's shortest decimal form (`String(n)`, what `JSON.stringify` writes)
 * denotes the same decimal number as the text. `19.90` → 19.9 is exact (the same number);
 * `0.30000000000000004` is exact; `9007199254740993` is not.
 *
 * Cost: one regular-expression test of the text when it holds no number that could be inexact
 * (fewer than 16 digits in a row, no exponent, no negative zero), which is nearly always; else one
 * scan of its tokens, and a second `JSON.parse` only when something had to be kept as text.
 */

/**
 * True when `text` may hold a number token a double cannot carry: 16 or more digits (and points)
 * in a row, an exponent, or a negative zero, each where a JSON number token can start (the text's
 * start, or after whitespace, `:`, `,` or `[`: a value outside a string has nothing else before
 * it). False positives (such a run inside a string) cost a scan, never a wrong value; a word such
 * as `record-0` or `x1e5` inside a string is no longer one (a 1 MiB document of such words was
 * scanned whole, twice per call: docs/performance-log.md).
 */
const MAYBE_INEXACT = /(?:^|[\s:,[])(?:-?\d[\d.]{15}|-?\d+(?:\.\d*)?[eE][-+]?\d|-0(?:\.0*)?(?![\d.eE]))/;

/** True when `text` may hold a number a double cannot carry (cheap; see {@link MAYBE_INEXACT}). */
export function mayHoldInexactNumber(text: string): boolean {
  return MAYBE_INEXACT.test(text);
}

/** A JSON string (skipped whole) or a number token, outside strings. */
const TOKENS = /"[^"\\]*(?:\\.[^"\\]*)*"|-?\d+(?:\.\d+)?(?:[eE][-+]?\d+)?/g;

/** A decimal number as sign, significant digits and the exponent of their last digit. */
interface Decimal {
  readonly negative: boolean;
  readonly digits: string;
  readonly exponent: number;
}

/** `-12.50e3` → { negative: true, digits: '125', exponent: 2 }; zero has digits ''. */
function decimal(token: string): Decimal {
  const negative = token.startsWith('-');
  const body = negative ? token.slice(1) : token;
  const e = body.search(/[eE]/);
  const mantissa = e < 0 ? body : body.slice(0, e);
  let exponent = e < 0 ? 0 : Number(body.slice(e + 1));
  const point = mantissa.indexOf('.');
  let digits = point < 0 ? mantissa : mantissa.slice(0, point) + mantissa.slice(point + 1);
  if (point >= 0) exponent -= mantissa.length - point - 1;
  digits = digits.replace(/^0+/, '');
  const trimmed = digits.replace(/0+$/, '');
  exponent += digits.length - trimmed.length;
  return { negative, digits: trimmed, exponent: trimmed === '' ? 0 : exponent };
}

/**
 * True when `JSON.parse(token)` serializes back to the same decimal number.
 * @example isExactNumber('19.90') // true
 * @example isExactNumber('18446744073709551616') // false
 */
export function isExactNumber(token: string): boolean {
  const value = Number(token);
  if (!Number.isFinite(value)) return false;
  const written = decimal(token);
  // JSON.stringify(-0) is "0": the sign the server wrote would be lost.
  if (written.digits === '') return !written.negative;
  const read = decimal(String(value));
  return (
    read.negative === written.negative && read.digits === written.digits && read.exponent === written.exponent
  );
}

/** The outcome of {@link parseJsonExact}. */
export type ExactParse =
  | { readonly ok: true; readonly value: unknown; readonly inexact: readonly string[] }
  | { readonly ok: false };

const NOT_JSON: ExactParse = Object.freeze({ ok: false });
const NONE: readonly string[] = Object.freeze([]);

/**
 * `text` with every number token a double cannot carry replaced by a JSON string of its digits,
 * and those tokens; undefined when there is none (the text is used as it is).
 * @example keepInexactNumbers('{"n":18446744073709551616}') // { text: '{"n":"18446744073709551616"}', inexact: ['18446744073709551616'] }
 */
export function keepInexactNumbers(text: string): { text: string; inexact: string[] } | undefined {
  if (!MAYBE_INEXACT.test(text)) return undefined;
  let out: string[] | undefined;
  const inexact: string[] = [];
  let last = 0;
  TOKENS.lastIndex = 0;
  for (let match = TOKENS.exec(text); match !== null; match = TOKENS.exec(text)) {
    const token = match[0];
    if (token.charCodeAt(0) === 0x22 /* " */ || isExactNumber(token)) continue;
    out ??= [];
    out.push(text.slice(last, match.index), `"${token}"`);
    last = match.index + token.length;
    inexact.push(token);
  }
  if (out === undefined) return undefined;
  out.push(text.slice(last));
  return { text: out.join(''), inexact };
}

/**
 * `JSON.parse` that keeps every digit (see the module header); never throws.
 * @example parseJsonExact('{"n": 1e400}') // { ok: true, value: { n: '1e400' }, inexact: ['1e400'] }
 */
export function parseJsonExact(text: string): ExactParse {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return NOT_JSON;
  }
  const kept = keepInexactNumbers(text);
  if (kept === undefined) return { ok: true, value, inexact: NONE };
  try {
    return { ok: true, value: JSON.parse(kept.text), inexact: kept.inexact };
  } catch {
    // Cannot happen (only number tokens changed, into strings); the plain parse stands.
    return { ok: true, value, inexact: NONE };
  }
}
