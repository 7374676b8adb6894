/**
 * The composition root (CONTRACT P1, P5, T10, U1): config → pool → catalogs → upstream server →
 * stdio or HTTP hosting. The only module that knows every other layer; each part only knows the
 * narrow interface it is given here. It reads top to bottom, in the order the parts are used:
 * the list-change bus is created first, so that whatever publishes on it (the catalogs, the log
 * forwarding) gets it at construction; the extensions before the metrics that count their
 * methods. Four references point forward, in callbacks that run later: an approval of pins
 * rebuilds the catalogs (K4), a store reconnected is given this replica's logins again (issue
 * 55), the catalogs and the log forwarding count what they send in the metrics, and a completed
 * task's answer goes through the tool backend's outcome step (X5).
 */
import { CallerTokens } from '../core/caller-tokens.js';
import type { Era } from '../core/options.js';
import type { Logger } from 'pino';
import type { Tool } from '@modelcontextprotocol/server';
import type { Config } from '../config/types.js';
import type { Catalog } from '../core/catalog.js';
import type { FeatureIndex } from '../core/feature-index.js';
import { secretScrubber, type Scrubber } from '../core/secrets.js';
import { LOCAL_PRINCIPAL, type CallAccess } from '../core/policy.js';
import { Pool } from '../downstream/pool.js';
import type { PoolOptions, ServerSnapshot } from '../downstream/pool.js';
import { transportFactory, type EarlyChildren } from '../downstream/transport.js';
import type { HealthReport, HttpHandle } from '../upstream/http.js';
import { createInputRounds } from '../upstream/input-rounds.js';
import { createNotifier } from '../upstream/notifier.js';
import { createUpstreamServer, type ToolBackend, type UpstreamServer } from '../upstream/server.js';
import type { Result } from '../core/result.js';
import { createCatalogs } from './catalogs.js';
import { countByServer, fileStore, rateLimits, rememberedState } from './state/state.js';
import type { DefinitionChange } from '../core/pins.js';
import { createLogins } from './logins/logins.js';
import { createSkills, type SkillsBackend } from './ext/skills.js';
import { createTasks, type AnsweredTask } from './ext/tasks.js';
import { skillsExtension } from '../upstream/ext/skills.js';
import { tasksExtension } from '../upstream/ext/tasks.js';
import { createFeatures } from './features.js';
import { createHealth, type ServerHealth } from './health.js';
import { createMetrics } from './metrics.js';
import { createStatus, type Status, type StatusSources } from './status.js';
import type { CatalogMemory } from './state/memory.js';
import type { SharedStore } from './state/store.js';
import type { SkillEntry } from '../core/skills.js';
import { STATUS_LOGIN_PATH } from './logins/status-signin.js';
import { stopInOrder } from './shutdown.js';
import { applyServers, restartNeeded } from './reload.js';
import { serverHolder } from './servers.js';
import { createToolBackend } from './calls.js';
import { createSearches } from './searches.js';
import { callerViews, renderings } from './identity.js';
import { hosting, type Hosting } from './http-endpoint.js';
import type { StatusHandler } from './status-http.js';
import type { Views } from './views.js';
import { PACKAGE_NAME, packageVersion } from './version.js';

export type { ServerHealth } from './health.js';

/** Options of {@link createProxy}. */
export interface ProxyOptions {
  readonly logger: Logger;
  /**
   * The longest a call to a name no tool has yet waits for a server still in its first
   * connection attempt that could hold it (P1); lists never wait.
   * @default 10000
   */
  readonly startupWaitMs?: number;
  /** Passed to the pool; tests inject transports, timers and backoff here. */
  readonly pool?: Partial<Omit<PoolOptions, 'servers' | 'logger'>>;
  /** I6: the profile stdio serves (`serve --profile`). */
  readonly profile?: string;
  /** O4: the config's warnings, as `check` prints them, for the status page. */
  readonly problems?: readonly string[];
  /**
   * P1: when the gateway started (ms since the epoch); `list_wait_ms` counts from here.
   * @default the time of {@link Proxy.start}
   */
  readonly startedAt?: number;
  /** P1: the children `serve` spawned ahead (`head-start.ts`): the pool takes them over. */
  readonly headStart?: EarlyChildren;
}

/** A proxy built from one config (its endpoints: {@link Hosting}). */
export interface Proxy extends Hosting {
  readonly config: Config;
  readonly pool: Pool;
  /** Issue 47: the skills of the servers behind (`skills`, `check`). */
  readonly skills: SkillsBackend;
  readonly upstream: UpstreamServer;
  /** The current catalog (replaced on every rebuild). */
  catalog(): Catalog;
  /**
   * I3, I6: what the local user (`sub:local`, the CLI's caller) may see and call at `profile`
   * (`undefined`: the whole catalog); `undefined` when neither `access:` nor a profile narrows.
   */
  localView(profile?: string): CallAccess | undefined;
  /** I3, I6: the callers' views (app/views.ts): what a view sees, and `profile`'s own. */
  readonly views: Views;
  /** K3: the definitions that differ from their pins now (`check` shows them). */
  definitionChanges(): readonly DefinitionChange[];
  /**
   * T6, I6: the tools/list answer the one listing machine gives `view` (what {@link localView}
   * returns, or another); `undefined`: the whole catalog.
   */
  toolList(view?: CallAccess): Promise<readonly Tool[]>;
  /** U5: the current prompt and resource index (replaced on every rebuild). */
  features(): FeatureIndex;
  /** The pool's view of every enabled server. */
  snapshot(): readonly ServerSnapshot[];
  /** Per-server state and exposed-tool count (U4). */
  servers(): readonly ServerHealth[];
  /** The `/healthz` answer (U4): 200 while serving, 503 until started and once stopping. */
  health(): HealthReport;
  /** P1: connects every downstream in parallel; resolves once each is ready or failed once. */
  start(): Promise<void>;
  /** P5: stop taking calls, drain up to `graceMs`, close endpoints, close every downstream. */
  stop(options?: { graceMs?: number }): Promise<void>;
  /** P5, forced exit only: SIGKILL every downstream child process now. */
  killAll(): void;
  /**
   * O3: applies a new config's servers (reload.ts); the catalogs are rebuilt and list changes
   * announced. Resolves with the other settings that differ, which need a restart.
   */
  reload(next: Config, graceMs?: number): Promise<{ readonly restartNeeded: readonly string[] }>;
  /** O1: the Prometheus exposition (what `GET /metrics` answers). */
  metrics(): Promise<{ contentType: string; body: string }>;
}

/**
 * D8: each proxy's one holder of its callers' current tokens: the upstream side puts them in,
 * the copies of servers behind `auth: token_exchange` take them out.
 */
const callerTokens = new WeakMap<ProxyOptions, CallerTokens>();
function tokensOf(options: ProxyOptions): CallerTokens {
  let tokens = callerTokens.get(options);
  if (tokens === undefined) callerTokens.set(options, (tokens = new CallerTokens()));
  return tokens;
}

/** P1, P2: the pool of `config`'s servers (tests inject transports, timers and backoff). */
function createPool(config: Config, options: ProxyOptions, scrub: Scrubber | undefined): Pool {
  return new Pool({
    callerTokens: tokensOf(options),
    ...(scrub !== undefined ? { scrub } : {}),
    maxInlineBytes: config.output.maxInlineBytes,
    clientInfo: { name: PACKAGE_NAME, version: packageVersion() },
    ...(options.headStart !== undefined ? { transports: transportFactory(options.headStart) } : {}),
    ...options.pool,
    servers: config.servers,
    logger: options.logger,
  });
}

/** U1, R2, I6, Q3, L2: what the upstream server takes from the config and the options. */
function upstreamSettings(config: Config, options: ProxyOptions, scrub: Scrubber | undefined) {
  return {
    ...(options.profile !== undefined ? { profile: options.profile } : {}),
    callerTokens: tokensOf(options),
    ...renderings(config),
    serverInfo: { name: PACKAGE_NAME, version: packageVersion() },
    // Q3: the input rounds `config.input_required` asks for.
    rounds: createInputRounds({
      ...(config.inputRequired.stateKey !== undefined ? { key: config.inputRequired.stateKey } : {}),
      roundTimeoutMs: config.inputRequired.roundTimeoutMs,
      maxRounds: config.inputRequired.maxRounds,
      logger: options.logger,
    }),
    ...(scrub !== undefined ? { scrub } : {}),
  };
}

/**
 * O4: the status page's records (a ring and per-server windows) and its handler, made at its
 * first use (it reads the page's assets once).
 */
function statusOf(
  config: Config,
  pool: Pool,
  catalog: () => Catalog,
  memory: CatalogMemory,
  problems: StatusSources['problems'],
  scrub: Scrubber | undefined,
  skills: () => ReadonlyMap<string, readonly SkillEntry[]>,
  store: SharedStore | undefined,
): { readonly status: Status; readonly statusPage: () => Promise<StatusHandler> } {
  const status = createStatus({
    config,
    pool,
    catalog,
    clock: Date.now,
    version: packageVersion(),
    ...(problems !== undefined ? { problems } : {}),
    definitionChanges: () => memory.changes(),
    skills,
    ...(store !== undefined ? { store: () => ({ where: store.where, ...store.health() }) } : {}),
    ...(scrub !== undefined ? { scrub } : {}),
  });
  let handler: StatusHandler | undefined;
  const statusPage = async (): Promise<StatusHandler> => {
    const { createStatusHandler } = await import('./status-http.js');
    // O4: behind http.auth with an issuer, the page signs a person in in the browser.
    handler ??= createStatusHandler(
      status,
      config.http.auth?.issuer !== undefined ? STATUS_LOGIN_PATH : undefined,
    );
    return handler;
  };
  return { status, statusPage };
}

/** X5: a completed task's answer through `backend`'s outcome step, named as its call was. */
function answerTask(backend: Pick<ToolBackend, 'answer'>, result: Result, task: AnsweredTask): Result {
  return backend.answer?.(task.exposed ?? task.tool, result, undefined, task.owner || undefined) ?? result;
}

/**
 * P1, issue 48: starts `pool` once `first` settled: the logins the other replicas made, and the
 * pins (K4: a server's first listing is compared with theirs, never pinned afresh ahead of them).
 * `begun`: the pool's start was called (a list waits for it: before, no server is "starting").
 * `started`: its first round ended; `finally`, even if the start ever rejected (it is written
 * never to), or /healthz would say `starting` for ever. Nothing to wait for: it starts at once.
 */
function startPool(
  pool: Pool,
  first: readonly (Promise<unknown> | undefined)[],
  done: () => void,
): { readonly begun: Promise<void>; readonly started: Promise<void> } {
  const waits = first.filter((wait) => wait !== undefined).map((wait) => wait.catch(() => undefined));
  if (waits.length === 0) return { begun: Promise.resolve(), started: pool.start().finally(done) };
  let begin: () => void = () => undefined;
  const begun = new Promise<void>((resolve) => (begin = resolve));
  const started = Promise.all(waits)
    .then(() => {
      const round = pool.start();
      begin();
      return round;
    })
    .finally(() => {
      begin();
      done();
    });
  return { begun, started };
}

/**
 * Builds the proxy. Nothing starts until {@link Proxy.start}.
 * @example const proxy = createProxy(config, { logger }); void proxy.start(); await proxy.serveStdio();
 */
export function createProxy(config: Config, options: ProxyOptions): Proxy {
  const { logger } = options;
  const scrub = secretScrubber(config.secrets);
  // O3: a reload replaces them; every part reads the servers here.
  const servers = serverHolder(config.servers);
  const pool = createPool(config, options, scrub);
  /** What most parts are built from. */
  const base = { config, servers, pool, logger };
  let starting: ReturnType<typeof startPool> | undefined;
  let firstRoundDone = false;
  let stopping = false;
  const endpoints: { close(): Promise<void> }[] = [];
  /** U1: the HTTP endpoints listening (O1 counts their open sessions). */
  const https: HttpHandle[] = [];

  // E4: the one list-change bus, before anything that publishes on it.
  const notifier = createNotifier(logger);
  // K1–K4, issue 48: what is remembered of each server (an approval rebuilds the catalogs), and
  // the store the replicas share (given this replica's logins again when it reconnects).
  const { memory, store, ...remembered } = rememberedState(
    base,
    scrub,
    () => catalogs.rebuild(),
    () => void logins.share(servers.list()),
  );
  const catalogs = createCatalogs({
    ...base,
    memory,
    startupWaitMs: options.startupWaitMs ?? 10_000,
    listWaitMs: config.listWaitMs,
    ...(options.startedAt !== undefined ? { startedAt: options.startedAt } : {}),
    changes: {
      toolsChanged: () => (metrics.forwarded('list_changed'), notifier.toolsChanged()),
      promptsChanged: () => (metrics.forwarded('list_changed'), notifier.promptsChanged()),
      resourcesChanged: () => (metrics.forwarded('list_changed'), notifier.resourcesChanged()),
    },
  });
  // I3, I6: who may see and call what (`expose: read_only` reads the catalog now).
  const views = callerViews(
    config,
    (name) => catalogs.tools().get(name)?.definition.annotations?.readOnlyHint === true,
    logger,
  );
  const features = createFeatures({
    ...base,
    views,
    index: catalogs.features,
    settle: () => catalogs.settle(),
    settleLists: catalogs.settleLists,
    log: (params) => (metrics.forwarded('log'), notifier.log(params)),
  });
  // D3: callers' own logins to servers behind `auth: oauth`, once an HTTP endpoint gives them a
  // callback; with a store, shared by the replicas (issue 48).
  const logins = createLogins({
    logger,
    admins: config.http.auth?.admins ?? [],
    loggedIn: (server, principal) => pool.renewLogin(server, principal),
    ...(store !== undefined ? { store } : {}),
  });
  // Issue 47: the skills of the servers behind (SEP-2640).
  const skills = createSkills({ ...base, views, settleLists: () => catalogs.settleLists() });
  // X5: the tasks calls become, relayed for their callers (SEP-2663); a completed one's answer
  // goes through the tool backend's outcome step, as its call's would have.
  const limits = rateLimits(config, store);
  const tasks = createTasks({ ...base, ...limits, store, answered: (r, t) => answerTask(backend, r, t) });
  // Issue 57: the extensions relayed (upstream/ext/), one line each.
  const extensions = [skillsExtension(skills), tasksExtension(tasks)];
  const metrics = createMetrics({
    pool,
    catalogSize: () => catalogs.tools().tools.length,
    sessions: () => https.reduce((open, handle) => open + handle.sessionCount(), 0),
    definitionChanges: () => countByServer(memory.changes()),
    tasks: () => tasks.counts(),
    extensionMethods: () => extensions.flatMap((extension) => extension.methods),
  });
  // O4: the status page's records (a ring and per-server windows; nothing runs until a page asks).
  const { status, statusPage } = statusOf(
    config,
    pool,
    catalogs.tools,
    memory,
    options.problems,
    scrub,
    () => skills.recent(),
    store,
  );
  // S2: search_tools rankings in a worker thread, started at the first search.
  const searches = createSearches(logger);
  const backend = createToolBackend({
    ...base,
    searches,
    logins,
    views,
    catalog: catalogs.tools,
    settle: catalogs.settle,
    settleLists: catalogs.settleLists,
    settleServer: catalogs.settleServer,
    held: catalogs.held,
    tasks,
    ...limits,
    metrics,
    // O4: each call's row on the status page (its method uses no `this`).
    ...(config.statusPage ? { onCallEnded: status.callEnded } : {}),
  });
  const upstream = createUpstreamServer({
    backend,
    views,
    notifier,
    ...upstreamSettings(config, options, scrub),
    ...(config.output.files === 'resource' ? { files: fileStore(config, store, logger) } : {}),
    logger,
    features: features.backend,
    extensions,
    onForward: (kind) => metrics.forwarded(kind),
    listsComplete: () => pool.starting().length === 0,
  });
  const health = createHealth({
    pool,
    catalog: catalogs.tools,
    lifecycle: () => ({ started: starting !== undefined && firstRoundDone, stopping }),
    ...(store !== undefined ? { store: () => ({ where: store.where, ...store.health() }) } : {}),
    ...(scrub !== undefined ? { scrub } : {}),
  });
  const onRequest = (era: Era, method: string): void => metrics.request(era, method);

  return {
    config,
    pool,
    upstream,
    catalog: catalogs.tools,
    localView: (profile) => views.of(LOCAL_PRINCIPAL, profile),
    views,
    skills,
    definitionChanges: () => memory.changes(),
    toolList: async (view) => backend.listTools(view),
    features: catalogs.features,
    snapshot: () => pool.snapshot(),
    servers: health.servers,
    health: health.report,
    start() {
      const loaded = remembered.load();
      // Issue 48: what the others made, read first: the logins, and (K4) the pins when there is a store.
      starting ??= startPool(pool, [logins.share(servers.list()), store && loaded], () => {
        firstRoundDone = true;
        if (!stopping) catalogs.rebuild();
        metrics.startOver();
      });
      // P1: a list waits for the pool to have begun, then for the servers starting.
      catalogs.begin(starting.begun.then(() => loaded));
      return starting.started;
    },
    async stop({ graceMs = 5000 } = {}) {
      stopping = true;
      await stopInOrder({ catalogs, upstream, endpoints, searches, pool, logger }, graceMs);
      await remembered.close();
    },
    async reload(next, graceMs = 5000) {
      // As at the start: what the store holds of the servers is read before they list (K4).
      await Promise.all([logins.share(next.servers), remembered.load(next.servers)]);
      await applyServers(pool, servers, next, graceMs, logger);
      catalogs.rebuild();
      return { restartNeeded: restartNeeded(config, next) };
    },
    metrics: () => metrics.scrape(),
    ...hosting(
      { ...base, upstream, views, backend, logins, onRequest, health, metrics, statusPage },
      endpoints,
      https,
    ),
    killAll() {
      pool.killAll();
    },
  };
}
