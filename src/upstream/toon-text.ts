/**
 * F6: `output.text: toon`: the text block as TOON (Token-Oriented Object Notation) when the
 * envelope holds a table and the TOON is shorter; else the JSON as it is.
 */
import { encode as encodeToon } from '@toon-format/toon';

/** F6: the fewest rows of a table for TOON to pay (fewer measured larger in tokens than JSON). */
const TOON_MIN_ROWS = 3;

/**
 * F6: true when `value` holds a table TOON writes as rows: an array of at least
 * {@link TOON_MIN_ROWS} objects with the same keys and only primitive values.
 */
function hasTable(value: unknown, depth = 0): boolean {
  if (depth > 8 || typeof value !== 'object' || value === null) return false;
  if (Array.isArray(value)) {
    if (value.length >= TOON_MIN_ROWS && isTable(value)) return true;
    return value.some((item) => hasTable(item, depth + 1));
  }
  return Object.values(value).some((item) => hasTable(item, depth + 1));
}

function isTable(rows: readonly unknown[]): boolean {
  let keys: string | undefined;
  for (const row of rows) {
    if (typeof row !== 'object' || row === null || Array.isArray(row)) return false;
    const values = Object.values(row);
    if (values.some((v) => typeof v === 'object' && v !== null)) return false;
    const own = Object.keys(row).join('\n');
    if ((keys ??= own) !== own) return false;
  }
  return true;
}

/**
 * F6: the envelope as TOON when it holds a table (tables of uniform objects shrink by a third and
 * more) and the TOON is shorter, else the JSON: measured with a tokenizer over the golden corpus,
 * TOON of small or nested envelopes is shorter in characters but longer in tokens than compact
 * JSON. Decoding either gives back the same envelope.
 */
export function shorterToon(json: string): string {
  // From the JSON, not the object: the text must decode to what JSON says (-0 is 0, ...).
  const plain: unknown = JSON.parse(json);
  if (!hasTable(plain)) return json;
  const toon = encodeToon(plain);
  return toon.length < json.length ? toon : json;
}
