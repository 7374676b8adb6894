/**
 * Who answers a downstream's requests to its client (Q1, Q2).
 *
 * A 2025 server pushes `elicitation/create`, `sampling/createMessage` or `roots/list` on its
 * connection, and nothing in the message says which call caused it. One downstream connection
 * serves every upstream client, so the rule is: the request belongs to the one upstream client
 * ({@link Caller} key) with calls in flight on that connection. With calls of two or more
 * clients in flight it belongs to no one and is refused (never guessed: a form or a completion
 * sent to the wrong user is worse than an error); a server with `isolate_callers` never gets
 * there, since {@link CallerLane} lets calls of one client at a time reach it.
 */
import { CLIENT_CAPABILITIES_META_KEY, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/client';
import type { ClientCapabilities } from '@modelcontextprotocol/client';
import type { ClientFeature } from '../config/types.js';
import type { CallSignal } from '../core/call-signal.js';
import { hostCanAnswer, type Caller, type ClientAsk, type HostCapabilities } from '../core/input.js';
import { declaresTasks, TASKS_EXTENSION } from '../core/tasks.js';

/** The request each client feature answers. */
export const FEATURE_METHODS: Readonly<Record<ClientFeature, string>> = {
  elicitation: 'elicitation/create',
  sampling: 'sampling/createMessage',
  roots: 'roots/list',
};

/**
 * P8, Q2: the capabilities a downstream is told at its handshake: what its `client_features`
 * allow, in full (a 2025 server learns them once, before any caller exists; a request the caller
 * behind it cannot answer is refused then).
 */
export function advertisedCapabilities(features: readonly ClientFeature[]): ClientCapabilities {
  const capabilities: ClientCapabilities = {};
  if (features.includes('elicitation')) capabilities.elicitation = { form: {}, url: {} };
  if (features.includes('sampling')) capabilities.sampling = {};
  if (features.includes('roots')) capabilities.roots = {};
  return capabilities;
}

/**
 * P8, Q2: the capabilities sent with one request to a 2026-07-28 server (they travel with every
 * request): what the caller's host declared, narrowed to what `client_features` allow.
 */
export function callerCapabilities(
  features: readonly ClientFeature[],
  caller: Caller | undefined,
): ClientCapabilities {
  const host: HostCapabilities = caller?.capabilities ?? {};
  const capabilities: ClientCapabilities = {};
  if (features.includes('elicitation') && host.elicitation !== undefined)
    capabilities.elicitation = { ...host.elicitation } as ClientCapabilities['elicitation'];
  if (features.includes('sampling') && host.sampling !== undefined) capabilities.sampling = {};
  if (features.includes('roots') && host.roots !== undefined) capabilities.roots = {};
  // X5: a host that takes tasks may be answered with one; of the extensions, only this one travels.
  if (declaresTasks(host)) capabilities.extensions = { [TASKS_EXTENSION]: {} };
  return capabilities;
}

/** The calls in flight on one connection and their callers (Q1). */
export class CallerRoute {
  readonly #calls = new Map<number, Caller>();
  #next = 0;

  /** A call with `caller` started; the returned function ends it. */
  enter(caller: Caller): () => void {
    const id = this.#next++;
    this.#calls.set(id, caller);
    return () => this.#calls.delete(id);
  }

  /**
   * The caller a pushed request belongs to: the one upstream client with calls in flight (its
   * oldest call), or why there is none.
   */
  owner(): Caller | { readonly refused: string } {
    let owner: Caller | undefined;
    const keys = new Set<object>();
    for (const caller of this.#calls.values()) {
      owner ??= caller;
      keys.add(caller.key);
    }
    if (owner === undefined) return { refused: 'no call of an upstream client is in flight on this server' };
    if (keys.size > 1) {
      return {
        refused: `calls of ${keys.size} upstream clients are in flight on this server, and a request does not say which call it belongs to (set isolate_callers to serve one client at a time)`,
      };
    }
    return owner;
  }
}

interface Waiter {
  readonly key: object;
  readonly resolve: () => void;
  readonly reject: (reason: unknown) => void;
}

/**
 * Q1 with `isolate_callers`: calls of one upstream client at a time reach the server, so that
 * whatever it asks has one owner. Calls of the client that holds the lane enter at once (while
 * nobody else waits); others wait in arrival order, and the lane passes to the oldest waiter's
 * client, with every waiting call of that client, when the last call of the holder ends.
 */
export class CallerLane {
  #holder: object | undefined;
  #inside = 0;
  readonly #waiting: Waiter[] = [];

  /** True when a call of `key` would go at once. */
  isFree(key: object): boolean {
    return this.#holder === undefined || (this.#holder === key && this.#waiting.length === 0);
  }

  /** Resolves when a call of `key` may go; rejects with the signal's reason if it aborts first. */
  acquire(key: object, signal?: CallSignal): Promise<void> {
    if (this.isFree(key)) {
      this.#holder = key;
      this.#inside++;
      return Promise.resolve();
    }
    if (signal?.aborted === true) return Promise.reject(signal.reason);
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        key,
        resolve: () => {
          signal?.removeEventListener('abort', onAbort);
          resolve();
        },
        reject,
      };
      const onAbort = (): void => {
        const at = this.#waiting.indexOf(waiter);
        if (at >= 0) this.#waiting.splice(at, 1);
        reject(signal?.reason);
      };
      signal?.addEventListener('abort', onAbort, { once: true });
      this.#waiting.push(waiter);
    });
  }

  /** A call that acquired the lane ended. */
  release(): void {
    this.#inside--;
    if (this.#inside > 0) return;
    this.#holder = undefined;
    const next = this.#waiting[0];
    if (next === undefined) return;
    this.#holder = next.key;
    for (let i = 0; i < this.#waiting.length;) {
      const waiter = this.#waiting[i]!;
      if (waiter.key !== next.key) {
        i++;
        continue;
      }
      this.#waiting.splice(i, 1);
      this.#inside++;
      waiter.resolve();
    }
  }
}

/**
 * Q1, Q2: answers one request a downstream pushed: to the caller that owns it, or a JSON-RPC
 * error at once (the call itself goes on). Refused as a client without the capability would
 * refuse it (-32601) when the caller's host cannot answer it, -32603 when it has no owner.
 */
export async function answerAsk(
  route: CallerRoute,
  request: { readonly method: string; readonly params?: Record<string, unknown> },
): Promise<Record<string, unknown>> {
  const { _meta: _ignored, ...params } = request.params ?? {};
  const ask: ClientAsk = { method: request.method, params };
  const owner = route.owner();
  if ('refused' in owner) {
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `mcp-normalizer cannot forward ${ask.method}: ${owner.refused}`,
    );
  }
  if (!hostCanAnswer(owner.capabilities, ask)) {
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `The client behind mcp-normalizer does not support ${ask.method}${ask.method === 'elicitation/create' && params['mode'] === 'url' ? ' in URL mode' : ''}`,
    );
  }
  return owner.ask(ask);
}

/**
 * E3: the level a modern downstream is asked to log at, on every request. The 2026-07-28 revision
 * sends log messages only for a request whose `_meta` names a level (none: no logs), where 2025
 * servers logged unasked. `info` is the gateway's own default log level: what a downstream logs
 * below it would not be kept anyway.
 */
const DOWNSTREAM_LOG_LEVEL = 'info';
const LOG_LEVEL_KEY = 'io.modelcontextprotocol/logLevel';

function withLogLevel(params: Record<string, unknown>): Record<string, unknown> {
  const meta = params['_meta'];
  return {
    ...params,
    _meta: {
      ...(typeof meta === 'object' && meta !== null ? meta : {}),
      [LOG_LEVEL_KEY]: DOWNSTREAM_LOG_LEVEL,
    },
  };
}

/**
 * E3, P8: what every request to a 2026-07-28 server carries in `_meta`: the log level, and the
 * client capabilities of the caller behind it (narrowed to `client_features`; none without a
 * caller), which the SDK would otherwise fill with everything we advertise.
 */
export function modernParams(
  params: Record<string, unknown>,
  features: readonly ClientFeature[],
  caller: Caller | undefined,
  takesTasks = false,
): Record<string, unknown> {
  const withLevel = withLogLevel(params);
  const capabilities = callerCapabilities(features, caller);
  // X6: a task the gateway runs for its caller (task-driver.ts) is the gateway's to take.
  if (takesTasks) capabilities.extensions = { [TASKS_EXTENSION]: {} };
  return {
    ...withLevel,
    _meta: {
      ...(withLevel['_meta'] as object),
      [CLIENT_CAPABILITIES_META_KEY]: capabilities,
    },
  };
}
