/**
 * What the status page shows (O4): the servers, the catalog, the recent calls and per-server
 * windows of the last 15 minutes, read from the pool and the catalog when a page asks, and two
 * bounded records kept per call: a ring of the last {@link RING_SIZE} calls and, per server,
 * {@link BUCKETS} buckets of {@link BUCKET_MS} with a count and a fixed log-scale histogram of
 * durations. Each call costs a constant amount of work and memory whatever the traffic; nothing
 * runs while no page is open. No argument value, result body or secret is kept: a call is its
 * time, caller (a token's subject), tool, server, outcome and duration.
 */
import { commandLine } from '../config/command-line.js';
import { createHash } from 'node:crypto';
import type { Config } from '../config/types.js';
import type { DefinitionChange } from '../core/pins.js';
import type { Catalog } from '../core/catalog.js';
import type { Result } from '../core/result.js';
import type { SkillEntry } from '../core/skills.js';
import { scrubDeep, type Scrubber } from '../core/secrets.js';
import type { Pool } from '../downstream/pool.js';

/** Calls kept for "recent calls". */
export const RING_SIZE = 200;
/** Width of one window bucket. */
export const BUCKET_MS = 10_000;
/** Buckets per server: 15 minutes. */
export const BUCKETS = 90;
/** Histogram bin upper bounds in ms (the last bin is everything above). */
const BINS_MS = [1, 2, 5, 10, 20, 50, 100, 200, 500, 1000, 2000, 5000, 10_000, 30_000, 60_000];

/** One call in the ring. */
export interface CallRecord {
  readonly at: number;
  readonly tool: string;
  readonly server: string;
  /** `ok`, or the error type. */
  readonly outcome: string;
  readonly ms: number | undefined;
  /** I2: the caller's subject, when a token named one. */
  readonly principal?: string;
}

interface Bucket {
  /** Which 10-second slot of the clock this bucket holds now. */
  slot: number;
  count: number;
  failures: number;
  readonly bins: number[];
}

/** One server's 15 minutes. */
class Window {
  readonly #buckets: Bucket[] = Array.from({ length: BUCKETS }, () => ({
    slot: -1,
    count: 0,
    failures: 0,
    bins: new Array<number>(BINS_MS.length + 1).fill(0),
  }));

  add(now: number, ms: number | undefined, failed: boolean): void {
    const slot = Math.floor(now / BUCKET_MS);
    const bucket = this.#buckets[slot % BUCKETS] as Bucket;
    if (bucket.slot !== slot) {
      bucket.slot = slot;
      bucket.count = 0;
      bucket.failures = 0;
      bucket.bins.fill(0);
    }
    bucket.count += 1;
    if (failed) bucket.failures += 1;
    if (ms !== undefined) {
      let bin = 0;
      while (bin < BINS_MS.length && ms > (BINS_MS[bin] as number)) bin += 1;
      bucket.bins[bin] = (bucket.bins[bin] ?? 0) + 1;
    }
  }

  /** Oldest first: per bucket, calls per second, failures, p50 and p95 in ms (upper bin bounds). */
  series(now: number): { t: number; rate: number; failures: number; p50?: number; p95?: number }[] {
    const last = Math.floor(now / BUCKET_MS);
    const out = [];
    for (let slot = last - BUCKETS + 1; slot <= last; slot++) {
      const bucket = this.#buckets[((slot % BUCKETS) + BUCKETS) % BUCKETS] as Bucket;
      const live = bucket.slot === slot;
      const count = live ? bucket.count : 0;
      const p50 = live ? quantile(bucket.bins, 0.5) : undefined;
      const p95 = live ? quantile(bucket.bins, 0.95) : undefined;
      out.push({
        t: slot * BUCKET_MS,
        rate: count / (BUCKET_MS / 1000),
        failures: live ? bucket.failures : 0,
        ...(p50 !== undefined ? { p50 } : {}),
        ...(p95 !== undefined ? { p95 } : {}),
      });
    }
    return out;
  }
}

/** The upper bound of the bin holding quantile `q`; undefined with no durations. */
function quantile(bins: readonly number[], q: number): number | undefined {
  const total = bins.reduce((sum, n) => sum + n, 0);
  if (total === 0) return undefined;
  let seen = 0;
  for (let bin = 0; bin < bins.length; bin++) {
    seen += bins[bin] as number;
    if (seen >= q * total) return BINS_MS[bin] ?? (BINS_MS[BINS_MS.length - 1] as number) * 2;
  }
  return undefined;
}

/** Options of {@link createStatus}. */
export interface StatusSources {
  readonly config: Config;
  readonly pool: Pool;
  catalog(): Catalog;
  /** Wall-clock ms (the page shows times of day). */
  readonly clock: () => number;
  readonly version: string;
  /** Config problems found at load (warnings), shown as they were printed. */
  readonly problems?: readonly string[];
  /** K3: the definitions that differ from their pins now. @default none */
  readonly definitionChanges?: () => readonly DefinitionChange[];
  /** Issue 47: the skills each server listed last (SEP-2640). @default none */
  readonly skills?: () => ReadonlyMap<string, readonly SkillEntry[]>;
  /** Issue 55: the shared store, where it is and whether it answers now. @default none */
  readonly store?: () => {
    readonly where: string;
    readonly ok: boolean;
    readonly error?: string;
    readonly since?: number;
  };
  readonly scrub?: Scrubber;
}

/** The status of the gateway. */
export interface Status {
  /** One call ended (O4): constant time. */
  callEnded(tool: string, server: string | undefined, result: Result, principal?: string): void;
  /** Everything the page shows, as JSON, scrubbed (L2). */
  snapshot(): Record<string, unknown>;
}

/** @example const status = createStatus({ config, pool, catalog, timers, clock: Date.now, version }); */
export function createStatus(sources: StatusSources): Status {
  const ring: (CallRecord | undefined)[] = new Array<CallRecord | undefined>(RING_SIZE);
  let next = 0;
  const windows = new Map<string, Window>();
  const started = sources.clock();
  /**
   * Since when each server is up, or not up (the pool's events; first seen at start): a server
   * that goes down, restarts and fails again has been down since it first went, not since its
   * last attempt. And each server's last failure, kept after it is ready again.
   */
  const since = new Map<string, { up: boolean; at: number }>();
  const failures = new Map<string, { error: string; at: number }>();
  sources.pool.on('stateChanged', (server, state) => {
    const now = sources.clock();
    const up = state === 'ready';
    if (since.get(server)?.up !== up) since.set(server, { up, at: now });
    if (state !== 'down') return;
    const error = sources.pool.snapshot().find((snapshot) => snapshot.name === server)?.lastError;
    if (error !== undefined) failures.set(server, { error, at: now });
  });
  const hashes = new WeakMap<Catalog, string>();

  function catalogHash(catalog: Catalog): string {
    let hash = hashes.get(catalog);
    if (hash === undefined) {
      hash = createHash('sha256').update(JSON.stringify(catalog.definitions)).digest('hex').slice(0, 12);
      hashes.set(catalog, hash);
    }
    return hash;
  }

  function servers(now: number): Record<string, unknown>[] {
    const exposed = new Map<string, number>();
    for (const tool of sources.catalog().tools) exposed.set(tool.server, (exposed.get(tool.server) ?? 0) + 1);
    const configs = new Map(sources.config.servers.map((server) => [server.name, server]));
    return sources.pool.snapshot().map((snapshot) => {
      const server = configs.get(snapshot.name);
      const transport =
        server === undefined
          ? undefined
          : server.transport.type === 'stdio'
            ? 'stdio'
            : server.transport.type;
      const state = snapshot.toolsWithheld
        ? 'withheld'
        : snapshot.restarts > 0 && snapshot.state !== 'ready'
          ? 'restarting'
          : snapshot.state;
      const entered = since.get(snapshot.name);
      return {
        name: snapshot.name,
        state,
        ...(snapshot.era !== undefined ? { era: snapshot.era } : {}),
        ...(snapshot.protocolVersion !== undefined ? { protocol: snapshot.protocolVersion } : {}),
        ...(transport !== undefined ? { transport } : {}),
        tools: exposed.get(snapshot.name) ?? 0,
        in_flight: snapshot.inFlight,
        queued: snapshot.queued,
        restarts: snapshot.restarts,
        ...(snapshot.instances !== undefined ? { instances: snapshot.instances } : {}),
        ...(entered !== undefined ? { since: entered.at } : { since: started }),
        ...(snapshot.lastError !== undefined ? { last_error: snapshot.lastError } : {}),
        ...(failures.has(snapshot.name) ? { last_failure: failures.get(snapshot.name) } : {}),
        ...(snapshot.retryAfterMs !== undefined ? { retry_after_ms: snapshot.retryAfterMs } : {}),
        window: (windows.get(snapshot.name) ?? new Window()).series(now),
      };
    });
  }

  return {
    callEnded(tool, server, result, principal) {
      const now = sources.clock();
      const ms = result.meta.elapsedMs;
      const outcome = result.success ? 'ok' : result.errorType;
      ring[next] = {
        at: now,
        tool,
        server: server ?? '',
        outcome,
        ms,
        ...(principal !== undefined ? { principal } : {}),
      };
      next = (next + 1) % RING_SIZE;
      if (server === undefined) return;
      let window = windows.get(server);
      if (window === undefined) windows.set(server, (window = new Window()));
      window.add(now, ms, !result.success);
    },
    snapshot() {
      const now = sources.clock();
      const catalog = sources.catalog();
      const calls: CallRecord[] = [];
      for (let i = 1; i <= RING_SIZE; i++) {
        const record = ring[(next - i + RING_SIZE) % RING_SIZE];
        if (record !== undefined) calls.push(record);
      }
      const body = {
        now,
        version: sources.version,
        started,
        ...(sources.config.http.replicaId !== undefined ? { replica_id: sources.config.http.replicaId } : {}),
        expose: sources.config.expose,
        catalog_hash: catalogHash(catalog),
        problems: [
          ...(sources.problems ?? []),
          ...catalog.problems.map((p) => `${p.severity}: ${p.message}`),
          // K3: a definition that changed since it was pinned, until it is approved.
          ...(sources.definitionChanges?.() ?? []).map(
            (change) =>
              `definition_changed: the ${change.kind} "${change.name}" of "${change.server}" ${change.change === 'new' ? 'is new' : 'differs from its pin'}${sources.config.pinning === 'hold' ? ' (withheld)' : ''}: ${change.diff.join(' ')} (${commandLine(['pins', 'approve', change.server, change.name])})`,
          ),
        ],
        servers: servers(now),
        ...(sources.store !== undefined ? { store: sources.store() } : {}),
        tools: catalog.tools.map((tool) => ({
          name: tool.name,
          server: tool.server,
          listed: tool.searchOnly !== true,
          ...(tool.definition.annotations?.readOnlyHint === true ? { read_only: true } : {}),
          ...(tool.definition.annotations?.destructiveHint === true ? { destructive: true } : {}),
        })),
        calls,
        // Issue 47: server, exposed SKILL.md URI, name, description, files.
        skills: [...(sources.skills?.() ?? new Map<string, readonly SkillEntry[]>())].flatMap(
          ([server, list]) =>
            list.map((skill) => ({
              server,
              uri: skill.uri,
              name: skill.frontmatter.name,
              description: skill.frontmatter.description,
              files: skill.resources === 'dynamic' ? 'dynamic' : skill.resources.length,
            })),
        ),
      };
      // L2: a last error can echo an interpolated secret.
      return sources.scrub === undefined ? body : scrubDeep(body, sources.scrub);
    },
  };
}
