/**
 * One downstream server's life cycle (P1, P4, P5): connect, become ready, notice when it goes
 * away, bring it back, withhold its lists when it stays away, close.
 *
 * States: `connecting` (first attempt) → `ready` → `down` → `restarting` → `ready` ..., and
 * `closed` (terminal, after {@link Connection.close}). A server is `ready` only once its tool
 * listing succeeded (P4). Calls go to the downstream only in `ready`; everything here throws and
 * `dispatch.ts` turns what is thrown into a Result.
 *
 * What is not the life cycle lives beside it: the era (`era.ts`), the client and its handlers
 * (`client.ts`), the lists (`listing.ts`), the listen loop (`listen.ts`), the request paths
 * (`routes.ts`) and the wording of a failed start (`start-errors.ts`). Every way of losing a
 * client (it closed, it became unreachable, its tool listing failed) goes through one place,
 * {@link Connection#lose}.
 */
import { SdkErrorCode, SdkError } from '@modelcontextprotocol/client';
import type { Client, Implementation, Transport } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import type { Scrubber } from '../core/secrets.js';
import { RestartClock } from './restart-clock.js';
import { createDownstreamClient } from './client.js';
import { Emitter } from './emitter.js';
import { EraMemory, type DownstreamEra } from './era.js';
import { describeError as describe, isUnreachable } from './errors.js';
import { keepListening } from './listen.js';
import { announcedLists, Listings, type FeatureLists, type ListGroup } from './listing.js';
import { liftTaskResults } from './task-results.js';
import { RequestTap } from './request-tap.js';
import { Routes, type ConnectionCallOptions } from './routes.js';
import { InFlight } from './in-flight.js';
import { isLoginRequired, startFailure, withExitReport } from './start-errors.js';
import { SkippedLine, StdioClientTransport } from './stdio-client.js';
import { Children } from './children.js';
import type { Timers } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import { defaultTransportFactory, type TransportFactory } from './transport.js';
import type { ConnectionEvents, ConnectionOptions, ConnectionState } from './connection-types.js';

export type { ConnectionCallOptions } from './routes.js';
export type { DownstreamEra } from './era.js';
export type { ConnectionEvents, ConnectionOptions, ConnectionState } from './connection-types.js';

/** One downstream MCP server behind an SDK `Client`, restarted with backoff when it fails. */
export class Connection {
  readonly name: string;
  readonly events: Emitter<ConnectionEvents>;
  #state: ConnectionState = 'connecting';
  #client: Client | undefined;
  /** The current client's requests past its Protocol: 2025 stdio servers (request-tap.ts). */
  #tap: RequestTap | undefined;
  #generation = 0;
  #lastError: string | undefined;
  /** D3: the last attempt failed for want of a login (LoginRequiredError). */
  #loginRequired = false;
  /** The transport of the current client, for its exit report once it closed. */
  #transport: Transport | undefined;
  /** P5: every child and client close of this connection (none outlives us). */
  readonly #children: Children;
  readonly #clock: RestartClock;
  readonly #inflight = new InFlight();
  readonly #era: EraMemory;
  readonly #lists: Listings;
  readonly #routes: Routes;
  readonly #server: ServerConfig;
  readonly #logger: Logger;
  readonly #transports: TransportFactory;
  readonly #timers: Timers;
  /** When the attempt under way (connecting, restarting) began. */
  #attemptStartedAt = 0;
  readonly #clientInfo: Implementation;
  readonly #scrub: Scrubber | undefined;

  constructor(options: ConnectionOptions) {
    this.#server = options.server;
    this.name = options.server.name;
    this.#logger = options.logger;
    this.#transports = options.transports ?? defaultTransportFactory;
    this.#timers = options.timers ?? systemTimers;
    this.#clock = new RestartClock(
      this.#timers,
      options.random ?? Math.random,
      options.backoff ?? {},
      options.server.withholdAfterMs,
    );
    this.#clientInfo = options.clientInfo;
    this.#scrub = options.scrub;
    this.events = new Emitter((error) => this.#logger.error({ err: error }, 'connection listener threw'));
    this.#era = new EraMemory(this.#server);
    this.#children = new Children(this.#timers);
    this.#routes = new Routes(this.#server, this.#timers);
    this.#lists = new Listings({
      logger: this.#logger,
      changed: (group) => {
        if (group === 'tools') this.events.emit('toolsChanged');
        else this.events.emit('featuresChanged', group);
      },
      toolsStored: (tools) => this.#routes.index(tools),
    });
  }

  get state(): ConnectionState {
    return this.#state;
  }
  /** Last known good tools, raw (the catalog checks each, T12); `[]` while withheld (P4, T10). */
  get tools(): readonly unknown[] {
    return this.#lists.tools;
  }
  get toolsWithheld(): boolean {
    return this.#lists.withheld;
  }
  /** U5: last known good prompts, resources and templates; empty while withheld, like tools. */
  get features(): FeatureLists {
    return this.#lists.features;
  }
  /** D3: the server is down because this connection's principal has no usable login. */
  /** Issue 47: the extensions the server declared (`capabilities.extensions`), while connected. */
  get extensions(): Readonly<Record<string, unknown>> | undefined {
    return this.#client?.getServerCapabilities()?.extensions as Readonly<Record<string, unknown>> | undefined;
  }

  get loginRequired(): boolean {
    return this.#loginRequired;
  }

  get lastError(): string | undefined {
    return this.#lastError;
  }
  /** E5: the era the current (or last) connection landed on; undefined before the first. */
  get era(): DownstreamEra | undefined {
    return this.#era.era;
  }
  /** E5: the protocol revision negotiated with the server, e.g. `2026-07-28` or `2025-06-18`. */
  get protocolVersion(): string | undefined {
    return this.#era.protocolVersion;
  }
  /** Restart attempts started since construction. */
  get restarts(): number {
    return this.#clock.restarts;
  }
  /** Calls currently in flight on the downstream. */
  get inflight(): number {
    return this.#inflight.size;
  }

  /**
   * P4: ms until the next restart attempt while down; while an attempt runs, until its start-up
   * bound (issue 56: it is up by then, or down with its own retry time; never "retry now" while
   * it starts); else undefined.
   */
  retryAfterMs(): number | undefined {
    if (this.#state === 'connecting' || this.#state === 'restarting') {
      const left = this.#attemptStartedAt + this.#server.startupTimeoutMs - this.#timers.now();
      return Math.max(1000, Math.round(left));
    }
    return this.#state === 'down' ? this.#clock.retryAfterMs() : undefined;
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
    return this.#routes.call(this.#era.era, tool, args, options, (method, params, o) =>
      this.request(method, params, o),
    );
  }

  /**
   * Any request to the downstream (U5: `prompts/get`, `resources/read`, `completion/complete`),
   * with the same guarantees as {@link call}: a lenient result (the caller checks it), the
   * server's timeout, progress, the caller's cancellation, and an immediate rejection when the
   * connection drops.
   */
  request(
    method: string,
    params: Record<string, unknown>,
    options: ConnectionCallOptions = {},
  ): Promise<unknown> {
    const client = this.#client;
    const era = this.#era.era;
    if (this.#state !== 'ready' || !client || era === undefined) {
      return Promise.reject(
        new SdkError(SdkErrorCode.ConnectionClosed, `Server "${this.name}" is ${this.#state}`),
      );
    }
    // Q1: while the call runs, what the server pushes to its client belongs to this caller.
    const leave = options.caller !== undefined ? this.#routes.callers.enter(options.caller) : undefined;
    // P4: our own rejection on close, so no call can hang even if the SDK's does not come.
    const route = { client, era, tap: this.#tap };
    return this.#inflight.run(() => this.#routes.send(route, method, params, options), {
      ...(leave !== undefined ? { ended: leave } : {}),
      failed: (error) => this.#failed(client, error),
    });
  }

  /**
   * What a failed request rejects with. P4 for remote servers: HTTP has no "process exited"; a
   * request that cannot reach the server is how we learn it is gone. It is taken down so that
   * it is reconnected with backoff.
   */
  #failed(client: Client, error: unknown): unknown {
    if (client !== this.#client || this.#state !== 'ready' || !isUnreachable(error)) return error;
    this.#lose(client, 'unreachable', error);
    return new SdkError(
      SdkErrorCode.ConnectionClosed,
      `Server "${this.name}" is unreachable: ${describe(error)}`,
    );
  }

  /**
   * Stops for good: no more restarts, in-flight calls fail with -32000, the client is closed
   * (stdio: stdin end → SIGTERM → SIGKILL, bounded).
   */
  async close(): Promise<void> {
    if (this.#state === 'closed') return;
    this.#generation++;
    this.#clock.stop();
    const client = this.#client;
    this.#client = undefined;
    this.#dropInflight('shutting down');
    this.#setState('closed');
    if (client) void this.#children.close(client);
    // P5: the closes of earlier clients (a start that timed out, a crash) may still be waiting
    // on their children; a one-shot command exits right after this, and a child in its own
    // process group would outlive it. Whatever has not exited by the end of the bound is killed.
    await this.#children.waitAll();
    this.killNow();
  }

  /**
   * P5, last resort: SIGKILL the current child process at once, synchronously. For a forced exit
   * (a second signal, or a shutdown past its deadline), where the bounded {@link close} has no
   * time left; a no-op for remote servers and when no child runs.
   */
  killNow(): void {
    this.#children.killNow();
  }

  async #attempt(kind: 'connecting' | 'restarting'): Promise<void> {
    const generation = ++this.#generation;
    this.#attemptStartedAt = this.#timers.now();
    const stale = (): boolean => generation !== this.#generation || this.#state === 'closed';
    this.#setState(kind);
    let client: Client | undefined;
    let transport: Transport | undefined;
    try {
      transport = await this.#transports.create(this.#server, this.#logger, this.#scrub);
      this.#children.adopt(transport);
      if (stale()) {
        await transport.close().catch(() => {});
        return;
      }
      const own = this.#newClient();
      client = own;
      this.#client = own;
      this.#tap = undefined;
      this.#transport = transport;
      this.#routes.watches.clear();
      const prior = this.#era.prior;
      const connecting = own.connect(transport, {
        // P1: start-up has its own bound (an `npx -y` server may need a while), apart from calls.
        timeout: this.#server.startupTimeoutMs,
        ...(prior !== undefined ? { prior } : {}),
      });
      // P5: known before `initialize` is answered; read again once connected.
      this.#children.track(transport);
      try {
        await connecting;
      } catch (error) {
        // E5: no 2026 answer to the first probe (an HTTP 500, an HTML page, a child that exits
        // on it) means a 2025 server: straight to `initialize`, at once. Not when the attempt
        // was ended meanwhile (a shutdown): no probe line, no second attempt.
        if (!stale() && this.#era.probeFailed(error)) {
          this.#logger.info(
            { probe: this.#era.probeError },
            'downstream gave no 2026 answer to the server/discover probe: speaking the 2025 protocol to it',
          );
          if (client === this.#client) this.#client = undefined;
          void this.#children.close(own);
          return await this.#attempt(kind);
        }
        throw error;
      }
      this.#children.track(transport);
      if (stale()) return;
      this.#era.learn(own);
      this.#logger.debug(
        { era: this.#era.era, protocolVersion: this.#era.protocolVersion },
        'downstream era',
      );
      if (this.#era.era === 'legacy' && this.#server.transport.type === 'stdio')
        this.#tap = new RequestTap(transport);
      // X5: a 2026 server's CreateTaskResult gets past the SDK's decoding (task-results.ts).
      if (this.#era.era === 'modern') liftTaskResults(transport);
      // U5: listed before `ready` so the first round carries them; a failed feature listing
      // keeps the server ready (its tools work) with its last known good lists.
      const reading = await this.#lists.readAll(own, announcedLists(own), {
        tools: this.#server.startupTimeoutMs,
        features: this.#server.timeoutMs,
      });
      if (stale()) return;
      // P4: a close during the attempt was ignored by #onClosed, and a feature listing
      // swallows its own failures: a client that closed meanwhile must not become `ready`.
      if (own.transport === undefined) throw new Error('Connection closed while listing');
      this.#becomeReady();
      this.#lists.store(reading);
      if (this.#era.era === 'modern') void this.#listen(own);
    } catch (error) {
      if (stale()) return;
      // A stdio server that died at start: how, and its last words (before its client closes).
      const worded = await startFailure(error, this.#server, transport, this.#scrub);
      if (stale()) return;
      if (client && this.#client === client) this.#client = undefined;
      if (client) void this.#children.close(client);
      // E5: a failed attempt re-probes next time, and says what a failed probe found.
      this.#goDown(this.#era.failed(worded));
    }
  }

  /** The client of one attempt, its events routed here while it is the current one. */
  #newClient(): Client {
    const client: Client = createDownstreamClient(this.#server, this.#clientInfo, this.#routes.callers, {
      closed: () => this.#onClosed(client),
      error: (error) => {
        // P6: a server's noise on its stdout is a line of the log, like its stderr, not a failure.
        if (error instanceof SkippedLine) this.#logger.info({ stdout: true }, error.message);
        // Issue 56: a late answer to a request the gateway gave up on (an `auto` era probe a slow
        // 2025 server answers after its bound) is expected, not a fault.
        else if (
          error instanceof Error &&
          error.message.startsWith('Received a response for an unknown message ID')
        )
          this.#logger.debug({ err: error }, 'late answer to an abandoned request');
        else this.#logger.warn({ err: error }, 'downstream transport error');
      },
      listChanged: (group) => this.#onListChanged(client, group),
      log: (params) => {
        if (client === this.#client) this.events.emit('log', params);
      },
      resourceUpdated: (uri) => {
        if (client === this.#client) this.events.emit('resourceUpdated', uri);
      },
    });
    return client;
  }

  /** E6: list changes of a modern server, on a listen stream kept open while it is current. */
  #listen(client: Client): Promise<void> {
    const generation = this.#generation;
    return keepListening(client, {
      current: () => generation === this.#generation && client === this.#client && this.#state === 'ready',
      reopened: () => {
        for (const group of new Set<ListGroup>(['tools', ...announcedLists(client)]))
          this.#onListChanged(client, group);
      },
      timers: this.#timers,
      logger: this.#logger,
    });
  }

  /** T10, U5: a list of the current client changed; a failed tool listing takes it down (P4). */
  #onListChanged(client: Client, group: ListGroup): void {
    if (client !== this.#client) return;
    const generation = this.#generation;
    void this.#lists.refresh(group, client, {
      ready: this.#state === 'ready',
      current: () => generation === this.#generation && this.#state === 'ready' && client === this.#client,
      timeoutMs: this.#server.timeoutMs,
      announced: announcedLists(client),
      toolsFailed: (error) => this.#lose(client, 'tool listing failed', error),
    });
  }

  #onClosed(client: Client): void {
    // Closes during an attempt reject the attempt's own request; stale clients are ignored.
    if (client !== this.#client || this.#state !== 'ready') return;
    this.#children.exited();
    const transport = this.#transport;
    const report = transport instanceof StdioClientTransport ? transport.exitReport() : undefined;
    this.#lose(
      client,
      'connection closed',
      withExitReport(new Error('Connection closed'), report, this.#scrub),
    );
  }

  /**
   * P4: the current client is gone (`why`): every call in flight fails at once, the client is
   * closed, and the server goes down for a restart with backoff. The one way a client is lost.
   */
  #lose(client: Client, why: string, error: unknown): void {
    this.#client = undefined;
    this.#dropInflight(why);
    void this.#children.close(client);
    this.#goDown(error);
  }

  #becomeReady(): void {
    this.#clock.ready();
    this.#lastError = undefined;
    this.#loginRequired = false;
    this.#era.ready();
    this.#setState('ready');
  }

  #goDown(error: unknown): void {
    this.#lastError = describe(error);
    this.#loginRequired = isLoginRequired(error);
    // P4: only a server down longer than withhold_after_ms loses its lists (T10).
    const delay = this.#clock.down(
      { restart: () => void this.#attempt('restarting'), withhold: () => this.#withhold() },
      !this.#lists.withheld,
    );
    this.#setState('down');
    // D2, issue 56: a server waiting for its user's login is the user's next step, not a fault.
    if (this.#loginRequired)
      this.#logger.info({ error: this.#lastError, retryInMs: delay }, 'downstream waits for a login');
    else this.#logger.warn({ error: this.#lastError, retryInMs: delay }, 'downstream down');
  }

  #withhold(): void {
    if (this.#state === 'ready' || this.#state === 'closed') return;
    this.#logger.warn({ withholdAfterMs: this.#server.withholdAfterMs }, 'downstream tools withheld');
    this.#lists.withhold();
  }

  #dropInflight(why: string): void {
    this.#inflight.dropAll(new SdkError(SdkErrorCode.ConnectionClosed, `Server "${this.name}": ${why}`));
  }

  #setState(state: ConnectionState): void {
    if (this.#state === state) return;
    this.#state = state;
    this.events.emit('stateChanged', state);
  }
}
