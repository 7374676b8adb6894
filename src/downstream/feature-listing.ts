/**
 * The last known good prompts, resources and resource templates of one downstream (U5), kept the
 * way a {@link Connection} keeps its tools (P4): listed on every connection before the server is
 * ready, re-listed on `notifications/prompts/list_changed` and
 * `notifications/resources/list_changed` (repeated while more notifications arrive, bounded),
 * compared by a key-order-independent fingerprint so a change is announced only when there is one.
 *
 * Unlike tools, a listing that fails does not take the server down: its tools still work, and the
 * previous lists stay served. A capability the server no longer announces empties its lists.
 */
import type { Client, ClientRequest } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import { describeError } from './errors.js';
import {
  EMPTY_FEATURES,
  LenientListResultSchema,
  listFeature,
  PROMPTS_LIST,
  RESOURCES_LIST,
  TEMPLATES_LIST,
  type DroppedEntry,
  type FeatureCapability,
  type FeatureLists,
} from './feature-list.js';
import { stableJson } from './tool-list.js';

/** Options of {@link FeatureListing}. */
export interface FeatureListingOptions {
  /** The server's child logger (dropped entries, failed listings). */
  readonly logger: Logger;
  /** Timeout of each list request (the server's `timeout_ms`). */
  readonly timeoutMs: number;
  /** Called once per capability whose served lists changed. */
  readonly changed: (capability: FeatureCapability) => void;
}

/** How many times one listing is repeated when list_changed keeps arriving meanwhile. */
const MAX_ROUNDS = 5;

const CAPABILITIES: readonly FeatureCapability[] = ['prompts', 'resources'];

type Mutable<T> = { -readonly [K in keyof T]: T[K] };

/** One downstream's U5 lists; owned by its Connection. */
export class FeatureListing {
  #lists: FeatureLists = EMPTY_FEATURES;
  readonly #fingerprints = new Map<FeatureCapability, string>();
  readonly #running = new Set<FeatureCapability>();
  readonly #dirty = new Set<FeatureCapability>();
  readonly #options: FeatureListingOptions;

  constructor(options: FeatureListingOptions) {
    this.#options = options;
  }

  /** The last known good lists. */
  get lists(): FeatureLists {
    return this.#lists;
  }

  /** A list_changed for `capability` arrived while no listing could start: the next one repeats. */
  markDirty(capability: FeatureCapability): void {
    this.#dirty.add(capability);
  }

  /**
   * Lists every capability in `announced` (the others are empty). A capability whose listing
   * fails is logged and left out of the answer, so its last known good lists stay.
   */
  async list(client: Client, announced: readonly FeatureCapability[]): Promise<Partial<FeatureLists>> {
    const out: Partial<Mutable<FeatureLists>> = {};
    for (const capability of CAPABILITIES) {
      if (!announced.includes(capability)) {
        if (capability === 'prompts') out.prompts = [];
        else Object.assign(out, { resources: [], resourceTemplates: [] });
        continue;
      }
      try {
        Object.assign(out, await this.#listStable(client, capability));
      } catch (error) {
        this.#options.logger.warn(
          { capability, error: describeError(error) },
          `${capability} listing failed; the last known ${capability} stay listed`,
        );
      }
    }
    return out;
  }

  /**
   * Stores `lists` (the parts present) and announces each capability that changed; after a
   * withheld period every non-empty capability is announced again (it is served once more).
   */
  apply(lists: Partial<FeatureLists>, wasWithheld: boolean): void {
    const next: Mutable<FeatureLists> = { ...this.#lists };
    const changed: FeatureCapability[] = [];
    for (const capability of CAPABILITIES) {
      const part =
        capability === 'prompts'
          ? lists.prompts && { prompts: lists.prompts }
          : lists.resources &&
            lists.resourceTemplates && {
              resources: lists.resources,
              resourceTemplates: lists.resourceTemplates,
            };
      if (!part) {
        if (wasWithheld && !this.#isEmpty(capability)) changed.push(capability);
        continue;
      }
      Object.assign(next, part);
      const empty = stableJson(this.#part(capability, EMPTY_FEATURES));
      const fingerprint = stableJson(part);
      // Nothing served before the first listing: an empty first listing announces nothing.
      const before = this.#fingerprints.get(capability) ?? empty;
      this.#fingerprints.set(capability, fingerprint);
      if (fingerprint !== before || (wasWithheld && fingerprint !== empty)) changed.push(capability);
    }
    this.#lists = next;
    for (const capability of changed) this.#options.changed(capability);
  }

  /** The server's lists were withheld (P4): announce each capability that had something. */
  announceWithheld(): void {
    for (const capability of CAPABILITIES) if (!this.#isEmpty(capability)) this.#options.changed(capability);
  }

  /**
   * Re-lists `capability` after its list_changed. `stale()` says the connection moved on
   * (reconnected, closed) meanwhile: the result is then dropped. Never rejects.
   */
  async refresh(client: Client, capability: FeatureCapability, stale: () => boolean): Promise<void> {
    if (this.#running.has(capability)) {
      this.#dirty.add(capability);
      return;
    }
    try {
      const lists = await this.#listStable(client, capability);
      if (!stale()) this.apply(lists, false);
    } catch (error) {
      if (stale()) return;
      this.#options.logger.warn(
        { capability, error: describeError(error) },
        `${capability} re-listing failed; the last known ${capability} stay listed`,
      );
    }
  }

  #part(capability: FeatureCapability, lists: FeatureLists): Partial<FeatureLists> {
    return capability === 'prompts'
      ? { prompts: lists.prompts }
      : { resources: lists.resources, resourceTemplates: lists.resourceTemplates };
  }

  #isEmpty(capability: FeatureCapability): boolean {
    return capability === 'prompts'
      ? this.#lists.prompts.length === 0
      : this.#lists.resources.length + this.#lists.resourceTemplates.length === 0;
  }

  async #listStable(client: Client, capability: FeatureCapability): Promise<Partial<FeatureLists>> {
    this.#running.add(capability);
    try {
      for (let round = 1; ; round++) {
        this.#dirty.delete(capability);
        const lists = await this.#listOnce(client, capability);
        if (!this.#dirty.has(capability) || round >= MAX_ROUNDS) return lists;
      }
    } finally {
      this.#running.delete(capability);
    }
  }

  async #listOnce(client: Client, capability: FeatureCapability): Promise<Partial<FeatureLists>> {
    const request = (method: string, params: Record<string, unknown>): Promise<Record<string, unknown>> =>
      client.request({ method, params } as ClientRequest, LenientListResultSchema, {
        timeout: this.#options.timeoutMs,
      });
    if (capability === 'prompts') {
      const prompts = await listFeature(PROMPTS_LIST, request);
      this.#warn(prompts.dropped, 'prompt');
      return { prompts: prompts.entries };
    }
    const resources = await listFeature(RESOURCES_LIST, request);
    const templates = await listFeature(TEMPLATES_LIST, request);
    this.#warn(resources.dropped, 'resource');
    this.#warn(templates.dropped, 'resource template');
    return { resources: resources.entries, resourceTemplates: templates.entries };
  }

  #warn(dropped: readonly DroppedEntry[], what: string): void {
    for (const bad of dropped) {
      this.#options.logger.warn(
        { [what.replace(' ', '_')]: bad.name, reason: bad.reason },
        `${what} "${bad.name}" withheld: ${bad.reason}`,
      );
    }
  }
}
