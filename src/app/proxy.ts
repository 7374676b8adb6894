/**
 * The composition root (CONTRACT P1, P5, T10, U1): config → pool → catalog → upstream server →
 * stdio or HTTP hosting. The only module that knows every other layer; each of them only knows
 * the narrow interface it is given here.
 *
 * The catalog is rebuilt from the pool's snapshots (config order) whenever a server's tools
 * change, coalesced per event-loop turn (a downstream may announce a burst of changes), and the
 * upstream clients are told only when the exposed list really differs (T10).
 */
import type { Logger } from 'pino';
import type { Config, ServerConfig } from '../config/types.js';
import { scrubDeep, secretScrubber } from '../core/secrets.js';
import { buildCatalog, diffCatalogs } from '../core/catalog.js';
import type { Catalog, CatalogProblem, CatalogServerInput } from '../core/catalog.js';
import type { SchemaDialect } from '../core/schema-compiler.js';
import { Pool } from '../downstream/pool.js';
import type { PoolOptions, ServerSnapshot } from '../downstream/pool.js';
import { ENVELOPE_OUTPUT_SCHEMAS, typedEnvelopeSchema } from '../upstream/envelope-schema.js';
import type { HealthReport, HttpHandle, HttpOptions } from '../upstream/http.js';
import { createInputRounds } from '../upstream/input-rounds.js';
import { createMetrics } from './metrics.js';
import type { ServerSource } from './servers.js';
import { createFileStore } from '../upstream/file-store.js';
import { createUpstreamServer } from '../upstream/server.js';
import type { UpstreamServer } from '../upstream/server.js';
import { serveStdio } from '../upstream/stdio.js';
import type { StdioHandle, StdioOptions } from '../upstream/stdio.js';
import { createFeatures } from './features.js';
import type { Features } from './features.js';
import { createToolBackend } from './tools.js';
import { PACKAGE_NAME, packageVersion } from './version.js';

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  readonly logger: Logger;
  /**
   * How long a tools/list that arrives during start waits for the first connection round before
   * answering with what is there (later changes follow as list_changed, T10).
   * @default 10000
   */
  readonly startupWaitMs?: number;
  /** Passed to the pool; tests inject transports, timers and backoff here. */
  readonly pool?: Partial<Omit<PoolOptions, 'servers' | 'logger'>>;
}

/** One server as `/healthz` and `check` report it. */
export interface ServerHealth {
  readonly name: string;
  readonly state: string;
  /** Tools of this server exposed upstream right now. */
  readonly tools: number;
  /** E5: `legacy` or `modern`, once a connection was made. */
  readonly era?: string;
  /** E5: the protocol revision negotiated, e.g. `2026-07-28` or `2025-06-18`. */
  readonly protocol_version?: string;
  /** P2: calls running on the server now, and waiting for a slot. */
  readonly in_flight: number;
  readonly queued: number;
  readonly error?: string;
}

/** A proxy built from one config. */
export interface Proxy {
  readonly config: Config;
  readonly pool: Pool;
  readonly upstream: UpstreamServer;
  /** The current catalog (replaced on every rebuild). */
  catalog(): Catalog;
  /** U5: the current prompt and resource index (replaced on every rebuild). */
  features(): ReturnType<Features['index']>;
  /** The pool's view of every enabled server. */
  snapshot(): readonly ServerSnapshot[];
  /** Per-server state and exposed-tool count (U4). */
  servers(): readonly ServerHealth[];
  /** The `/healthz` answer (U4): 200 while serving, 503 once stopping. */
  health(): HealthReport;
  /** P1: connects every downstream in parallel; resolves once each is ready or failed once. */
  start(): Promise<void>;
  /** U1: serves over stdio. */
  serveStdio(options?: StdioOptions): Promise<StdioHandle>;
  /** U1: serves Streamable HTTP; `http` config unless overridden. */
  listenHttp(overrides?: Partial<Omit<HttpOptions, 'health'>>): Promise<HttpHandle>;
  /** P5: stop taking calls, drain up to `graceMs`, close endpoints, close every downstream. */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** P5, forced exit only: SIGKILL every downstream child process now. */
  killAll(): void;
  /**
   * O3: applies a new config's servers: removed and changed servers stop after their in-flight
   * calls (up to `graceMs`), added and changed ones start, unchanged ones are not touched; the
   * catalog is rebuilt and list changes announced. Settings other than `servers` are not applied
   * live: resolves with the keys that differ, which need a restart.
   */
  reload(next: Config, graceMs?: number): Promise<{ readonly restartNeeded: readonly string[] }>;
  /** O1: the Prometheus exposition (what `GET /metrics` answers). */
  metrics(): Promise<{ contentType: string; body: string }>;
  /** O1: `GET /metrics` alone on 127.0.0.1:`port` (for `serve` over stdio, `--metrics-port`). */
  listenMetrics(port: number): Promise<{ url: string; close(): Promise<void> }>;
}

/**
 * Builds the proxy. Nothing starts until {@link Proxy.start}.
 * @example const proxy = createProxy(config, { logger }); void proxy.start(); await proxy.serveStdio();
 */
export function createProxy(config: Config, options: ProxyOptions): Proxy {
  const { logger } = options;
  const scrub = secretScrubber(config.secrets);
  const startupWaitMs = options.startupWaitMs ?? 10_000;
  // O3: replaced by a reload; everything that reads a server's settings reads them here.
  let serverConfigs = new Map<string, ServerConfig>(config.servers.map((server) => [server.name, server]));
  let serverArray: readonly ServerConfig[] = config.servers;
  const serverList = (): readonly ServerConfig[] => serverArray;
  const configured: ServerSource = { list: serverList, get: (name) => serverConfigs.get(name) };
  const pool = new Pool({
    ...(scrub !== undefined ? { scrub } : {}),
    maxInlineBytes: config.output.maxInlineBytes,
    clientInfo: { name: PACKAGE_NAME, version: packageVersion() },
    ...options.pool,
    servers: config.servers,
    logger,
  });
  const catalogOptions = {
    ...(config.prefix !== undefined ? { globalPrefix: config.prefix } : {}),
    separator: config.separator,
    nameMaxLength: config.nameMaxLength,
    explicitDestructive: config.explicitDestructive,
    strictArguments: config.strictArguments,
    describeArguments: config.output.describeArguments,
    // T6: the envelope schema only when asked for (it was 69% of each tool's bytes, and hosts
    // compile a validator per advertised schema).
    ...(config.output.advertiseSchema
      ? {
          outputSchema: ENVELOPE_OUTPUT_SCHEMAS[config.output.format] as Record<string, unknown>,
          typedOutputSchema: (toolSchema: Record<string, unknown>) =>
            typedEnvelopeSchema(config.output.format, toolSchema),
        }
      : {}),
  };
  let current = buildCatalog([], catalogOptions);
  let started: Promise<void> | undefined;
  let firstRoundDone = false;
  let rebuildScheduled = false;
  let stopping = false;
  const endpoints: { close(): Promise<void> }[] = [];

  function catalogInputs(): CatalogServerInput[] {
    // Config order (E2), whatever order a reload started the servers in.
    const snapshots = new Map(pool.snapshot().map((snapshot) => [snapshot.name, snapshot]));
    return serverList().flatMap((server) => {
      const snapshot = snapshots.get(server.name);
      if (snapshot === undefined) return [];
      return [
        {
          server: server.name,
          prefix: server.prefix,
          expose: server.expose,
          tools: snapshot.tools,
          include: server.tools.include,
          exclude: server.tools.exclude,
          rename: server.tools.rename,
          overrides: server.tools.overrides,
          stripPrefix: server.tools.stripPrefix,
        },
      ];
    });
  }

  function rebuild(): void {
    const next = buildCatalog(catalogInputs(), { ...catalogOptions, previous: current });
    const diff = diffCatalogs(current, next);
    logNewProblems(current.problems, next.problems);
    current = next;
    if (diff.added.length + diff.removed.length + diff.changed.length === 0) return;
    logger.info({ ...diff, tools: next.tools.length }, 'tool catalog changed');
    upstream.notifyToolsChanged(); // T10
  }

  function logNewProblems(before: readonly CatalogProblem[], after: readonly CatalogProblem[]): void {
    const seen = new Set(before.map((problem) => problem.message));
    for (const problem of after) {
      if (seen.has(problem.message)) continue;
      // T4: a collision is an error in the log; `check` exits non-zero on it.
      if (problem.severity === 'error')
        logger.error({ server: problem.server, tool: problem.tool }, problem.message);
      else logger.warn({ server: problem.server, tool: problem.tool }, problem.message);
    }
  }

  function scheduleRebuild(): void {
    // During the first connection round every read waits for it, and start() rebuilds once when
    // it is over: rebuilding per server that became ready meanwhile (20 times for 20 servers,
    // each over every tool) only delayed the first complete list (docs/performance.md).
    if (rebuildScheduled || stopping || inFirstRound()) return;
    rebuildScheduled = true;
    setImmediate(() => {
      rebuildScheduled = false;
      if (!stopping) rebuild();
    });
  }

  pool.on('toolsChanged', scheduleRebuild);

  /**
   * T12's first schema check compiles Ajv's meta-schemas (~100 ms for 2020-12, ~25 ms for
   * draft-07 here): do it while the downstreams spawn, one dialect per turn of the event loop,
   * instead of on the path to the first tools/list (docs/performance.md, cold start).
   */
  function warmSchemaCompiler(): void {
    const dialects: SchemaDialect[] = ['2020-12', 'draft-07'];
    const next = (): void => {
      const dialect = dialects.shift();
      if (dialect === undefined || stopping) return;
      current.compiler.warm(dialect);
      setImmediate(next);
    };
    setImmediate(next);
  }

  /** True between start() and the end of the first connection round. */
  function inFirstRound(): boolean {
    return started !== undefined && !firstRoundDone;
  }

  /** Runs `read` now, or once the first connection round is done (bounded by startupWaitMs). */
  function afterStart<T>(read: () => T): T | Promise<T> {
    if (!inFirstRound() || started === undefined) return read();
    return waitAtMost(started, startupWaitMs).then(read);
  }

  // U5: prompts, resources and templates, rebuilt on their own events like the catalog (T10).
  const features = createFeatures({
    config,
    servers: configured,
    pool,
    logger,
    afterStart,
    notify: () => ({
      prompts: () => upstream.notifyPromptsChanged(),
      resources: () => upstream.notifyResourcesChanged(),
      log: (params) => upstream.sendLog(params),
    }),
  });
  let featuresScheduled = false;
  pool.on('featuresChanged', () => {
    if (featuresScheduled || stopping || inFirstRound()) return;
    featuresScheduled = true;
    setImmediate(() => {
      featuresScheduled = false;
      if (!stopping) features.rebuild();
    });
  });

  // O1: Prometheus metrics, read from the pool and the catalog when scraped.
  let sessions: () => number = () => 0;
  const metrics = createMetrics({
    pool,
    catalogSize: () => current.tools.length,
    sessions: () => sessions(),
  });
  const backend = createToolBackend({
    config,
    servers: configured,
    pool,
    logger,
    catalog: () => current,
    afterStart,
    metrics,
  });

  const upstream = createUpstreamServer({
    backend,
    output: { format: config.output.format, media: config.output.media, text: config.output.text },
    ...(config.output.files === 'resource' ? { files: createFileStore(config.output.fileStore) } : {}),
    logger,
    features: features.backend,
    serverInfo: { name: PACKAGE_NAME, version: packageVersion() },
    onRequest: (era, method) => metrics.request(era, method),
    onForward: (kind) => metrics.forwarded(kind),
    rounds: createInputRounds({
      ...(config.inputRequired.stateKey !== undefined ? { key: config.inputRequired.stateKey } : {}),
      roundTimeoutMs: config.inputRequired.roundTimeoutMs,
      maxRounds: config.inputRequired.maxRounds,
      logger,
    }),
    ...(scrub !== undefined ? { scrub } : {}),
  });

  function servers(): readonly ServerHealth[] {
    const exposed = new Map<string, number>();
    for (const tool of current.tools) exposed.set(tool.server, (exposed.get(tool.server) ?? 0) + 1);
    return pool.snapshot().map((snapshot) => ({
      name: snapshot.name,
      state: snapshot.state,
      tools: exposed.get(snapshot.name) ?? 0,
      ...(snapshot.era !== undefined ? { era: snapshot.era } : {}),
      ...(snapshot.protocolVersion !== undefined ? { protocol_version: snapshot.protocolVersion } : {}),
      in_flight: snapshot.inFlight,
      queued: snapshot.queued,
      ...(snapshot.state !== 'ready' && snapshot.lastError !== undefined
        ? { error: snapshot.lastError }
        : {}),
    }));
  }

  /**
   * Readiness (`/healthz`): 503 `starting` until the first connection round is over (a replica
   * that would answer a partial tools/list gets no traffic yet), 503 `stopping` once stopping,
   * else 200, even degraded: the proxy answers every call (a down server's calls fail fast with
   * downstream_unavailable); per-server state is in the body.
   */
  function health(): HealthReport {
    const list = servers();
    const starting = started === undefined || !firstRoundDone;
    const status = stopping
      ? 'stopping'
      : starting
        ? 'starting'
        : list.every((server) => server.state === 'ready')
          ? 'ok'
          : 'degraded';
    const body = { status, servers: list };
    // L2: a server's last error can echo an interpolated secret.
    return {
      status: stopping || starting ? 503 : 200,
      body: scrub === undefined ? body : scrubDeep(body, scrub),
    };
  }

  return {
    config,
    pool,
    upstream,
    catalog: () => current,
    features: () => features.index(),
    snapshot: () => pool.snapshot(),
    servers,
    health,
    start() {
      if (started === undefined) warmSchemaCompiler();
      // `finally`: even if the pool's start ever rejected (it is written never to), the first
      // round must end, or every later tools/list_changed would be ignored (scheduleRebuild).
      started ??= pool.start().finally(() => {
        firstRoundDone = true;
        if (stopping) return;
        rebuild();
        features.rebuild();
      });
      return started;
    },
    async serveStdio(stdioOptions) {
      const handle = await serveStdio(upstream, stdioOptions ?? {}, logger);
      endpoints.push(handle);
      return handle;
    },
    async listenHttp(overrides = {}) {
      // Loaded on demand: stdio serving never pays for the HTTP stack's import (cold start).
      const { listenHttp } = await import('../upstream/http.js');
      const handle = await listenHttp(
        upstream,
        {
          host: config.http.host,
          port: config.http.port,
          allowedHosts: config.http.allowedHosts,
          sessionIdleMs: config.http.sessionIdleMs,
          maxSessions: config.http.maxSessions,
          legacy: config.http.legacy,
          ...(config.http.replicaId !== undefined ? { replicaId: config.http.replicaId } : {}),
          ...(config.http.token !== undefined ? { token: config.http.token } : {}),
          metrics: () => metrics.scrape(),
          onSessions: (count) => (sessions = count),
          ...overrides,
          health,
        },
        logger,
      );
      endpoints.push(handle);
      return handle;
    },
    async stop(stopOptions = {}) {
      const graceMs = stopOptions.graceMs ?? 5000;
      const began = Date.now();
      stopping = true;
      upstream.stopAccepting();
      const drained = await upstream.drain(graceMs);
      if (!drained)
        logger.warn({ inFlight: upstream.inFlight(), graceMs }, 'calls still running after the grace period');
      await Promise.allSettled(endpoints.map((endpoint) => endpoint.close()));
      await upstream.close();
      await pool.close({ graceMs: Math.max(0, graceMs - (Date.now() - began)) });
    },
    async reload(next, graceMs = 5000) {
      const same = (a: ServerConfig, b: ServerConfig): boolean => {
        const { source: _a, ...left } = a;
        const { source: _b, ...right } = b;
        return JSON.stringify(left) === JSON.stringify(right);
      };
      const before = serverConfigs;
      const after = new Map(next.servers.map((server) => [server.name, server]));
      const removed = [...before.values()].filter((old) => !after.has(old.name));
      const changed = next.servers.filter((now) => {
        const old = before.get(now.name);
        return old !== undefined && !same(old, now);
      });
      const added = next.servers.filter((now) => !before.has(now.name));
      serverConfigs = after;
      serverArray = next.servers;
      logger.info(
        {
          removing: removed.map((s) => s.name),
          changing: changed.map((s) => s.name),
          adding: added.map((s) => s.name),
        },
        'config reloaded',
      );
      await Promise.all([
        ...removed.map((server) => pool.remove(server.name, graceMs)),
        ...changed.map((server) => pool.replace(server, graceMs)),
        ...added.map((server) => pool.add(server)),
      ]);
      rebuild();
      features.rebuild();
      const { servers: _old, secrets: _s1, ...globalsBefore } = config;
      const { servers: _new, secrets: _s2, ...globalsAfter } = next;
      const restartNeeded = Object.keys({ ...globalsBefore, ...globalsAfter }).filter(
        (key) =>
          JSON.stringify((globalsBefore as Record<string, unknown>)[key]) !==
          JSON.stringify((globalsAfter as Record<string, unknown>)[key]),
      );
      return { restartNeeded };
    },
    metrics: () => metrics.scrape(),
    async listenMetrics(port) {
      const { listenMetrics } = await import('./metrics-endpoint.js');
      const handle = await listenMetrics(port, () => metrics.scrape());
      endpoints.push(handle);
      return handle;
    },
    killAll() {
      pool.killAll();
    },
  };
}

/** Resolves when `promise` settles or after `ms`, whichever comes first; never rejects. */
function waitAtMost(promise: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  return Promise.race([
    promise.then(
      () => undefined,
      () => undefined,
    ),
    new Promise<void>((resolve) => {
      timer = setTimeout(resolve, ms);
      timer.unref();
    }),
  ]).finally(() => clearTimeout(timer));
}
