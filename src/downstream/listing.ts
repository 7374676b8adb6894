/**
 * The one listing machine (P4, T10, T12, U5): a downstream's tools, prompts, resources and
 * resource templates are read, kept and announced the same way.
 *
 * - Every page is read (bounded), and each entry is checked on its own by its kind: a prompt,
 *   resource or template the SDK's schema refuses, or a repeat of an id, is dropped with a reason
 *   and the rest are served. Tools are passed on whole: every per-tool verdict (T12) is the
 *   catalog's, in `core`, where `check` reads them.
 * - A listing repeats while `list_changed` arrives meanwhile, at most {@link MAX_ROUNDS} times.
 * - The last known good lists stay served while the server is down (P4); a key-order-independent
 *   fingerprint decides whether a new listing changed anything, and only a change is announced.
 * - Withheld (down longer than `withhold_after_ms`): nothing is served, and every list that had
 *   something is announced; coming back announces them again.
 * - A failed tool listing is the connection's to judge (it takes the server down); a failed
 *   prompt or resource listing keeps the last known good lists (the tools still work).
 *
 * Lists come in groups by the notification that announces them: `tools`, `prompts`, and
 * `resources` (resources and templates: one `resources/list_changed` covers both).
 */
import type {
  Client,
  ClientRequest,
  Prompt,
  Resource,
  ResourceTemplateType,
} from '@modelcontextprotocol/client';
import { PromptSchema, ResourceSchema, ResourceTemplateSchema } from '@modelcontextprotocol/core';
import type { Logger } from 'pino';
import { z } from 'zod';
import { describeError } from './errors.js';
import { listAllEntries, stableJson } from './tool-list.js';

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

/** Which capability a feature list belongs to: `prompts` or `resources` (with templates). */
export type FeatureCapability = 'prompts' | 'resources';

/** A group of lists announced by one `list_changed` notification. */
export type ListGroup = 'tools' | FeatureCapability;

/** An entry dropped from a listing, with why. */
export interface DroppedEntry {
  /** Its name / URI / URI template when it had a string one, else `#<index>`. */
  readonly name: string;
  readonly reason: string;
}

/** One list a downstream may have: the request, the key of its entries, and its entry check. */
export interface ListKind {
  readonly method: 'tools/list' | 'prompts/list' | 'resources/list' | 'resources/templates/list';
  readonly key: 'tools' | 'prompts' | 'resources' | 'resourceTemplates';
  /** What the log calls one entry. */
  readonly noun: string;
  /** Keeps what may be served, in order; drops the rest with why. */
  check(entries: readonly unknown[]): { entries: unknown[]; dropped: DroppedEntry[] };
}

/** Entries checked against `schema`, the first of each `id` kept. */
function schemaCheck(key: ListKind['key'], id: string, schema: z.ZodType): ListKind['check'] {
  return (entries) => {
    const kept: unknown[] = [];
    const dropped: DroppedEntry[] = [];
    const seen = new Set<string>();
    entries.forEach((entry, index) => {
      const raw = (entry as Record<string, unknown> | null)?.[id];
      const name = typeof raw === 'string' && raw.length > 0 ? raw : `#${index}`;
      const parsed = schema.safeParse(entry);
      if (!parsed.success) {
        const issue = parsed.error.issues[0];
        const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
        dropped.push({
          name,
          reason: `not a valid MCP ${key} entry (${where}${issue?.message ?? 'invalid'})`,
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
  };
}

/** `tools/list`: every entry passes; the catalog judges each tool (T12). */
export const TOOLS_LIST: ListKind = {
  method: 'tools/list',
  key: 'tools',
  noun: 'tool',
  check: (entries) => ({ entries: [...entries], dropped: [] }),
};
export const PROMPTS_LIST: ListKind = {
  method: 'prompts/list',
  key: 'prompts',
  noun: 'prompt',
  check: schemaCheck('prompts', 'name', PromptSchema),
};
export const RESOURCES_LIST: ListKind = {
  method: 'resources/list',
  key: 'resources',
  noun: 'resource',
  check: schemaCheck('resources', 'uri', ResourceSchema),
};
export const TEMPLATES_LIST: ListKind = {
  method: 'resources/templates/list',
  key: 'resourceTemplates',
  noun: 'resource template',
  check: schemaCheck('resourceTemplates', 'uriTemplate', ResourceTemplateSchema),
};

const GROUPS: Readonly<Record<ListGroup, readonly ListKind[]>> = {
  tools: [TOOLS_LIST],
  prompts: [PROMPTS_LIST],
  resources: [RESOURCES_LIST, TEMPLATES_LIST],
};

/** A list page as the wire may carry it: entries are checked one by one, never as a whole. */
export const LenientListResultSchema = z.looseObject({ nextCursor: z.unknown().optional() });

/** One list request to the downstream. */
export type ListRequest = (
  method: string,
  params: Record<string, unknown>,
) => Promise<Record<string, unknown>>;

/**
 * Every page of `kind` through `request`, each entry checked. A downstream that answers "method
 * not found" to a feature list has none (as FastMCP's proxy reads it); for tools it is a failure.
 */
export async function readList(
  kind: ListKind,
  request: ListRequest,
): Promise<{ entries: unknown[]; dropped: DroppedEntry[] }> {
  try {
    const raw = await listAllEntries(kind.method, kind.key, (cursor) =>
      request(kind.method, cursor === undefined ? {} : { cursor }),
    );
    return kind.check(raw);
  } catch (error) {
    if (kind !== TOOLS_LIST && (error as { code?: unknown } | null)?.code === -32601)
      return { entries: [], dropped: [] };
    throw error;
  }
}

/** How many times one listing is repeated when `list_changed` keeps arriving meanwhile. */
export const MAX_ROUNDS = 5;

/** What a group's listing read: each kind's entries, by key. */
type Read = Partial<Record<ListKind['key'], readonly unknown[]>>;

interface GroupState {
  served: Read;
  fingerprint: string | undefined;
  running: boolean;
  dirty: boolean;
}

/** Options of {@link Listings}. */
export interface ListingsOptions {
  /** The server's child logger (dropped entries, failed feature listings). */
  readonly logger: Logger;
  /** A group's served lists changed (new entries, withheld, back). */
  readonly changed: (group: ListGroup) => void;
  /** Every time tools are stored (changed or not): the connection's per-tool indexes. */
  readonly toolsStored?: (tools: readonly unknown[]) => void;
}

/** How {@link Listings.refresh} reads a group again. */
export interface RefreshOptions {
  /** False while the connection is not ready (an attempt's own listing repeats instead). */
  readonly ready: boolean;
  /** False once the connection moved on (another client, down, closed): the reading is dropped. */
  readonly current: () => boolean;
  readonly timeoutMs: number;
  /** The lists the server announced in its capabilities (see {@link Listings.readAll} on tools). */
  readonly announced: readonly ListGroup[];
  /** A tool listing failed on the current client. */
  readonly toolsFailed: (error: unknown) => void;
}

/** A fresh reading of a connection's groups, to make served with {@link Listings.store}. */
export type Reading = Partial<Record<ListGroup, Read>>;

/** The lists of one downstream, last known good (owned by its Connection). */
export class Listings {
  readonly #groups: Record<ListGroup, GroupState> = {
    tools: { served: {}, fingerprint: undefined, running: false, dirty: false },
    prompts: { served: {}, fingerprint: undefined, running: false, dirty: false },
    resources: { served: {}, fingerprint: undefined, running: false, dirty: false },
  };
  #withheld = false;
  readonly #options: ListingsOptions;

  constructor(options: ListingsOptions) {
    this.#options = options;
  }

  /** Last known good tools, raw (the catalog checks them); `[]` while withheld. */
  get tools(): readonly unknown[] {
    return this.#withheld ? [] : (this.#groups.tools.served.tools ?? []);
  }

  /** Last known good prompts, resources and templates; empty while withheld. */
  get features(): FeatureLists {
    if (this.#withheld) return EMPTY_FEATURES;
    const { prompts, resources } = this.#groups;
    return {
      prompts: (prompts.served.prompts ?? []) as readonly Prompt[],
      resources: (resources.served.resources ?? []) as readonly Resource[],
      resourceTemplates: (resources.served.resourceTemplates ?? []) as readonly ResourceTemplateType[],
    };
  }

  get withheld(): boolean {
    return this.#withheld;
  }

  /** A `list_changed` of `group` arrived: a running listing repeats, a later one starts. */
  markDirty(group: ListGroup): void {
    this.#groups[group].dirty = true;
  }

  /** True while `group` is being read. */
  running(group: ListGroup): boolean {
    return this.#groups[group].running;
  }

  /**
   * Reads `group` (every kind in it), repeating while it turned dirty meanwhile (bounded).
   * Rejects when a request fails.
   */
  async read(group: ListGroup, client: Client, timeoutMs: number): Promise<Read> {
    const state = this.#groups[group];
    const request: ListRequest = (method, params) =>
      client.request({ method, params } as ClientRequest, LenientListResultSchema, { timeout: timeoutMs });
    state.running = true;
    try {
      for (let round = 1; ; round++) {
        state.dirty = false;
        const read: Read = {};
        for (const kind of GROUPS[group]) {
          const { entries, dropped } = await readList(kind, request);
          read[kind.key] = entries;
          for (const bad of dropped) {
            this.#options.logger.warn(
              { [kind.noun.replace(' ', '_')]: bad.name, reason: bad.reason },
              `${kind.noun} "${bad.name}" withheld: ${bad.reason}`,
            );
          }
        }
        if (!state.dirty || round >= MAX_ROUNDS) return read;
      }
    } finally {
      state.running = false;
    }
  }

  /**
   * The first reading of a connection: tools (a failure rejects: the attempt fails), then each
   * feature group the server announced (one that fails is logged and left out, so its last
   * known good lists stay; one not announced is empty). Tools are asked for even when the
   * server did not announce them (some servers forget to); a server without the capability
   * that answers "method not found" has none, as a prompts- or resources-only server does.
   */
  async readAll(
    client: Client,
    announced: readonly ListGroup[],
    timeouts: { readonly tools: number; readonly features: number },
  ): Promise<Reading> {
    const reading: Reading = { tools: await this.#readGroup('tools', client, timeouts.tools, announced) };
    for (const group of ['prompts', 'resources'] as const) {
      if (!announced.includes(group)) {
        reading[group] = Object.fromEntries(GROUPS[group].map((kind) => [kind.key, []]));
        continue;
      }
      try {
        reading[group] = await this.read(group, client, timeouts.features);
      } catch (error) {
        this.#options.logger.warn(
          { capability: group, error: describeError(error) },
          `${group} listing failed; the last known ${group} stay listed`,
        );
      }
    }
    return reading;
  }

  /**
   * Makes `reading` served; announces each group whose lists changed. After a withheld period,
   * every group with entries is announced again (it is served once more).
   */
  store(reading: Reading): void {
    const wasWithheld = this.#withheld;
    this.#withheld = false;
    for (const group of ['tools', 'prompts', 'resources'] as const) {
      const state = this.#groups[group];
      const read = reading[group];
      if (read === undefined) {
        if (wasWithheld && !this.#isEmpty(group)) this.#options.changed(group);
        continue;
      }
      const fingerprint = stableJson(read);
      // Nothing served before the first listing: an empty first listing announces nothing.
      const before = state.fingerprint ?? stableJson(this.#empty(group));
      state.served = read;
      state.fingerprint = fingerprint;
      if (group === 'tools') this.#options.toolsStored?.(read.tools ?? []);
      if (fingerprint !== before || (wasWithheld && !this.#isEmpty(group))) this.#options.changed(group);
    }
  }

  /**
   * A `list_changed` of `group` arrived on the current client. While the connection is not ready
   * or the group is being read, the reading repeats (now or at the next one); otherwise the group
   * is read again and stored, unless `current()` turned false meanwhile. A tool listing that
   * fails is `toolsFailed`'s to judge (the connection takes the server down, P4); a failed
   * prompt or resource listing keeps the last known good lists. Never rejects.
   */
  async refresh(group: ListGroup, client: Client, options: RefreshOptions): Promise<void> {
    if (!options.ready || this.#groups[group].running) {
      this.markDirty(group);
      return;
    }
    try {
      const read = await this.#readGroup(group, client, options.timeoutMs, options.announced);
      if (options.current()) this.store({ [group]: read });
    } catch (error) {
      if (!options.current()) return;
      if (group === 'tools') options.toolsFailed(error);
      else
        this.#options.logger.warn(
          { capability: group, error: describeError(error) },
          `${group} re-listing failed; the last known ${group} stay listed`,
        );
    }
  }

  /** {@link read}, where a server that did not announce tools and has no `tools/list` has none. */
  async #readGroup(
    group: ListGroup,
    client: Client,
    timeoutMs: number,
    announced: readonly ListGroup[],
  ): Promise<Read> {
    try {
      return await this.read(group, client, timeoutMs);
    } catch (error) {
      const missing = (error as { code?: unknown } | null)?.code === -32601;
      if (group === 'tools' && missing && !announced.includes('tools')) return { tools: [] };
      throw error;
    }
  }

  /** P4: the server was down too long: nothing is served; every group that had entries is announced. */
  withhold(): void {
    if (this.#withheld) return;
    const had = (['tools', 'prompts', 'resources'] as const).filter((group) => !this.#isEmpty(group));
    this.#withheld = true;
    for (const group of had) this.#options.changed(group);
  }

  #empty(group: ListGroup): Read {
    return Object.fromEntries(GROUPS[group].map((kind) => [kind.key, []]));
  }

  #isEmpty(group: ListGroup): boolean {
    return GROUPS[group].every((kind) => (this.#groups[group].served[kind.key]?.length ?? 0) === 0);
  }
}

/** The lists a downstream announced in its capabilities. */
export function announcedLists(client: Pick<Client, 'getServerCapabilities'>): ListGroup[] {
  const announced = client.getServerCapabilities();
  const kinds: ListGroup[] = [];
  if (announced?.tools) kinds.push('tools');
  if (announced?.prompts) kinds.push('prompts');
  if (announced?.resources) kinds.push('resources');
  return kinds;
}
