/**
 * Prometheus metrics (O1, docs/operations.md) with prom-client, on a registry of our own (never
 * the global one, so two proxies in one process, as in tests, keep theirs apart). Label values
 * are bounded: server keys and tool names come from the config and the catalog, outcomes from the
 * closed R3 list, eras and methods from the protocol; no argument, id or URI is ever a label.
 *
 * Counters are counted where things happen (a call's outcome in app/tools.ts, an upstream
 * request, a forwarded notification), off the answer's path (see `Pending`); gauges are read from
 * the pool when scraped.
 *
 * prom-client is loaded only once something can scrape ({@link Metrics.served}: `serve --http`,
 * `--metrics-port`): then {@link SETTLE_MS} after the start is over ({@link Metrics.startOver}: the
 * pool's first connection round), at the first scrape, or {@link LOAD_AFTER_MS} after the endpoint
 * opened, whichever comes first (P1: its ~60 ms of loading, a synchronous CommonJS graph, stay
 * out of the host's first exchanges, while the servers still load on the same cores and 60 ms of
 * CPU stretch to ~250 ms). A stdio gateway with no metrics endpoint loads it only at an in-process
 * scrape or once {@link MAX_WAITING} counts wait (issue 57: it loaded a second after the start,
 * inside a stdio host's first few thousand calls, ~20 µs a call of the first 3,000). Counts made
 * meanwhile wait in `Pending`, so none is lost. The process metrics (`process_*`, `nodejs_*`)
 * start from that moment.
 */
import type { Era } from '../core/options.js';
import type { Counter, Histogram, Registry } from 'prom-client';
import type { Result } from '../core/result.js';
import type { Pool, ServerSnapshot } from '../downstream/pool.js';

/** When prom-client is loaded at the latest, after an endpoint opened (a server still starting). */
const LOAD_AFTER_MS = 10_000;
/**
 * How long after the start is over prom-client is loaded: past the hosts' lists that the last
 * servers' tools bring, and past the end of a one-shot command (`tools`, `call`), which needs none.
 */
const SETTLE_MS = 1000;
/** How long counts wait before they are recorded into prom-client (see `Pending`). */
const FLUSH_AFTER_MS = 100;
/** Counts that may wait; past this many, they are recorded after the current I/O. */
const MAX_WAITING = 10_000;

/** Buckets of the call-duration histogram (seconds): 5 ms to 2 min. */
const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The notifications the gateway forwards upstream, by kind. */
export type ForwardedKind = 'progress' | 'log' | 'list_changed';

/** What the rest of the proxy records; the scrape reads the rest from the pool. */
export interface Metrics {
  /** One tools/call answered (or refused before any downstream), with its Result. */
  callEnded(server: string | undefined, tool: string | undefined, result: Result): void;
  /** One upstream request, by era and MCP method (from the protocol's closed list). */
  request(era: Era, method: string): void;
  /** One notification sent upstream. */
  forwarded(kind: ForwardedKind): void;
  /** The Prometheus text exposition (for `GET /metrics`). */
  scrape(): Promise<{ contentType: string; body: string }>;
  /** P1: the start is over (every server ready or failed once): prom-client loads soon after, if {@link served}. */
  startOver(): void;
  /** An endpoint that scrapes is open (HTTP, `--metrics-port`): prom-client is to be loaded. */
  served(): void;
}

/** What the scrape reads at scrape time. */
export interface MetricsSources {
  readonly pool: Pool;
  /** Exposed tools right now. */
  catalogSize(): number;
  /** Open 2025 HTTP sessions right now (0 when not serving HTTP). */
  sessions(): number;
  /** K3: the definitions that differ from their pins now, by server. @default none */
  definitionChanges?(): ReadonlyMap<string, number>;
  /** X5: the tasks the gateway relays now, by server. @default none */
  tasks?(): ReadonlyMap<string, number>;
  /** Issue 57: the extensions' methods (upstream/ext/), counted by name too. @default none */
  extensionMethods?(): Iterable<string>;
}

/**
 * Methods counted by name, with the extensions' own; anything else is counted as `other`
 * (bounded label values).
 */
const METHODS: readonly string[] = Object.freeze([
  'initialize',
  'ping',
  'server/discover',
  'subscriptions/listen',
  'logging/setLevel',
  'tools/list',
  'tools/call',
  'prompts/list',
  'prompts/get',
  'resources/list',
  'resources/templates/list',
  'resources/read',
  'resources/subscribe',
  'resources/unsubscribe',
  'completion/complete',
]);

/**
 * Builds the metrics of one proxy.
 * @example const metrics = createMetrics({ pool, catalogSize: () => current.tools.length, sessions: () => 0 });
 */
export function createMetrics(sources: MetricsSources): Metrics {
  let loading: Promise<Sink> | undefined;
  let methods: ReadonlySet<string> | undefined;
  const pending = new Pending(() => void load());
  let later: ReturnType<typeof setTimeout> | undefined;
  let served = false;
  let over = false;
  const load = (): Promise<Sink> => {
    clearTimeout(later);
    return (loading ??= import('prom-client').then((prom) => {
      const sink = createSink(prom, sources);
      pending.sink = sink;
      pending.flush();
      return sink;
    }));
  };

  return {
    callEnded(server = '', tool = '', result) {
      const outcome = result.success ? 'ok' : result.errorType;
      pending.count('calls', `${server}\0${tool}\0${outcome}`, () => ({ server, tool, outcome }));
      const elapsedMs = result.meta.elapsedMs;
      if (elapsedMs !== undefined) {
        pending.observe(`${server}\0${outcome}`, () => ({ server, outcome }), elapsedMs / 1000);
      }
    },
    request(era, method) {
      // The extensions are built after the metrics: their methods are read at the first request.
      methods ??= new Set([...METHODS, ...(sources.extensionMethods?.() ?? [])]);
      const known = methods.has(method) ? method : 'other';
      pending.count('requests', `${era}\0${known}`, () => ({ era, method: known }));
    },
    forwarded(kind) {
      pending.count('forwarded', kind, () => ({ kind }));
    },
    async scrape() {
      const { registry } = await load();
      pending.flush();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
    startOver() {
      over = true;
      if (loading !== undefined || !served) return;
      clearTimeout(later);
      later = setTimeout(() => void load(), SETTLE_MS).unref();
    },
    served() {
      if (served || loading !== undefined) return;
      served = true;
      later = setTimeout(() => void load(), over ? SETTLE_MS : LOAD_AFTER_MS).unref();
    },
  };
}

/** The prom-client side: the registry and the metrics counts are recorded into. */
interface Sink {
  readonly registry: Registry;
  readonly counters: Readonly<Record<CounterName, Counter<string>>>;
  readonly duration: Histogram<string>;
}

/** The counters `Pending` sums into. */
type CounterName = 'calls' | 'requests' | 'forwarded';

/** Builds every metric on a registry of its own; the gauges read `sources` at scrape time. */
function createSink(prom: typeof import('prom-client'), sources: MetricsSources): Sink {
  const { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } = prom;
  const registry = new Registry();
  collectDefaultMetrics({ register: registry });
  const calls = new Counter({
    name: 'mcp_normalizer_tool_calls_total',
    help: 'tools/call answers by server, downstream tool and outcome (ok, or the R3 error type).',
    labelNames: ['server', 'tool', 'outcome'] as const,
    registers: [registry],
  });
  const duration = new Histogram({
    name: 'mcp_normalizer_tool_call_duration_seconds',
    help: 'Time from a tools/call arriving to its answer, queue wait included, by server and outcome.',
    labelNames: ['server', 'outcome'] as const,
    buckets: DURATION_BUCKETS,
    registers: [registry],
  });
  const requests = new Counter({
    name: 'mcp_normalizer_upstream_requests_total',
    help: 'Requests from upstream clients by protocol era and MCP method.',
    labelNames: ['era', 'method'] as const,
    registers: [registry],
  });
  const forwarded = new Counter({
    name: 'mcp_normalizer_notifications_forwarded_total',
    help: 'Notifications sent to upstream clients, by kind.',
    labelNames: ['kind'] as const,
    registers: [registry],
  });
  const counted = new Map<string, number>();
  new Counter({
    name: 'mcp_normalizer_downstream_restarts_total',
    help: 'Restart attempts of each downstream server.',
    labelNames: ['server'] as const,
    registers: [registry],
    collect() {
      // The pool counts restarts; the counter follows it by the difference at each scrape.
      for (const server of sources.pool.snapshot()) {
        const seen = counted.get(server.name) ?? 0;
        this.inc({ server: server.name }, server.restarts - seen);
        counted.set(server.name, server.restarts);
      }
    },
  });
  /** A gauge per server, read from the pool's snapshot at scrape time. */
  const perServer = (name: string, help: string, read: (server: ServerSnapshot) => number): void => {
    new Gauge({
      name,
      help,
      labelNames: ['server'] as const,
      registers: [registry],
      collect() {
        this.reset();
        for (const server of sources.pool.snapshot()) this.set({ server: server.name }, read(server));
      },
    });
  };
  perServer('mcp_normalizer_downstream_up', '1 while a downstream server is ready, else 0.', (server) =>
    server.state === 'ready' ? 1 : 0,
  );
  perServer(
    'mcp_normalizer_calls_in_flight',
    'Calls running on each downstream server now (P2).',
    (server) => server.inFlight,
  );
  perServer(
    'mcp_normalizer_calls_queued',
    'Calls waiting for a slot on each downstream server now (P2).',
    (server) => server.queued,
  );
  perServer(
    'mcp_normalizer_downstream_instances',
    'Running copies of each downstream server: the shared one while ready, plus the per-caller copies of a server with instances: per_session (P10).',
    (server) => (server.state === 'ready' ? 1 : 0) + (server.instances ?? 0),
  );
  new Gauge({
    name: 'mcp_normalizer_catalog_tools',
    help: 'Tools exposed upstream now.',
    registers: [registry],
    collect() {
      this.set(sources.catalogSize());
    },
  });
  new Gauge({
    name: 'mcp_normalizer_definition_changes',
    help: 'Tool and prompt definitions that differ from their pins now (K3), by server.',
    labelNames: ['server'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [server, count] of sources.definitionChanges?.() ?? []) this.set({ server }, count);
    },
  });
  new Gauge({
    name: 'mcp_normalizer_tasks',
    help: 'Tasks the gateway relays now (X5: created for a 2026 host, not yet past their ttlMs), by server.',
    labelNames: ['server'],
    registers: [registry],
    collect() {
      this.reset();
      for (const [server, count] of sources.tasks?.() ?? []) this.set({ server }, count);
    },
  });
  new Gauge({
    name: 'mcp_normalizer_upstream_sessions',
    help: 'Open 2025-era HTTP sessions now.',
    registers: [registry],
    collect() {
      this.set(sources.sessions());
    },
  });

  return { registry, counters: { calls, requests, forwarded }, duration };
}

type Labels = Record<string, string>;

/**
 * O1's counts on their way into prom-client. prom-client hashes the labels of every update
 * (~8 µs a call, with its caches cold after the wait for a downstream). Done inside a call's
 * answer, that was latency; done right after the answer was written, it still slowed the
 * host's next request (measured in docs/performance-log.md). So counts are summed here per label
 * set (a string key and an increment) and recorded together {@link FLUSH_AFTER_MS} later, after
 * the current I/O once {@link MAX_WAITING} wait, and before every scrape: a reader never misses
 * a count. Before prom-client is loaded they wait for its load, which records them.
 */
class Pending {
  /** Where counts go; until prom-client is loaded they wait here ({@link Pending.flush} asks for it). */
  sink: Sink | undefined;
  readonly #load: () => void;
  readonly #counts = new Map<CounterName, Map<string, { labels: Labels; by: number }>>();
  readonly #observations = new Map<'duration', Map<string, { labels: Labels; values: number[] }>>();
  #waiting = 0;
  #timer: ReturnType<typeof setTimeout> | undefined;
  #soon: ReturnType<typeof setImmediate> | undefined;

  /** `load`: asks for prom-client (its loading ends with a flush). */
  constructor(load: () => void) {
    this.#load = load;
  }

  /** One more for `counter`'s label set `key`; `labels` builds that set the first time. */
  count(counter: CounterName, key: string, labels: () => Labels): void {
    const entry = entryOf(this.#counts, counter, key, () => ({ labels: labels(), by: 0 }));
    entry.by += 1;
    this.#added();
  }

  /** One call duration for the label set `key`. */
  observe(key: string, labels: () => Labels, value: number): void {
    entryOf(this.#observations, 'duration', key, () => ({ labels: labels(), values: [] })).values.push(value);
    this.#added();
  }

  /**
   * Records everything waiting into prom-client now; until it is loaded, asks for it (a scrape,
   * or {@link MAX_WAITING} counts waiting).
   */
  flush(): void {
    if (this.#timer !== undefined) clearTimeout(this.#timer);
    if (this.#soon !== undefined) clearImmediate(this.#soon);
    this.#timer = this.#soon = undefined;
    const sink = this.sink;
    if (sink === undefined) {
      this.#load();
      return;
    }
    this.#waiting = 0;
    for (const [counter, entries] of this.#counts) {
      for (const { labels, by } of entries.values()) sink.counters[counter].inc(labels, by);
    }
    for (const entries of this.#observations.values()) {
      for (const { labels, values } of entries.values()) {
        for (const value of values) sink.duration.observe(labels, value);
      }
    }
    this.#counts.clear();
    this.#observations.clear();
  }

  #added(): void {
    this.#waiting += 1;
    if (this.#waiting >= MAX_WAITING) this.#soon ??= setImmediate(() => this.flush()).unref();
    // P1: before prom-client is loaded, counts wait for its load (which ends with a flush), so
    // that the host's first requests do not bring it forward into the first exchanges.
    else if (this.sink !== undefined) this.#timer ??= setTimeout(() => this.flush(), FLUSH_AFTER_MS).unref();
  }
}

/** The entry for `key` under `metric`, made by `make` when missing. */
function entryOf<M, E>(all: Map<M, Map<string, E>>, metric: M, key: string, make: () => E): E {
  let byKey = all.get(metric);
  if (byKey === undefined) all.set(metric, (byKey = new Map()));
  let entry = byKey.get(key);
  if (entry === undefined) byKey.set(key, (entry = make()));
  return entry;
}
