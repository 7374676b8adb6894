/**
 * What the lists and calls of a downstream are read with (P4, P7, T10): lenient result schemas
 * (the SDK's strict ones fail a whole list for one bad entry, and a call for an imperfect
 * result), the bounded walk over a list's pages, and a key-order-independent fingerprint so a
 * reconnect or a `list_changed` only triggers T10 when something really changed.
 */
import { z } from 'zod';
import { isRecord } from '../core/json.js';

/**
 * P7: the tools/call result schema. Anything the downstream sends is the normalizer's to judge
 * (N10 makes it total); the SDK's strict schema throws on unknown blocks, non-object
 * structuredContent and outputSchema mismatches.
 */
export const LenientCallToolResultSchema = z.unknown();

/**
 * Upper bound on pages per listing: a downstream that keeps returning new cursors must not keep
 * us listing forever.
 */
export const MAX_LIST_PAGES = 1000;

/**
 * Follows every `nextCursor` of a paginated list (`tools/list`, `prompts/list`, `resources/list`,
 * `resources/templates/list`) and returns the raw entries of all pages: `key` names the result's
 * array of entries, `method` is for the error messages. Throws (with a clear message) on a page
 * without that array, a cursor that repeats, or more than {@link MAX_LIST_PAGES} pages.
 */
export async function listAllEntries(
  method: string,
  key: string,
  fetchPage: (cursor: string | undefined) => Promise<Record<string, unknown>>,
): Promise<unknown[]> {
  const entries: unknown[] = [];
  const cursors = new Set<string>();
  let cursor: string | undefined;
  for (let page = 0; page < MAX_LIST_PAGES; page++) {
    const result = await fetchPage(cursor);
    const items = result[key];
    if (!Array.isArray(items)) {
      throw new Error(`${method} page ${page + 1} has no "${key}" array`);
    }
    entries.push(...(items as unknown[]));
    const next = result['nextCursor'];
    if (typeof next !== 'string' || next.length === 0) return entries;
    if (cursors.has(next)) throw new Error(`${method} returned the cursor "${next}" twice`);
    cursors.add(next);
    cursor = next;
  }
  throw new Error(`${method} returned more than ${MAX_LIST_PAGES} pages`);
}

/**
 * JSON with object keys sorted at every level, so two lists that differ only in key order get
 * the same fingerprint. Tool definitions are parsed JSON (no cycles, no functions).
 */
export function stableJson(value: unknown): string {
  if (Array.isArray(value)) return `[${value.map((item) => stableJson(item ?? null)).join(',')}]`;
  if (isRecord(value)) {
    const keys = Object.keys(value)
      .filter((key) => value[key] !== undefined)
      .sort();
    return `{${keys.map((key) => `${JSON.stringify(key)}:${stableJson(value[key])}`).join(',')}}`;
  }
  return JSON.stringify(value) ?? 'null';
}
