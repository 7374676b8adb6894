/**
 * Reading a downstream's prompts, resources and resource templates leniently (U5, in the manner
 * of T12 for tools): every page is fetched, each entry is checked on its own against the SDK's
 * schema (an upstream SDK client would otherwise reject our WHOLE list for one bad entry), and a
 * malformed or duplicate entry is dropped with a reason.
 */
import type { Prompt, Resource, ResourceTemplateType } from '@modelcontextprotocol/server';
import { PromptSchema, ResourceSchema, ResourceTemplateSchema } from '@modelcontextprotocol/core';
import { z } from 'zod';
import { listAllEntries } from './tool-list.js';

/** The lists of one downstream that U5 aggregates. */
export interface FeatureLists {
  readonly prompts: readonly Prompt[];
  readonly resources: readonly Resource[];
  readonly resourceTemplates: readonly ResourceTemplateType[];
}

/** No prompts, no resources: a server without those capabilities, or not listed yet. */
export const EMPTY_FEATURES: FeatureLists = Object.freeze({
  prompts: Object.freeze([]),
  resources: Object.freeze([]),
  resourceTemplates: Object.freeze([]),
});

/** Which capability a list belongs to: `prompts` or `resources` (resources and templates). */
export type FeatureCapability = 'prompts' | 'resources';

/** One list request: its method, the result key holding the entries, and the key naming one. */
interface ListSpec<T> {
  readonly method: 'prompts/list' | 'resources/list' | 'resources/templates/list';
  readonly key: 'prompts' | 'resources' | 'resourceTemplates';
  readonly id: 'name' | 'uri' | 'uriTemplate';
  readonly schema: z.ZodType<T>;
}

export const PROMPTS_LIST: ListSpec<Prompt> = {
  method: 'prompts/list',
  key: 'prompts',
  id: 'name',
  schema: PromptSchema as z.ZodType<Prompt>,
};
export const RESOURCES_LIST: ListSpec<Resource> = {
  method: 'resources/list',
  key: 'resources',
  id: 'uri',
  schema: ResourceSchema as z.ZodType<Resource>,
};
export const TEMPLATES_LIST: ListSpec<ResourceTemplateType> = {
  method: 'resources/templates/list',
  key: 'resourceTemplates',
  id: 'uriTemplate',
  schema: ResourceTemplateSchema as z.ZodType<ResourceTemplateType>,
};

/** A list page as the wire may carry it: entries are checked one by one, never as a whole. */
export const LenientListResultSchema = z.looseObject({ nextCursor: z.unknown().optional() });

/** An entry dropped from a listing, with why. */
export interface DroppedEntry {
  /** Its name / URI / URI template when it had a string one, else `#<index>`. */
  readonly name: string;
  readonly reason: string;
}

/** Keeps the entries that are valid for `spec` and the first of each id; drops the rest. */
export function checkEntries<T>(
  spec: ListSpec<T>,
  entries: readonly unknown[],
): { entries: T[]; dropped: DroppedEntry[] } {
  const kept: T[] = [];
  const dropped: DroppedEntry[] = [];
  const seen = new Set<string>();
  entries.forEach((entry, index) => {
    const raw = (entry as Record<string, unknown> | null)?.[spec.id];
    const name = typeof raw === 'string' && raw.length > 0 ? raw : `#${index}`;
    const parsed = spec.schema.safeParse(entry);
    if (!parsed.success) {
      const issue = parsed.error.issues[0];
      const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
      dropped.push({
        name,
        reason: `not a valid MCP ${spec.key} entry (${where}${issue?.message ?? 'invalid'})`,
      });
      return;
    }
    if (seen.has(name)) {
      dropped.push({ name, reason: 'duplicate (the first one is kept)' });
      return;
    }
    seen.add(name);
    // The SDK's schemas strip nothing we need and keep unknown keys (they are loose objects).
    kept.push(parsed.data);
  });
  return { entries: kept, dropped };
}

/**
 * Lists every page of `spec` through `request` (one raw request per page) and checks each entry.
 * A downstream that answers "method not found" has no such list: empty, as FastMCP's proxy does.
 */
export async function listFeature<T>(
  spec: ListSpec<T>,
  request: (method: string, params: Record<string, unknown>) => Promise<Record<string, unknown>>,
): Promise<{ entries: T[]; dropped: DroppedEntry[] }> {
  try {
    const raw = await listAllEntries(spec.method, spec.key, (cursor) =>
      request(spec.method, cursor === undefined ? {} : { cursor }),
    );
    return checkEntries(spec, raw);
  } catch (error) {
    if ((error as { code?: unknown } | null)?.code === -32601) return { entries: [], dropped: [] };
    throw error;
  }
}
