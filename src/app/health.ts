/**
 * What the gateway says about its servers (U4, U7, O1): one row per server for `/healthz`, the
 * `serve` banner and `check`, and the readiness answer of `/healthz`. Read from the pool and the
 * catalog when asked; every row is scrubbed of interpolated secrets (L2: a server's last error
 * can echo one).
 */
import type { Catalog } from '../core/catalog.js';
import { scrubDeep, type Scrubber } from '../core/secrets.js';
import type { ConnectionState, DownstreamEra } from '../downstream/connection.js';
import type { Pool } from '../downstream/pool.js';
import type { HealthReport } from '../upstream/http-probes.js';

/** One server as `/healthz` and `check` report it. */
export interface ServerHealth {
  readonly name: string;
  readonly state: ConnectionState;
  /** Tools of this server exposed upstream right now. */
  readonly tools: number;
  /** E5: `legacy` or `modern`, once a connection was made. */
  readonly era?: DownstreamEra;
  /** E5: the protocol revision negotiated, e.g. `2026-07-28` or `2025-06-18`. */
  readonly protocol_version?: string;
  /** P2: calls running on the server now, and waiting for a slot. */
  readonly in_flight: number;
  readonly queued: number;
  /** P10: per-caller copies running now, for a server with `instances: per_session`. */
  readonly instances?: number;
  readonly error?: string;
  /** O4: since when it is down (ISO 8601), through its restarts. */
  readonly down_since?: string;
}

/** Where the proxy is in its own life, for readiness. */
export interface Lifecycle {
  /** The first connection round is over (every server ready or failed once). */
  readonly started: boolean;
  readonly stopping: boolean;
}

/** What {@link createHealth} reads. */
export interface HealthSources {
  readonly pool: Pool;
  catalog(): Catalog;
  lifecycle(): Lifecycle;
  /** Issue 48: the shared store's connection, when there is one. */
  store?(): { readonly where: string; readonly ok: boolean; readonly error?: string };
  readonly scrub?: Scrubber;
}

/** The per-server rows and the readiness answer. */
export interface Health {
  servers(): readonly ServerHealth[];
  /** `/healthz`: 200 while serving (even degraded), 503 `starting` / `stopping`. */
  report(): HealthReport;
}

/** @example const health = createHealth({ pool, catalog: catalogs.tools, lifecycle, scrub }); */
export function createHealth(sources: HealthSources): Health {
  function servers(): readonly ServerHealth[] {
    const exposed = new Map<string, number>();
    for (const tool of sources.catalog().tools) exposed.set(tool.server, (exposed.get(tool.server) ?? 0) + 1);
    return sources.pool.snapshot().map((snapshot) => ({
      name: snapshot.name,
      state: snapshot.state,
      tools: exposed.get(snapshot.name) ?? 0,
      ...(snapshot.era !== undefined ? { era: snapshot.era } : {}),
      ...(snapshot.protocolVersion !== undefined ? { protocol_version: snapshot.protocolVersion } : {}),
      in_flight: snapshot.inFlight,
      queued: snapshot.queued,
      ...(snapshot.instances !== undefined ? { instances: snapshot.instances } : {}),
      ...(snapshot.state !== 'ready' && snapshot.lastError !== undefined
        ? { error: snapshot.lastError }
        : {}),
      ...(snapshot.downSince !== undefined ? { down_since: new Date(snapshot.downSince).toISOString() } : {}),
    }));
  }

  return {
    servers,
    /**
     * Readiness: 503 `starting` until the first connection round is over (a replica that would
     * answer a partial tools/list gets no traffic yet), 503 `stopping` once stopping, else 200,
     * even degraded: the proxy answers every call (a down server's calls fail fast with
     * downstream_unavailable); per-server state is in the body.
     */
    report() {
      const list = servers();
      const { started, stopping } = sources.lifecycle();
      // Issue 48: an unreachable store degrades (what needs it fails, the rest goes on).
      const store = sources.store?.();
      const status = stopping
        ? 'stopping'
        : !started
          ? 'starting'
          : list.every((server) => server.state === 'ready') && store?.ok !== false
            ? 'ok'
            : 'degraded';
      const body = { status, servers: list, ...(store !== undefined ? { store } : {}) };
      // L2: a server's last error can echo an interpolated secret.
      return {
        status: stopping || !started ? 503 : 200,
        body: sources.scrub === undefined ? body : scrubDeep(body, sources.scrub),
      };
    },
  };
}
