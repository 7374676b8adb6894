/**
 * All downstream servers (P1, P2, P5, T10): one {@link Connection} and one p-queue per enabled
 * server, started in parallel; tool-list and state events for the catalog and health; calls that
 * always answer with a Result; a bounded graceful shutdown.
 */
import type { CompleteRequestParams } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import { failure, type Result } from '../core/result.js';
import { serverLogger } from '../log/logger.js';
import { Connection } from './connection.js';
import { CallerLane } from './callers.js';
import {
  dispatchCall,
  dispatchRequest,
  type CallOptions,
  type CallOutcome,
  type DispatchContext,
  type DispatchTarget,
} from './dispatch.js';
import { Emitter } from './emitter.js';
import { watchHealth } from './health.js';
import { snapshotOf, type ServerSnapshot } from './snapshot.js';
import { Instances } from './instances.js';
import { CallSlots } from './slots.js';
import { raceTimeout } from '../core/timers.js';
import type { Timers } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import { withReply, type RequestOptions } from './feature-requests.js';
import type { CallerTokens } from '../core/caller-tokens.js';
import { Deadlines } from './deadlines.js';
import { asPrincipal, copyKey, LOGIN_KEY, loginsPerPrincipal } from './login-copies.js';
import type { CloseOptions, PoolEvents, PoolOptions } from './pool-types.js';

export type { CallOptions, CallOutcome } from './dispatch.js';
export type { ServerSnapshot } from './snapshot.js';
export type { RequestOptions } from './feature-requests.js';
export type { CloseOptions, PoolEvents, PoolOptions } from './pool-types.js';

interface Entry extends DispatchTarget {
  readonly connection: Connection;
  /** P10: the per-caller copies of a server with `instances: per_session`. */
  readonly instances?: Instances;
  /** P1: the first connection attempt, once started; `settled` once it ended either way. */
  first?: Promise<void>;
  settled?: boolean;
  /** O4: since when (wall clock) it is down, through its restarts; unset while it is up. */
  downSince?: number;
}

/** The downstream pool. Construct, `start()`, serve `callTool`s, `close()`. */
export class Pool {
  readonly #entries = new Map<string, Entry>();
  readonly #events: Emitter<PoolEvents>;
  readonly #context: DispatchContext;
  readonly #timers: Timers;
  readonly #callerTokens: CallerTokens | undefined;
  readonly #logger: Logger;
  #options!: PoolOptions;
  #closing = false;
  #closed: Promise<void> | undefined;

  constructor(options: PoolOptions) {
    this.#logger = options.logger;
    this.#timers = options.timers ?? systemTimers;
    this.#callerTokens = options.callerTokens;
    this.#events = new Emitter((error) => this.#logger.error({ err: error }, 'pool listener threw'));
    this.#context = {
      timers: this.#timers,
      deadlines: new Deadlines(this.#timers),
      maxInlineBytes: options.maxInlineBytes ?? 65536,
      closing: () => this.#closing,
    };
    this.#options = options;
    for (const server of options.servers) {
      if (!server.enabled) continue;
      if (this.#entries.has(server.name))
        throw new Error(`Expected unique server names, got "${server.name}" twice`);
      this.#entries.set(server.name, this.#entry(server));
    }
  }

  /** A new, unstarted connection to `server`. */
  #connect(server: ServerConfig, logger: Logger): Connection {
    const options = this.#options;
    const connection = new Connection({
      server,
      logger,
      transports: options.transports,
      timers: options.timers,
      random: options.random,
      backoff: options.backoff,
      clientInfo: options.clientInfo ?? { name: 'mcp-normalizer', version: '0.0.0' },
      ...(options.scrub !== undefined ? { scrub: options.scrub } : {}),
    });
    connection.events.on('log', (params) => this.#events.emit('log', server.name, params));
    watchHealth(connection, server, this.#timers);
    // L1: a first start is the start's own news (the banner sums it up); a restart is news.
    connection.events.on('stateChanged', (state) => {
      if (state === 'ready')
        logger[connection.restarts === 0 ? 'debug' : 'info'](
          { tools: connection.tools.length },
          'downstream ready',
        );
    });
    return connection;
  }

  #entry(server: ServerConfig): Entry {
    const logger = serverLogger(this.#options.logger, server.name);
    const connection = this.#connect(server, logger);
    // Events of a connection that was replaced (O3) are not the server's any more.
    const own = (): boolean => this.#entries.get(server.name)?.connection === connection;
    connection.events.on('stateChanged', (state) => {
      if (!own()) return;
      const entry = this.#entries.get(server.name) as Entry;
      if (state === 'ready') entry.downSince = undefined;
      else if (state === 'down') entry.downSince ??= Date.now();
      this.#events.emit('stateChanged', server.name, state);
    });
    connection.events.on('toolsChanged', () => {
      if (own()) this.#events.emit('toolsChanged', server.name);
    });
    connection.events.on('featuresChanged', (capability) => {
      if (own()) this.#events.emit('featuresChanged', server.name, capability);
    });
    connection.events.on('resourceUpdated', (uri) => {
      if (own()) this.#events.emit('resourceUpdated', server.name, uri);
    });
    return {
      server,
      connection,
      logger,
      slots: new CallSlots(server.concurrency),
      ...(server.isolateCallers ? { lane: new CallerLane() } : {}),
      // P10: per-session copies; D3: a server behind `auth: oauth` has a copy per principal,
      // each with that principal's own login (its key is `login:<subject>`).
      ...(server.instances.mode === 'shared' && !loginsPerPrincipal(server)
        ? {}
        : {
            instances: new Instances({
              server,
              logger,
              timers: this.#timers,
              connect: (child, key) =>
                this.#connect(
                  loginsPerPrincipal(server) ? asPrincipal(server, key, this.#callerTokens) : server,
                  child,
                ),
              ...(server.isolateCallers ? { lane: () => new CallerLane() } : {}),
            }),
          }),
    };
  }

  /**
   * O3 (reload): starts `server` (a new one, or a changed one replacing its old self, which
   * {@link remove} stopped first). Resolves once its first attempt ended, like {@link start}.
   */
  async add(server: ServerConfig): Promise<void> {
    if (!server.enabled || this.#closing) return;
    if (this.#entries.has(server.name)) throw new Error(`Server "${server.name}" is already running`);
    await this.#launch(server);
  }

  /**
   * O3 (reload): stops `name`: new calls fail with `downstream_unavailable` at once, calls in
   * flight and queued may finish for up to `graceMs`, then the client is closed and the server's
   * tools leave the catalog.
   */
  async remove(name: string, graceMs = 5000): Promise<void> {
    const entry = this.#entries.get(name);
    if (entry === undefined) return;
    await this.#drain(entry, graceMs);
    this.#forget(name);
  }

  /**
   * O3 (reload): a changed server: the old one drains and stops as in {@link remove}, and the
   * new one takes its place at once, so that the server is never missing (its calls meanwhile
   * fail with `downstream_unavailable`, never `unknown_tool`).
   */
  async replace(server: ServerConfig, graceMs = 5000): Promise<void> {
    const old = this.#entries.get(server.name);
    if (old !== undefined) await this.#drain(old, graceMs);
    if (!server.enabled || this.#closing) this.#forget(server.name);
    else await this.#launch(server);
  }

  /** Starts `server` under its name; resolves once its first attempt ended. */
  async #launch(server: ServerConfig): Promise<void> {
    const entry = this.#entry(server);
    this.#entries.set(server.name, entry);
    await this.#startOnce(entry);
    // A server whose first listing is empty (or that failed) changed nothing the events said.
    this.#events.emit('toolsChanged', server.name);
  }

  /** `name` is gone: its tools, prompts and resources leave the lists. */
  #forget(name: string): void {
    this.#entries.delete(name);
    this.#events.emit('toolsChanged', name);
    this.#events.emit('featuresChanged', name, 'prompts');
    this.#events.emit('featuresChanged', name, 'resources');
  }

  /** New calls fail at once; those in flight and queued get up to `graceMs`; then it closes. */
  async #drain(entry: Entry, graceMs: number): Promise<void> {
    entry.removing = true;
    await raceTimeout(Promise.all([entry.slots.onIdle(), entry.instances?.idle()]), graceMs, this.#timers);
    await Promise.all([entry.connection.close(), entry.instances?.close()]);
  }

  /** Subscribes to an event; returns the unsubscribe function. */
  on<K extends keyof PoolEvents>(event: K, listener: (...args: PoolEvents[K]) => void): () => void {
    return this.#events.on(event, listener);
  }

  /**
   * P1: connects every server in parallel. Resolves once each has become ready or failed its
   * first attempt (failed ones retry in the background; this never waits on a backoff). A
   * server not ready by then is reported, unless the pool closed meanwhile: a host that leaves
   * while one server is still starting ended every server, and none of them failed.
   */
  async start(): Promise<void> {
    await Promise.all([...this.#entries.values()].map((entry) => this.#startOnce(entry)));
    if (this.#closing) return;
    const down = this.snapshot().filter((s) => s.state !== 'ready');
    for (const s of down)
      // D2: a server waiting for a login is the user's next step, not a fault.
      if (s.loginRequired === true)
        this.#logger.info({ server: s.name, error: s.lastError }, 'downstream needs a login to start');
      else this.#logger.error({ server: s.name, error: s.lastError }, 'downstream failed to start');
  }

  /** The first attempt of `entry`, started once. */
  #startOnce(entry: Entry): Promise<void> {
    entry.first ??= entry.connection.start().finally(() => (entry.settled = true));
    return entry.first;
  }

  /** P1: the servers whose first connection attempt is under way. */
  starting(): string[] {
    return [...this.#entries.values()]
      .filter((entry) => entry.first !== undefined && entry.settled !== true && entry.removing !== true)
      .map((entry) => entry.server.name);
  }

  /**
   * Resolves once the first attempt of `name` ended (ready or failed); at once for a server that
   * is unknown or was never started.
   */
  firstAttempt(name: string): Promise<void> {
    return this.#entries.get(name)?.first ?? Promise.resolve();
  }

  /** Every enabled server in config order. */
  snapshot(): readonly ServerSnapshot[] {
    return [...this.#entries.values()].map(snapshotOf);
  }

  /** P10: the caller behind `instance` went away: its copies of per-session servers stop. */
  releaseCaller(instance: string): void {
    for (const entry of this.#entries.values()) entry.instances?.release(instance);
  }

  /**
   * D3: `principal` logged in to `server` (or out): its copy stops, and its next call starts one
   * with the login as stored now.
   */
  renewLogin(server: string, principal: string): void {
    this.#entries.get(server)?.instances?.release(`${LOGIN_KEY}${principal}`);
  }

  /**
   * Calls `tool` on `server`. Never rejects: every outcome is a Result (R3), or, for a call with
   * a caller, a 2026 server's input round to relay to it (Q3).
   */
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options?: CallOptions & { readonly caller?: undefined },
  ): Promise<Result>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions,
  ): Promise<CallOutcome>;
  callTool(
    server: string,
    tool: string,
    args: Record<string, unknown>,
    options: CallOptions = {},
  ): Promise<CallOutcome> {
    const entry = this.#entries.get(server);
    if (!entry) {
      return Promise.resolve(
        // The catalog only routes to enabled servers, so this is an inconsistency, not a bad name
        // from the agent: the server is unavailable, as the U5 calls below answer too.
        failure('downstream_unavailable', `No enabled server named "${server}"`, { meta: { server, tool } }),
      );
    }
    // P10: a caller's own copy; the shared one while the server is being removed (it answers).
    // D3: on a server behind `auth: oauth`, a caller with its own identity has its own login.
    const key = copyKey(entry.server, options);
    if (entry.instances !== undefined && key !== undefined && entry.removing !== true && !this.#closing) {
      return entry.instances.run(key, tool, (copy) => dispatchCall(this.#context, copy, tool, args, options));
    }
    return dispatchCall(this.#context, entry, tool, args, options);
  }

  /**
   * U5: `prompts/get` on `server`. Resolves with a Result whose value is the downstream's raw
   * result (check it before use); never rejects; a server that is down answers at once.
   */
  getPrompt(
    server: string,
    name: string,
    args: Record<string, string> | undefined,
    options: RequestOptions = {},
  ): Promise<Result> {
    const params = args === undefined ? { name } : { name, arguments: args };
    return this.#request(server, 'prompts/get', withReply(params, options.reply), name, options);
  }

  /** U5: `resources/read` of the downstream's own `uri` on `server`; as {@link getPrompt}. */
  readResource(server: string, uri: string, options: RequestOptions = {}): Promise<Result> {
    return this.#request(server, 'resources/read', withReply({ uri }, options.reply), uri, options);
  }

  /** Issue 47: an extension's request (`skills/list`, `skills/get`) on `server`; as {@link getPrompt}. */
  extensionRequest(
    server: string,
    method: string,
    params: Record<string, unknown>,
    options: RequestOptions = {},
  ): Promise<Result> {
    return this.#request(server, method, params, method, options);
  }

  /** Q5: `resources/subscribe` to the downstream's own `uri` on `server`; as {@link getPrompt}. */
  subscribe(server: string, uri: string, options: RequestOptions = {}): Promise<Result> {
    return this.#request(server, 'resources/subscribe', { uri }, uri, options);
  }

  /** Q5: `resources/unsubscribe`; as {@link subscribe}. */
  unsubscribe(server: string, uri: string, options: RequestOptions = {}): Promise<Result> {
    return this.#request(server, 'resources/unsubscribe', { uri }, uri, options);
  }

  /** U5: `completion/complete` on `server` with the downstream's own reference; as {@link getPrompt}. */
  complete(server: string, params: CompleteRequestParams, options: RequestOptions = {}): Promise<Result> {
    const ref = params.ref;
    const subject = ref.type === 'ref/prompt' ? ref.name : ref.uri;
    return this.#request(server, 'completion/complete', { ...params }, subject, options);
  }

  #request(
    server: string,
    method: string,
    params: Record<string, unknown>,
    subject: string,
    options: RequestOptions,
  ): Promise<Result> {
    const entry = this.#entries.get(server);
    if (!entry) {
      return Promise.resolve(
        failure('downstream_unavailable', `No enabled server named "${server}"`, {
          meta: { server, tool: subject },
        }),
      );
    }
    return dispatchRequest(this.#context, entry, method, params, subject, options.signal, options.caller);
  }

  /**
   * P5: stop taking calls (new ones fail with `downstream_unavailable`), let in-flight and queued
   * calls finish for up to `graceMs`, then close every client in parallel. Closing a stdio child
   * ends its stdin, then SIGTERM after 2 s, SIGKILL after 2 s more (SDK), each capped at 5 s, so
   * the whole shutdown is bounded by about `graceMs + 5 s` and leaves no child behind.
   */
  close(options: CloseOptions = {}): Promise<void> {
    this.#closed ??= this.#close(options.graceMs ?? 5000);
    return this.#closed;
  }

  /** P5, forced exit: SIGKILL every stdio child now, synchronously (see {@link Connection.killNow}). */
  killAll(): void {
    for (const entry of this.#entries.values()) {
      entry.connection.killNow();
      entry.instances?.killNow();
    }
  }

  async #close(graceMs: number): Promise<void> {
    this.#closing = true;
    const entries = [...this.#entries.values()];
    if (graceMs > 0) {
      const idle = entries.map((entry) => Promise.all([entry.slots.onIdle(), entry.instances?.idle()]));
      await raceTimeout(Promise.all(idle), graceMs, this.#timers);
    }
    // Calls still queued are not cleared (a cleared p-queue task never settles, R3): once their
    // connection is closed they run, see it, and answer `downstream_unavailable` at once.
    await Promise.all(entries.flatMap((entry) => [entry.connection.close(), entry.instances?.close()]));
  }
}
