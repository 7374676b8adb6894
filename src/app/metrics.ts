/**
 * Prometheus metrics (O1, docs/operations.md) with prom-client, on a registry of our own (never
 * the global one, so two proxies in one process, as in tests, keep theirs apart). Label values
 * are bounded: server keys and tool names come from the config and the catalog, outcomes from the
 * closed R3 list, eras and methods from the protocol; no argument, id or URI is ever a label.
 *
 * Counters are counted where things happen (a call's outcome in app/tools.ts, an upstream
 * request, a forwarded notification), off the answer's path (see `record`); gauges are read from
 * the pool when scraped.
 */
import { collectDefaultMetrics, Counter, Gauge, Histogram, Registry } from 'prom-client';
import type { Result } from '../core/result.js';
import type { Pool, ServerSnapshot } from '../downstream/pool.js';

/** Buckets of the call-duration histogram (seconds): 5 ms to 2 min. */
/** Updates that may wait for a later flush before one is scheduled for them (see `record`). */
const RIDE_ALONG = 64;

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60, 120];

/** The notifications the gateway forwards upstream, by kind. */
export type ForwardedKind = 'progress' | 'log' | 'list_changed';

/** What the rest of the proxy records; the scrape reads the rest from the pool. */
export interface Metrics {
  /** One tools/call answered (or refused before any downstream), with its Result. */
  callEnded(server: string | undefined, tool: string | undefined, result: Result): void;
  /** One upstream request, by era and MCP method (from the protocol's closed list). */
  request(era: 'legacy' | 'modern', method: string): void;
  /** One notification sent upstream. */
  forwarded(kind: ForwardedKind): void;
  /** The Prometheus text exposition (for `GET /metrics`). */
  scrape(): Promise<{ contentType: string; body: string }>;
}

/** What the scrape reads at scrape time. */
export interface MetricsSources {
  readonly pool: Pool;
  /** Exposed tools right now. */
  catalogSize(): number;
  /** Open 2025 HTTP sessions right now (0 when not serving HTTP). */
  sessions(): number;
}

/** Methods counted by name; anything else is counted as `other` (bounded label values). */
const METHODS = new Set([
  'server/discover',
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
  new Gauge({
    name: 'mcp_normalizer_catalog_tools',
    help: 'Tools exposed upstream now.',
    registers: [registry],
    collect() {
      this.set(sources.catalogSize());
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

  /**
   * What happened since the last flush, recorded into prom-client together once the current
   * I/O is done (setImmediate) or when scraped, whichever comes first. prom-client hashes the
   * labels of every update; done inside a call's answer that cost ~8 µs of its latency (the code
   * is cold after the wait for the downstream, docs/performance.md). Nothing is lost or late for
   * a reader: every scrape flushes first.
   */
  const pending: Array<() => void> = [];
  let scheduled = false;
  const flush = (): void => {
    scheduled = false;
    const updates = pending.splice(0);
    for (const update of updates) update();
  };
  /**
   * `soon`: flushed after the current I/O. Otherwise the update rides along with the next
   * flush (or scrape), unless {@link RIDE_ALONG} are already waiting: an upstream request is
   * counted when it arrives, and a flush then would run just as its downstream starts work.
   */
  const record = (update: () => void, soon = true): void => {
    pending.push(update);
    if (scheduled || (!soon && pending.length < RIDE_ALONG)) return;
    scheduled = true;
    setImmediate(flush).unref();
  };

  return {
    callEnded(server = '', tool = '', result) {
      const outcome = result.success ? 'ok' : result.errorType;
      const elapsedMs = result.meta.elapsedMs;
      record(() => {
        calls.inc({ server, tool, outcome });
        if (elapsedMs !== undefined) duration.observe({ server, outcome }, elapsedMs / 1000);
      });
    },
    request(era, method) {
      const known = METHODS.has(method) ? method : 'other';
      record(() => requests.inc({ era, method: known }), false);
    },
    forwarded(kind) {
      record(() => forwarded.inc({ kind }));
    },
    async scrape() {
      flush();
      return { contentType: registry.contentType, body: await registry.metrics() };
    },
  };
}
