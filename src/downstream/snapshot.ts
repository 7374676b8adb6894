/**
 * What the pool tells of one server (`Pool.snapshot()`): its state and last known lists, as
 * `check`, `/healthz`, the status page and the catalog read it.
 */
import type { ConnectionState, DownstreamEra } from './connection.js';
import type { FeatureLists } from './listing.js';

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
  /** Restart attempts so far. */
  readonly restarts: number;
  /** ms until the next restart attempt, while down. */
  readonly retryAfterMs?: number;
  readonly inFlight: number;
  readonly queued: number;
  /** P10: per-caller copies running now (a server with `instances: per_session`). */
  readonly instances?: number;
}
