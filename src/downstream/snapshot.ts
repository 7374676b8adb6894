/**
 * What the pool tells of one server (`Pool.snapshot()`): its state and last known lists, as
 * `check`, `/healthz`, the status page and the catalog read it.
 */
import type { Connection, ConnectionState, DownstreamEra } from './connection.js';
import type { FeatureLists } from './listing.js';
import type { Instances } from './instances.js';
import type { CallSlots } from './slots.js';

/** One server as `check`, `/healthz` and the catalog see it. */
export interface ServerSnapshot {
  readonly name: string;
  readonly state: ConnectionState;
  /** Last known good tools, raw (the catalog checks each, T12); `[]` while withheld (P4, T10). */
  readonly tools: readonly unknown[];
  readonly toolsWithheld: boolean;
  /** U5: last known good prompts, resources and templates; empty while withheld. */
  readonly features: FeatureLists;
  readonly lastError?: string;
  /** O4: since when (epoch ms) it is down, through its restarts; absent while it is up. */
  readonly downSince?: number;
  /** D2: it is down for want of a login (its last error is a missing or refused login). */
  readonly loginRequired?: boolean;
  /** E5: the protocol era and revision of the current (or last) connection, once known. */
  readonly era?: DownstreamEra;
  readonly protocolVersion?: string;
  /** Issue 47: the extensions it declared (`capabilities.extensions`), while connected. */
  readonly extensions?: Readonly<Record<string, unknown>>;
  /** Restart attempts so far. */
  readonly restarts: number;
  /** ms until the next restart attempt, while down. */
  readonly retryAfterMs?: number;
  readonly inFlight: number;
  readonly queued: number;
  /** P10: per-caller copies running now (a server with `instances: per_session`). */
  readonly instances?: number;
}

/** One pool entry as its snapshot: the connection's state, the slots' and copies' load. */
export function snapshotOf(entry: {
  readonly server: { readonly name: string };
  readonly connection: Connection;
  readonly slots: CallSlots;
  readonly instances?: Instances;
  readonly downSince?: number;
}): ServerSnapshot {
  const { server, connection, slots, instances, downSince } = entry;
  const retryAfterMs = connection.state === 'down' ? connection.retryAfterMs() : undefined;
  const copies = instances?.load;
  return {
    name: server.name,
    state: connection.state,
    tools: connection.tools,
    toolsWithheld: connection.toolsWithheld,
    features: connection.features,
    ...(connection.lastError !== undefined ? { lastError: connection.lastError } : {}),
    ...(connection.loginRequired ? { loginRequired: true } : {}),
    ...(downSince !== undefined ? { downSince } : {}),
    ...(connection.era !== undefined ? { era: connection.era } : {}),
    ...(connection.protocolVersion !== undefined ? { protocolVersion: connection.protocolVersion } : {}),
    ...(connection.extensions !== undefined ? { extensions: connection.extensions } : {}),
    restarts: connection.restarts,
    ...(retryAfterMs !== undefined ? { retryAfterMs } : {}),
    inFlight: slots.inFlight + (copies?.inFlight ?? 0),
    queued: slots.waiting + (copies?.queued ?? 0),
    ...(instances !== undefined ? { instances: instances.size } : {}),
  };
}
