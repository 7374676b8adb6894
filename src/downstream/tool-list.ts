/**
 * Reading a downstream's tool list leniently (T12, P4): every page is fetched, each tool is
 * checked on its own, and a list gets a stable fingerprint so a reconnect or a
 * `tools/list_changed` only triggers T10 when something really changed.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { isRecord } from '../core/json.js';

/**
 * P7: the tools/call result schema. Anything the downstream sends is the normalizer's to judge
 * (N10 makes it total); the SDK's strict schema throws on unknown blocks, non-object
 * structuredContent and outputSchema mismatches.
 */
export const LenientCallToolResultSchema = z.unknown();

/**
 * `tools/list` result as the wire may carry it. Deliberately loose: the SDK's strict schema fails
 * the WHOLE list when one tool is malformed (ARCHITECTURE facts); we check tools one by one.
 */
export const LenientListToolsResultSchema = z.looseObject({
  tools: z.unknown(),
  nextCursor: z.unknown().optional(),
});

/** One page as returned by the lenient schema. */
export type LenientListToolsResult = z.infer<typeof LenientListToolsResultSchema>;

/** A tool dropped from a listing, with why (T12). */
export interface DroppedTool {
  /** The tool's name when it had a string one, else `#<index>` in the listing. */
  readonly name: string;
  readonly reason: string;
}

/** The usable tools of a listing and the ones dropped. */
export interface CheckedTools {
  readonly tools: readonly Tool[];
  readonly dropped: readonly DroppedTool[];
}

/**
 * T12: keeps every entry that is an object with a non-empty string `name` and an object
 * `inputSchema`; drops the rest with a reason, and drops later duplicates of a name (a downstream
 * that lists one name twice cannot route both). Deeper schema checks (object-type input schemas,
 * outputSchemas that compile) belong to the catalog, which owns Ajv.
 */
export function checkTools(entries: readonly unknown[]): CheckedTools {
  const tools: Tool[] = [];
  const dropped: DroppedTool[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    if (!isRecord(entry)) {
      dropped.push({ name: `#${index}`, reason: 'not an object' });
      return;
    }
    const name = entry['name'];
    if (typeof name !== 'string' || name.length === 0) {
      dropped.push({ name: `#${index}`, reason: 'no string name' });
      return;
    }
    if (!isRecord(entry['inputSchema'])) {
      dropped.push({ name, reason: 'inputSchema is not an object' });
      return;
    }
    if (seen.has(name)) {
      dropped.push({ name, reason: 'duplicate name (the first one is kept)' });
      return;
    }
    seen.add(name);
    tools.push(entry as Tool);
  });
  return { tools, dropped };
}

/**
 * Upper bound on pages per listing: a downstream that keeps returning new cursors must not keep
 * us listing forever.
 */
export const MAX_LIST_PAGES = 1000;

/**
 * Follows every `nextCursor` and returns the raw entries of all pages. `fetchPage` performs one
 * `tools/list` request. Throws (with a clear message) on a page without a `tools` array, a
 * cursor that repeats, or more than {@link MAX_LIST_PAGES} pages.
 */
export function listAllPages(
  fetchPage: (cursor: string | undefined) => Promise<LenientListToolsResult>,
): Promise<unknown[]> {
  return listAllEntries('tools/list', 'tools', fetchPage);
}

/**
 * {@link listAllPages} for any paginated list (U5: `prompts/list`, `resources/list`,
 * `resources/templates/list`): `key` names the result's array of entries, `method` is for the
 * error messages. Same bounds: no array, a repeated cursor or too many pages throw.
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
