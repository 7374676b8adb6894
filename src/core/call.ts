/**
 * The options of one tool call, as both sides of the gateway carry it: the upstream server hands
 * them to its backend (`upstream/backend.ts`), the backend to the pool (`downstream/dispatch.ts`).
 * One type, so that a field added for one side reaches the other. Types only.
 */
import type { Context } from '@opentelemetry/api';
import type { CallSignal } from './call-signal.js';
import type { Caller, InputReply } from './input.js';

/** One progress update from a downstream, forwarded upstream with the upstream's token (P3). */
export interface ProgressUpdate {
  readonly progress: number;
  readonly total?: number;
  readonly message?: string;
}

/** Per-call options of a tool call, upstream and downstream. */
export interface CallOptions {
  /** The upstream request's cancellation (P3): aborting it cancels the downstream request. */
  readonly signal?: CallSignal;
  /** Present only when the upstream sent a progress token (P3). */
  readonly onProgress?: (update: ProgressUpdate) => void;
  /** The exposed name, for the log (L1). @default `<server>/<tool>` */
  readonly exposedName?: string;
  /** The upstream JSON-RPC request id, for the log (L1). */
  readonly requestId?: string | number;
  /**
   * Q1: the upstream client behind the call, who answers what the server asks while it runs.
   * Without one, the server's requests are refused and a 2026 server's `input_required` fails.
   */
  readonly caller?: Caller;
  /** Q3: the retry of a relayed `input_required` round. */
  readonly reply?: InputReply;
  /** O2: the upstream call's trace context; the downstream call's span is its child. */
  readonly trace?: Context;
  /**
   * P10: the caller's key: on a server with `instances: per_session` the call runs on that
   * caller's own copy. Without one, on the shared copy.
   */
  readonly instance?: string;
  /** I2: the caller's principal key for the log (never the token). */
  readonly principal?: string;
}
