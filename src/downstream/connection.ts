/**
 * One downstream server: connect, list its tools, call them, notice when it goes away, and bring
 * it back (P1, P3, P4, P7, P8, T10, T12).
 *
 * States: `connecting` (first attempt) → `ready` → `down` → `restarting` → `ready` ..., and
 * `closed` (terminal, after {@link Connection.close}). A server is `ready` only once its tool
 * listing succeeded (P4). Calls go to the downstream only in `ready`; everything here throws and
 * `dispatch.ts` turns what is thrown into a Result.
 *
 * Longer than the ~300-line aim: the state machine (attempt, listing, drop, restart, withhold,
 * close) shares one set of private fields, and splitting it would spread each transition over
 * several files.
 */
import { Client, SdkErrorCode, SdkError } from '@modelcontextprotocol/client';
import type {
  PriorDiscovery,
  VersionNegotiationOptions,
  Transport,
  ClientRequest,
  Implementation,
  LoggingMessageNotification,
  Progress,
  Tool,
} from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import { signalProcessTree, StdioClientTransport, withExit, type ExitReport } from './stdio-client.js';

import { paramHeaderDeclarations, paramHeaders, type ParamHeader } from '../core/param-headers.js';
import type { Caller, InputReply } from '../core/input.js';
import type { Scrubber } from '../core/secrets.js';
import { nextDelay, type BackoffOptions } from './backoff.js';
import { advertisedCapabilities, answerAsk, CallerRoute, FEATURE_METHODS, modernParams } from './callers.js';
import { Emitter } from './emitter.js';
import { describeError as describe, isUnreachable } from './errors.js';
import { FeatureListing } from './feature-listing.js';
import { EMPTY_FEATURES, type FeatureCapability, type FeatureLists } from './feature-list.js';
import { systemTimers, type TimerHandle, type Timers } from './timers.js';
import {
  checkTools,
  LenientCallToolResultSchema,
  LenientListToolsResultSchema,
  listAllPages,
  stableJson,
  type DroppedTool,
} from './tool-list.js';
import { ResourceWatches } from './resource-watches.js';
import { runAsTask, taskOnly, type SendRequest } from './task-runner.js';
import { RequestTap } from './request-tap.js';
import { defaultTransportFactory, type TransportFactory } from './transport.js';

/** Where a downstream is in its life cycle. */
export type ConnectionState = 'connecting' | 'ready' | 'down' | 'restarting' | 'closed';

/** Options of {@link Connection}. */
export interface ConnectionOptions {
  readonly server: ServerConfig;
  /** The server's child logger (stderr lines, state changes, dropped tools). */
  readonly logger: Logger;
  /** @default defaultTransportFactory */
  readonly transports?: TransportFactory;
  /** @default systemTimers */
  readonly timers?: Timers;
  /** Source of jitter in [0, 1). @default Math.random */
  readonly random?: () => number;
  /** Restart curve. @default DEFAULT_BACKOFF */
  readonly backoff?: BackoffOptions;
  /** @default { name: 'mcp-normalizer', version: '0.1.0' } */
  readonly clientInfo?: Implementation;
  /** L2: given to the transport, which scrubs the child's stderr lines before cutting them. */
  readonly scrub?: Scrubber;
}

/** Per-call options of {@link Connection.call}. */
export interface ConnectionCallOptions {
  /**
   * The caller's cancellation (P3). One signal per call, like the upstream's per-request signal:
   * the SDK adds an abort listener to it while the request runs.
   */
  readonly signal?: AbortSignal;
  /** Progress from the downstream (P3); every notification also restarts the timeout. */
  readonly onProgress?: (progress: Progress) => void;
  /** This request's timeout when less than `timeout_ms` is left (P3: time spent queued counts). */
  readonly timeoutMs?: number;
  /** Extra HTTP headers for this request (Streamable HTTP only; SEP-2243 `Mcp-Param-*`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Q1: the upstream client behind the call, who answers what the server asks meanwhile. */
  readonly caller?: Caller;
  /** Q3: the retry of a relayed `input_required` round (2026-07-28 servers). */
  readonly reply?: InputReply;
  /** O2: `_meta` keys for the request (the W3C trace context). */
  readonly meta?: Record<string, unknown>;
}

/** Events of a {@link Connection}. */
export type ConnectionEvents = {
  stateChanged: [state: ConnectionState];
  /** The served tool list changed: new list, first listing, withheld, or no longer withheld (T10). */
  toolsChanged: [];
  /** U5: the served prompts (`prompts`) or resources and templates (`resources`) changed. */
  featuresChanged: [capability: FeatureCapability];
  /** U5: a `notifications/message` (logging) from the downstream. */
  log: [params: LoggingMessageNotification['params']];
  /** Q5: `notifications/resources/updated` for a URI we subscribed to (its own URI). */
  resourceUpdated: [uri: string];
};

/** How many times one listing is repeated when `tools/list_changed` keeps arriving meanwhile. */
const MAX_RELIST_ROUNDS = 5;

/** Upper bound on closing one client; the stdio transport's own close is bounded by ~4 s. */
const CLOSE_BOUND_MS = 5000;

/** How long a failed start waits for its stdio child's exit, to report it (U3). */
const EXIT_WAIT_MS = 500;

/**
 * E5: how long an `auto` probe waits for `server/discover` before calling the server legacy. On
 * stdio a silent server is a legacy one (the SDK falls back); the connection's own timeout (60 s
 * by default) would stall every legacy server that ignores unknown requests.
 */
const PROBE_TIMEOUT_MS = 5000;

/** The protocol era a downstream connection landed on. */
export type DownstreamEra = 'legacy' | 'modern';

/** E5: a cached era verdict and how it was learned. */
interface Verdict {
  readonly prior: PriorDiscovery;
  /**
   * `probe`: the server answered the probe (re-probed after a failure: it may have changed);
   * `exit`: the server exited on the probe (Rust-SDK servers do), so probing again would only
   * kill it again; kept for the process's lifetime.
   */
  readonly learnedBy: 'probe' | 'exit';
}

/** E5: the SDK client's negotiation options for a server's `protocol` setting. */
function negotiation(server: ServerConfig): VersionNegotiationOptions {
  switch (server.protocol) {
    case 'legacy':
      return { mode: 'legacy' };
    case 'auto':
      return { mode: 'auto', probe: { timeoutMs: Math.min(PROBE_TIMEOUT_MS, server.startupTimeoutMs) } };
    default:
      return { mode: { pin: server.protocol } };
  }
}

/** E6: the first pause before a dropped listen stream is reopened, and the longest. */
const LISTEN_RETRY_MS = 1000;
const MAX_LISTEN_RETRY_MS = 30_000;

/** True for the SDK's "the era could not be negotiated" (probe failed, no common version). */
function isEraFailure(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === SdkErrorCode.EraNegotiationFailed;
}

/** The stdio transport exposes its child's pid once started (null before, and for HTTP). */
function childPid(transport: Transport): number | undefined {
  const pid = (transport as { pid?: number | null }).pid;
  return typeof pid === 'number' ? pid : undefined;
}

/** One downstream MCP server behind an SDK {@link Client}, restarted with backoff when it fails. */
export class Connection {
  readonly name: string;
  readonly events: Emitter<ConnectionEvents>;
  #state: ConnectionState = 'connecting';
  #client: Client | undefined;
  /** The current client's requests past its Protocol: 2025 stdio servers (request-tap.ts). */
  #tap: RequestTap | undefined;
  /** The live transport's child process id, for {@link Connection.killNow} (stdio only). */
  #pid: number | undefined;
  #generation = 0;
  #tools: readonly Tool[] = [];
  #fingerprint: string | undefined;
  #withheld = false;
  #lastError: string | undefined;
  #dropped: readonly DroppedTool[] = [];
  /** The transport of the current client, for its exit report once it closed. */
  #transport: Transport | undefined;
  /** Every stdio transport of this connection whose child may still run (P5: none outlives us). */
  readonly #children = new Set<StdioClientTransport>();
  /** Client closes under way (a failed attempt's, a dropped client's): close() waits for them. */
  readonly #closing = new Set<Promise<void>>();
  #restarts = 0;
  #failures = 0;
  #verdict: Verdict | undefined;
  /** SEP-2243: the `x-mcp-header` declarations of the listed tools that have any. */
  #paramHeaders = new Map<string, readonly ParamHeader[]>();
  /** Q6: the listed tools that only run as tasks. */
  #taskTools = new Set<string>();
  #era: DownstreamEra | undefined;
  #protocolVersion: string | undefined;
  #nextAttemptAt: number | undefined;
  #restartTimer: TimerHandle | undefined;
  #withholdTimer: TimerHandle | undefined;
  #listing = false;
  #listDirty = false;
  readonly #inflight = new Set<(error: Error) => void>();
  readonly #callers = new CallerRoute();
  readonly #watches = new ResourceWatches();
  readonly #features: FeatureListing;
  readonly #server: ServerConfig;
  readonly #logger: Logger;
  readonly #transports: TransportFactory;
  readonly #timers: Timers;
  readonly #random: () => number;
  readonly #backoff: BackoffOptions;
  readonly #clientInfo: Implementation;
  readonly #scrub: Scrubber | undefined;

  constructor(options: ConnectionOptions) {
    this.#server = options.server;
    this.name = options.server.name;
    this.#logger = options.logger;
    this.#transports = options.transports ?? defaultTransportFactory;
    this.#timers = options.timers ?? systemTimers;
    this.#random = options.random ?? Math.random;
    this.#backoff = options.backoff ?? {};
    this.#clientInfo = options.clientInfo ?? { name: 'mcp-normalizer', version: '0.1.0' };
    this.#scrub = options.scrub;
    this.events = new Emitter((error) => this.#logger.error({ err: error }, 'connection listener threw'));
    this.#features = new FeatureListing({
      logger: this.#logger,
      timeoutMs: this.#server.timeoutMs,
      changed: (capability) => this.events.emit('featuresChanged', capability),
    });
  }

  get state(): ConnectionState {
    return this.#state;
  }
  /** Last known good tools; `[]` while withheld (P4, T10). */
  /** T12: the entries of the last listing that were withheld before the catalog, with why. */
  get droppedTools(): readonly DroppedTool[] {
    return this.#dropped;
  }

  get tools(): readonly Tool[] {
    return this.#withheld ? [] : this.#tools;
  }
  get toolsWithheld(): boolean {
    return this.#withheld;
  }
  /** U5: last known good prompts, resources and templates; empty while withheld, like tools. */
  get features(): FeatureLists {
    return this.#withheld ? EMPTY_FEATURES : this.#features.lists;
  }
  get lastError(): string | undefined {
    return this.#lastError;
  }
  /** E5: the era the current (or last) connection landed on; undefined before the first. */
  get era(): DownstreamEra | undefined {
    return this.#era;
  }
  /** E5: the protocol revision negotiated with the server, e.g. `2026-07-28` or `2025-06-18`. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }
  /** Restart attempts started since construction. */
  get restarts(): number {
    return this.#restarts;
  }
  /** Calls currently in flight on the downstream. */
  get inflight(): number {
    return this.#inflight.size;
  }

  /** P4: ms until the next restart attempt while down; 0 while an attempt runs; else undefined. */
  retryAfterMs(): number | undefined {
    if (this.#state === 'connecting' || this.#state === 'restarting') return 0;
    if (this.#state !== 'down' || this.#nextAttemptAt === undefined) return undefined;
    return Math.max(0, this.#nextAttemptAt - this.#timers.now());
  }

  /**
   * The first connection attempt. Resolves (never rejects) once the server is ready or the
   * attempt failed; a failure schedules background restarts and never waits for them (P1).
   */
  start(): Promise<void> {
    return this.#attempt('connecting');
  }

  /**
   * Calls `tool` on the downstream through the raw request method (P7). Throws when the server
   * is not ready (`SdkError` CONNECTION_CLOSED), on timeout (REQUEST_TIMEOUT) or abort, on a
   * JSON-RPC error, and at once when the connection drops (CONNECTION_CLOSED, P4).
   */
  call(tool: string, args: Record<string, unknown>, options: ConnectionCallOptions = {}): Promise<unknown> {
    // E5, SEP-2243: a modern server checks the `Mcp-Param-*` headers against the arguments.
    const declared = this.#era === 'modern' ? this.#paramHeaders.get(tool) : undefined;
    const withHeaders =
      declared === undefined ? options : { ...options, headers: paramHeaders(declared, args) };
    // Q6: a task-only tool of a 2025 server runs as a task.
    if (this.#era === 'legacy' && this.#taskTools.has(tool)) {
      const timeoutMs = options.timeoutMs ?? this.#server.timeoutMs;
      const send: SendRequest = (method, params, o) => this.request(method, params, { ...options, ...o });
      return runAsTask(send, tool, args, { ...options, timers: this.#timers, timeoutMs });
    }
    const params: Record<string, unknown> = { name: tool, arguments: args };
    // Q3: the retry of a relayed round carries the host's answers and the server's own state.
    if (options.reply !== undefined) params['inputResponses'] = options.reply.inputResponses;
    if (options.reply?.requestState !== undefined) params['requestState'] = options.reply.requestState;
    if (options.meta !== undefined) params['_meta'] = options.meta;
    return this.request('tools/call', params, withHeaders);
  }

  /**
   * Any request to the downstream (U5: `prompts/get`, `resources/read`, `completion/complete`),
   * with the same guarantees as {@link call}: a lenient result (the caller checks it), the
   * server's timeout, progress, the caller's cancellation, and an immediate rejection when the
   * connection drops.
   */
  async request(
    method: string,
    params: Record<string, unknown>,
    options: ConnectionCallOptions = {},
  ): Promise<unknown> {
    const client = this.#client;
    if (this.#state !== 'ready' || !client) {
      throw new SdkError(SdkErrorCode.ConnectionClosed, `Server "${this.name}" is ${this.#state}`);
    }
    // The caller's signal goes down as it is: a forwarding controller cost ~8 µs per call.
    // Q5: a 2026 server hears of subscriptions on listen streams.
    if (this.#era === 'modern' && (method === 'resources/subscribe' || method === 'resources/unsubscribe'))
      return this.#watches.apply(client, method, String(params['uri']));
    let fail!: (error: Error) => void;
    // Q1: while the call runs, what the server pushes to its client belongs to this caller.
    const leave = options.caller !== undefined ? this.#callers.enter(options.caller) : undefined;
    const modern = this.#era === 'modern';
    const tap = this.#tap;
    try {
      return await new Promise<unknown>((resolve, reject) => {
        // P4: our own rejection on close, so no call can hang even if the SDK's does not come.
        fail = reject;
        this.#inflight.add(fail);
        const timeout = options.timeoutMs ?? this.#server.timeoutMs;
        const onProgress = (progress: Progress): void => options.onProgress?.(progress);
        const sent = tap // P7: a 2025 stdio server's requests pass by the SDK's Protocol.
          ? tap.request(method, params, { timeoutMs: timeout, onProgress, signal: options.signal })
          : client.request(
              // Any method: the SDK's typing lists only the spec's requests, which these all are.
              {
                method,
                params: modern ? modernParams(params, this.#server.clientFeatures, options.caller) : params,
              } as ClientRequest,
              LenientCallToolResultSchema,
              {
                // Q3: a 2026 server's `input_required` comes back as it is, for the caller's host.
                ...(modern && method === 'tools/call' ? { allowInputRequired: true } : {}),
                timeout,
                // P3: progress restarts the clock; a handler is always registered so that it can.
                resetTimeoutOnProgress: true,
                onprogress: onProgress,
                ...(options.signal !== undefined ? { signal: options.signal } : {}),
                ...(options.headers !== undefined ? { headers: options.headers } : {}),
              },
            );
        sent.then(resolve, reject);
      });
    } catch (error) {
      // P4 for remote servers: HTTP has no "process exited"; a request that cannot reach the
      // server is how we learn it is gone. Take it down so it is reconnected with backoff.
      if (client === this.#client && this.#state === 'ready' && isUnreachable(error)) {
        this.#client = undefined;
        this.#dropInflight('unreachable');
        void this.#closeClient(client);
        this.#goDown(error);
        throw new SdkError(
          SdkErrorCode.ConnectionClosed,
          `Server "${this.name}" is unreachable: ${describe(error)}`,
        );
      }
      throw error;
    } finally {
      this.#inflight.delete(fail);
      leave?.();
    }
  }

  /**
   * Stops for good: no more restarts, in-flight calls fail with -32000, the client is closed
   * (stdio: stdin end → SIGTERM → SIGKILL, bounded).
   */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#generation++;
    this.#clearTimers();
    const client = this.#client;
    this.#client = undefined;
    this.#dropInflight('shutting down');
    this.#setState('closed');
    if (client) void this.#closeClient(client);
    // P5: the closes of earlier clients (a start that timed out, a crash) may still be waiting
    // on their children; a one-shot command exits right after this, and a child in its own
    // process group would outlive it. Whatever has not exited by the end of the bound is killed.
    await Promise.all([...this.#closing]);
    this.killNow();
  }

  /**
   * P5, last resort: SIGKILL the current child process at once, synchronously. For a forced exit
   * (a second signal, or a shutdown past its deadline), where the bounded {@link close} has no
   * time left; a no-op for remote servers and when no child runs.
   */
  killNow(): void {
    const pid = this.#pid;
    this.#pid = undefined;
    // The whole process group: a wrapper's children die with it (P5).
    if (pid !== undefined) signalProcessTree(pid, 'SIGKILL');
    for (const transport of this.#children) {
      transport.killNow();
      this.#children.delete(transport);
    }
  }

  async #attempt(kind: 'connecting' | 'restarting'): Promise<void> {
    const generation = ++this.#generation;
    const stale = (): boolean => generation !== this.#generation || this.#state === 'closed';
    this.#setState(kind);
    let client: Client | undefined;
    let transport: Transport | undefined;
    try {
      transport = await this.#transports.create(this.#server, this.#logger, this.#scrub);
      for (const old of this.#children) if (!old.running) this.#children.delete(old);
      if (transport instanceof StdioClientTransport) this.#children.add(transport);
      if (stale()) {
        await transport.close().catch(() => {});
        return;
      }
      client = new Client(this.#clientInfo, {
        capabilities: advertisedCapabilities(this.#server.clientFeatures),
        versionNegotiation: negotiation(this.#server),
        // Q3: a 2026 server's input rounds are the caller's host's to answer, not ours.
        inputRequired: { autoFulfill: false },
      });
      this.#pid = undefined;
      this.#client = client;
      this.#tap = undefined;
      this.#transport = transport;
      this.#watches.clear();
      const own = client;
      own.onclose = () => this.#onClientClosed(own);
      own.onerror = (error) => this.#logger.warn({ err: error }, 'downstream transport error');
      own.setNotificationHandler('notifications/tools/list_changed', () => this.#onListChanged(own));
      // U5: prompts and resources are re-listed on their own list_changed, logs are passed on.
      own.setNotificationHandler('notifications/prompts/list_changed', () =>
        this.#onFeatureListChanged(own, 'prompts'),
      );
      own.setNotificationHandler('notifications/resources/list_changed', () =>
        this.#onFeatureListChanged(own, 'resources'),
      );
      own.setNotificationHandler('notifications/message', (notification) => {
        if (own === this.#client) this.events.emit('log', notification.params);
      });
      own.setNotificationHandler('notifications/resources/updated', (notification) => {
        if (own === this.#client) this.events.emit('resourceUpdated', notification.params.uri);
      });
      // Q1, Q2: what a 2025 server asks its client goes to the caller of the call in flight.
      for (const feature of this.#server.clientFeatures) {
        own.setRequestHandler(
          FEATURE_METHODS[feature] as 'elicitation/create',
          (request) =>
            // The host's answer goes back as it is (the SDK checks its shape).
            answerAsk(
              this.#callers,
              request as { method: string; params?: Record<string, unknown> },
            ) as never,
        );
      }
      const prior = this.#verdict?.prior;
      const connecting = own.connect(transport, {
        // P1: start-up has its own bound (an `npx -y` server may need a while), apart from calls.
        timeout: this.#server.startupTimeoutMs,
        ...(prior !== undefined ? { prior } : {}),
      });
      // P5: the stdio transport spawns the child synchronously in start(), which connect() calls
      // before its first await, so the pid is known before `initialize` is answered: a forced
      // exit while it starts (`npx -y` still downloading) must kill it too. Read again once
      // connected, in case a transport spawns later.
      this.#pid = childPid(transport);
      try {
        await connecting;
      } catch (error) {
        // E5: a stdio server that exits on the probe (servers on the Rust SDK exit on any request
        // before `initialize`) is a legacy server, not a crash: respawn at once, straight to
        // `initialize`, and never probe it again.
        if (this.#probeExited(error)) {
          this.#verdict = { prior: { kind: 'legacy' }, learnedBy: 'exit' };
          this.#logger.info(
            'downstream closed on the server/discover probe: speaking the 2025 protocol to it',
          );
          if (client === this.#client) this.#client = undefined;
          void this.#closeClient(own);
          return await this.#attempt(kind);
        }
        throw error;
      }
      this.#pid = childPid(transport) ?? this.#pid;
      if (stale()) return;
      this.#learnEra(own);
      if (this.#era === 'legacy' && this.#server.transport.type === 'stdio')
        this.#tap = new RequestTap(transport);
      const tools = await this.#listStable(own, this.#server.startupTimeoutMs);
      if (stale()) return;
      // U5: listed before `ready` so the first round carries them; a failure here keeps the
      // server ready (its tools work) with its last known good lists (see FeatureListing).
      const features = await this.#features.list(own, this.#capabilities(own));
      if (stale()) return;
      // P4: a close during the attempt was ignored by #onClientClosed, and the feature listing
      // swallows its own failures: a client that closed meanwhile must not become `ready`.
      if (own.transport === undefined) throw new Error('Connection closed while listing');
      this.#becomeReady(tools, features);
      if (this.#era === 'modern') void this.#listen(own);
    } catch (error) {
      if (stale()) return;
      // A stdio server that died at start: how, and its last words. Read before the client is
      // closed (closing forgets the child); its write often fails a moment before its exit.
      const report =
        transport instanceof StdioClientTransport
          ? await transport.exitReportWithin(EXIT_WAIT_MS)
          : undefined;
      if (stale()) return;
      if (client && this.#client === client) this.#client = undefined;
      if (client) void this.#closeClient(client);
      // E5: a failed attempt re-probes next time (the server may have changed era), except a
      // server known to exit on the probe.
      if (this.#verdict?.learnedBy === 'probe') this.#verdict = undefined;
      this.#goDown(this.#located(this.#withExit(this.#startupTimeout(error), report)));
    }
  }

  /** P1: a start-up that timed out says which bound it hit (start-up, not a call's `timeout_ms`). */
  #startupTimeout(error: unknown): unknown {
    if ((error as { code?: unknown } | null)?.code !== SdkErrorCode.RequestTimeout) return error;
    return new Error(
      `did not start within startup_timeout_ms (${this.#server.startupTimeoutMs} ms): ${describe(error)}`,
    );
  }

  /**
   * A remote server's failure names its URL ("fetch failed" alone did not say which server's
   * address was wrong); the URL is scrubbed like every output (L2) where it is shown.
   */
  #located(error: unknown): unknown {
    const transport = this.#server.transport;
    if (transport.type === 'stdio') return error;
    const text = describe(error);
    return text.includes(transport.url) ? error : new Error(`${transport.url}: ${text}`);
  }

  /**
   * U3: a stdio server whose process ended is reported with how it ended and its last stderr
   * lines (scrubbed, L2): "Connection closed" alone sent users to the log to find out why.
   */
  #withExit(error: unknown, report: ExitReport | undefined): unknown {
    return report === undefined ? error : new Error(withExit(describe(error), report, this.#scrub));
  }

  /**
   * E6: a modern server sends list changes only on a `subscriptions/listen` stream, and the SDK
   * never reopens one. Reopened here when it drops (`remote`), after a pause that grows with each
   * drop, and the lists are read again, since changes made meanwhile were not announced. A server
   * that refuses the stream (or a closed client) ends the loop.
   */
  async #listen(client: Client): Promise<void> {
    const generation = this.#generation;
    const current = (): boolean =>
      generation === this.#generation && client === this.#client && this.#state === 'ready';
    for (let drops = 1; current(); drops++) {
      let reason: 'local' | 'graceful' | 'remote';
      try {
        const subscription = await client.listen({
          toolsListChanged: true,
          promptsListChanged: true,
          resourcesListChanged: true,
        });
        reason = await subscription.closed;
      } catch (error) {
        if (current())
          this.#logger.info(
            { error: describe(error) },
            'downstream refused a listen stream: no list changes',
          );
        return;
      }
      if (reason !== 'remote' || !current()) return;
      const pauseMs = Math.min(LISTEN_RETRY_MS * drops, MAX_LISTEN_RETRY_MS);
      this.#logger.info({ retryInMs: pauseMs }, 'downstream listen stream dropped; listening again');
      await new Promise<void>((resolve) => this.#timers.setTimeout(resolve, pauseMs));
      if (!current()) return;
      this.#onListChanged(client);
      for (const capability of this.#capabilities(client)) this.#onFeatureListChanged(client, capability);
    }
  }

  /** E5: true when an `auto` probe on a stdio child failed because the child went away. */
  #probeExited(error: unknown): boolean {
    return (
      this.#server.protocol === 'auto' &&
      this.#server.transport.type === 'stdio' &&
      this.#verdict === undefined &&
      isEraFailure(error)
    );
  }

  /** E5: records the era the client landed on, and (auto) the verdict to reuse as `prior`. */
  #learnEra(client: Client): void {
    this.#era = client.getProtocolEra();
    this.#protocolVersion = client.getNegotiatedProtocolVersion();
    if (this.#server.protocol === 'auto' && this.#verdict === undefined) {
      const discover = client.getDiscoverResult();
      this.#verdict = {
        prior: discover !== undefined ? { kind: 'modern', discover } : { kind: 'legacy' },
        learnedBy: 'probe',
      };
    }
    this.#logger.debug({ era: this.#era, protocolVersion: this.#protocolVersion }, 'downstream era');
  }

  /** Lists every page; repeats while `tools/list_changed` arrived meanwhile (bounded). */
  async #listStable(client: Client, timeoutMs = this.#server.timeoutMs): Promise<readonly Tool[]> {
    this.#listing = true;
    try {
      for (let round = 1; ; round++) {
        this.#listDirty = false;
        const entries = await listAllPages((cursor) =>
          client.request(
            { method: 'tools/list', params: cursor === undefined ? {} : { cursor } },
            LenientListToolsResultSchema,
            { timeout: timeoutMs },
          ),
        );
        const { tools, dropped } = checkTools(entries);
        this.#dropped = dropped;
        // T12: one malformed tool is withheld with a warning naming it; the rest are served.
        for (const bad of dropped) {
          this.#logger.warn(
            { tool: bad.name, reason: bad.reason },
            `tool "${bad.name}" withheld: ${bad.reason}`,
          );
        }
        if (!this.#listDirty || round >= MAX_RELIST_ROUNDS) return tools;
      }
    } finally {
      this.#listing = false;
    }
  }

  #onListChanged(client: Client): void {
    if (client !== this.#client) return;
    // During an attempt or a listing, the running listing repeats itself (see #listStable).
    if (this.#state !== 'ready' || this.#listing) {
      this.#listDirty = true;
      return;
    }
    void this.#relist(client);
  }

  /** T10: re-lists after `tools/list_changed`; a listing that fails takes the server down (P4). */
  async #relist(client: Client): Promise<void> {
    const generation = this.#generation;
    try {
      const tools = await this.#listStable(client);
      if (generation !== this.#generation || this.#state !== 'ready') return;
      this.#applyTools(tools);
    } catch (error) {
      if (generation !== this.#generation || this.#state !== 'ready' || client !== this.#client) return;
      this.#client = undefined;
      this.#dropInflight('tool listing failed');
      void this.#closeClient(client);
      this.#goDown(error);
    }
  }

  /** The U5 lists this downstream has, by the capabilities it announced. */
  #capabilities(client: Client): FeatureCapability[] {
    const announced = client.getServerCapabilities();
    const kinds: FeatureCapability[] = [];
    if (announced?.prompts) kinds.push('prompts');
    if (announced?.resources) kinds.push('resources');
    return kinds;
  }

  #onFeatureListChanged(client: Client, capability: FeatureCapability): void {
    if (client !== this.#client) return;
    // During an attempt the running listing repeats itself; before it, it is yet to come.
    if (this.#state !== 'ready') {
      this.#features.markDirty(capability);
      return;
    }
    const generation = this.#generation;
    void this.#features.refresh(client, capability, () => generation !== this.#generation);
  }

  #onClientClosed(client: Client): void {
    // Closes during an attempt reject the attempt's own request; stale clients are ignored.
    if (client !== this.#client || this.#state !== 'ready') return;
    this.#client = undefined;
    // The child is gone: its pid may be reused by an unrelated process before the next attempt,
    // and killNow must never signal that one.
    this.#pid = undefined;
    this.#dropInflight('connection closed');
    const transport = this.#transport;
    const report = transport instanceof StdioClientTransport ? transport.exitReport() : undefined;
    this.#goDown(this.#withExit(new Error('Connection closed'), report));
  }

  #becomeReady(tools: readonly Tool[], features: Partial<FeatureLists>): void {
    const wasWithheld = this.#withheld;
    this.#failures = 0;
    this.#nextAttemptAt = undefined;
    this.#lastError = undefined;
    if (this.#withholdTimer !== undefined) this.#timers.clearTimeout(this.#withholdTimer);
    this.#withholdTimer = undefined;
    this.#setState('ready');
    this.#logger.info({ tools: tools.length }, 'downstream ready');
    this.#applyTools(tools);
    this.#features.apply(features, wasWithheld);
  }

  /** Stores `tools` as last known good; emits `toolsChanged` only on a real change (P4, T10). */
  #applyTools(tools: readonly Tool[]): void {
    const fingerprint = stableJson(tools);
    const changed = fingerprint !== this.#fingerprint || this.#withheld;
    this.#tools = tools;
    this.#fingerprint = fingerprint;
    this.#paramHeaders = new Map();
    this.#taskTools = new Set(tools.filter(taskOnly).map((tool) => tool.name));
    for (const tool of tools) {
      const declared = paramHeaderDeclarations(tool.inputSchema);
      if (declared.length > 0) this.#paramHeaders.set(tool.name, declared);
    }
    this.#withheld = false;
    if (changed) this.events.emit('toolsChanged');
  }

  #goDown(error: unknown): void {
    this.#lastError = describe(error);
    if (this.#withholdTimer === undefined && !this.#withheld) {
      // P4: only a server down longer than withhold_after_ms loses its tools (T10).
      this.#withholdTimer = this.#timers.setTimeout(() => this.#withhold(), this.#server.withholdAfterMs);
    }
    const delay = nextDelay(this.#failures++, this.#random, this.#backoff);
    this.#nextAttemptAt = this.#timers.now() + delay;
    this.#restartTimer = this.#timers.setTimeout(() => {
      this.#restartTimer = undefined;
      this.#restarts++;
      void this.#attempt('restarting');
    }, delay);
    this.#setState('down');
    this.#logger.warn({ error: this.#lastError, retryInMs: delay }, 'downstream down');
  }

  #withhold(): void {
    this.#withholdTimer = undefined;
    if (this.#state === 'ready' || this.#state === 'closed' || this.#withheld) return;
    this.#withheld = true;
    this.#logger.warn({ withholdAfterMs: this.#server.withholdAfterMs }, 'downstream tools withheld');
    if (this.#tools.length > 0) this.events.emit('toolsChanged');
    this.#features.announceWithheld();
  }

  #dropInflight(why: string): void {
    const error = new SdkError(SdkErrorCode.ConnectionClosed, `Server "${this.name}": ${why}`);
    for (const fail of this.#inflight) fail(error);
    this.#inflight.clear();
  }

  #clearTimers(): void {
    if (this.#restartTimer !== undefined) this.#timers.clearTimeout(this.#restartTimer);
    if (this.#withholdTimer !== undefined) this.#timers.clearTimeout(this.#withholdTimer);
    this.#restartTimer = undefined;
    this.#withholdTimer = undefined;
  }

  #closeClient(client: Client): Promise<void> {
    const transport = client.transport;
    let timer: TimerHandle | undefined;
    const bound = new Promise<void>((resolve) => (timer = this.#timers.setTimeout(resolve, CLOSE_BOUND_MS)));
    const closing = Promise.race([client.close().catch(() => {}), bound]).then(() => {
      this.#timers.clearTimeout(timer);
      this.#closing.delete(closing);
      if (transport instanceof StdioClientTransport && !transport.running) this.#children.delete(transport);
    });
    this.#closing.add(closing);
    return closing;
  }

  #setState(state: ConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.events.emit('stateChanged', state);
  }
}
