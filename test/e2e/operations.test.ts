/**
 * Operating signals of real processes: Prometheus metrics (O1) of a `serve --http` after a
 * scripted run of calls (successes, each error type a run can produce, a downstream crash and its
 * restart), parsed with a Prometheus text-format parser and checked family by family; metrics of
 * `serve` over stdio; and traces (O2) exported over OTLP to a collector on 127.0.0.1 when the
 * `OTEL_*` variables ask for them.
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { createServer } from 'node:http';
import type { AddressInfo } from 'node:net';
import parsePrometheusTextFormat from 'parse-prometheus-text-format';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { HttpServe } from './cli-process.js';
import { connectStdio, fixtureEntry, serveHttp, writeConfig } from './cli-process.js';

interface Sample {
  readonly labels?: Record<string, string>;
  readonly value?: string;
  readonly count?: string;
  readonly buckets?: Record<string, string>;
}
interface Family {
  readonly name: string;
  readonly type: string;
  readonly metrics: readonly Sample[];
}

let serve: HttpServe;
let client: LegacyClient;

beforeAll(async () => {
  serve = await serveHttp(
    writeConfig(
      [
        'log_level: warn',
        'servers:',
        fixtureEntry('echo', 'echo'),
        fixtureEntry('errors', 'errors'),
        fixtureEntry('files', 'annotated'),
        fixtureEntry('slow', 'slow', { timeout_ms: 400, concurrency: 1, max_queue: 0 }),
        fixtureEntry('crash', 'crash'),
      ].join('\n'),
    ),
  );
  client = new LegacyClient({ name: 'metrics-test', version: '1.0.0' });
  await client.connect(new LegacyHttpTransport(new URL(serve.url)));
}, 60_000);

afterAll(async () => {
  await client?.close();
  if (serve?.child.exitCode === null) serve.child.kill('SIGKILL');
});

async function scrape(): Promise<Map<string, Family>> {
  const response = await fetch(serve.url.replace(/\/mcp$/, '/metrics'));
  expect(response.headers.get('content-type')).toContain('text/plain');
  const families = parsePrometheusTextFormat(await response.text()) as Family[];
  return new Map(families.map((family) => [family.name, family]));
}

function value(families: Map<string, Family>, name: string, labels: Record<string, string> = {}): number {
  const family = families.get(name);
  expect(family, `${name} is exported`).toBeDefined();
  const sample = family?.metrics.find((m) => Object.entries(labels).every(([k, v]) => m.labels?.[k] === v));
  return Number(sample?.value ?? sample?.count ?? NaN);
}

const errorType = (result: unknown): string | undefined =>
  (result as { structuredContent?: { meta_data?: { error_type?: string } } }).structuredContent?.meta_data
    ?.error_type;

describe('GET /metrics after a scripted run', { timeout: 60_000 }, () => {
  it('O1: every family has the values the run implies', async () => {
    const call = (name: string, args: Record<string, unknown> = {}, options = {}) =>
      client.callTool({ name, arguments: args }, undefined, options);
    for (const text of ['a', 'b', 'c']) await call('echo_echo', { text });
    expect(errorType(await call('nope_nothing'))).toBe('unknown_tool');
    expect(errorType(await call('echo_echo', { text: 5 }))).toBe('invalid_arguments');
    expect(errorType(await call('files_delete_file', { path: '/tmp/x' }))).toBe('consent_required');
    expect(errorType(await call('errors_is_error'))).toBe('tool_error');
    expect(errorType(await call('errors_internal_error'))).toBe('downstream_error');
    expect(errorType(await call('slow_slow', { duration_ms: 2000, progress: false }))).toBe('timeout');
    // concurrency 1, max_queue 0: a second call while one runs is refused at once.
    const running = call('slow_slow', { duration_ms: 100 }, { onprogress: () => undefined });
    expect(errorType(await call('slow_slow', { duration_ms: 100 }))).toBe('overloaded');
    expect(errorType(await running)).toBeUndefined();
    const controller = new AbortController();
    const cancelled = call('slow_slow', { duration_ms: 2000 }, { signal: controller.signal });
    setTimeout(() => controller.abort('stop'), 100);
    await expect(cancelled).rejects.toThrow();
    // The crash: its in-flight call fails, the server restarts and answers again.
    expect(errorType(await call('crash_crash', { delay_ms: 10 }))).toBe('downstream_unavailable');
    await vi.waitFor(
      async () => expect(errorType(await call('crash_echo', { text: 'back' }))).toBeUndefined(),
      {
        timeout: 20_000,
        interval: 250,
      },
    );

    const families = await scrape();
    const calls = (labels: Record<string, string>): number =>
      value(families, 'mcp_normalizer_tool_calls_total', labels);
    expect(calls({ server: 'echo', tool: 'echo', outcome: 'ok' })).toBe(3);
    expect(calls({ server: '', tool: '', outcome: 'unknown_tool' })).toBe(1);
    expect(calls({ server: 'echo', tool: 'echo', outcome: 'invalid_arguments' })).toBe(1);
    expect(calls({ server: 'files', tool: 'delete_file', outcome: 'consent_required' })).toBe(1);
    expect(calls({ server: 'errors', tool: 'is_error', outcome: 'tool_error' })).toBe(1);
    expect(calls({ server: 'errors', tool: 'internal_error', outcome: 'downstream_error' })).toBe(1);
    expect(calls({ server: 'slow', tool: 'slow', outcome: 'timeout' })).toBe(1);
    expect(calls({ server: 'slow', tool: 'slow', outcome: 'overloaded' })).toBe(1);
    expect(calls({ server: 'slow', tool: 'slow', outcome: 'ok' })).toBe(1);
    await vi.waitFor(async () =>
      expect(
        value(await scrape(), 'mcp_normalizer_tool_calls_total', { server: 'slow', outcome: 'cancelled' }),
      ).toBe(1),
    );
    expect(calls({ server: 'crash', tool: 'crash', outcome: 'downstream_unavailable' })).toBe(1);
    expect(calls({ server: 'crash', tool: 'echo', outcome: 'ok' })).toBeGreaterThanOrEqual(1);

    // Every forwarded call has a duration. (The parser keeps a histogram's buckets but not its
    // labelled _count lines, so those are read from the text.)
    const histogram = families.get('mcp_normalizer_tool_call_duration_seconds');
    expect(histogram?.type).toBe('HISTOGRAM');
    const text = await (await fetch(serve.url.replace(/\/mcp$/, '/metrics'))).text();
    expect(text).toMatch(
      /^mcp_normalizer_tool_call_duration_seconds_count\{server="echo",outcome="ok"\} 3$/m,
    );
    expect(text).toMatch(
      /^mcp_normalizer_tool_call_duration_seconds_count\{server="slow",outcome="timeout"\} 1$/m,
    );

    expect(
      value(families, 'mcp_normalizer_upstream_requests_total', { era: 'legacy', method: 'tools/call' }),
    ).toBeGreaterThanOrEqual(13);
    expect(
      value(families, 'mcp_normalizer_downstream_restarts_total', { server: 'crash' }),
    ).toBeGreaterThanOrEqual(1);
    expect(value(families, 'mcp_normalizer_downstream_up', { server: 'crash' })).toBe(1);
    expect(value(families, 'mcp_normalizer_downstream_up', { server: 'echo' })).toBe(1);
    expect(value(families, 'mcp_normalizer_calls_in_flight', { server: 'echo' })).toBe(0);
    expect(value(families, 'mcp_normalizer_calls_queued', { server: 'slow' })).toBe(0);
    expect(value(families, 'mcp_normalizer_upstream_sessions')).toBe(1);
    expect(
      value(families, 'mcp_normalizer_notifications_forwarded_total', { kind: 'progress' }),
    ).toBeGreaterThan(0);
    const tools = (await client.listTools()).tools.length;
    expect(value(families, 'mcp_normalizer_catalog_tools')).toBe(tools);
    // Node's own process metrics, from prom-client's defaults.
    expect(families.has('process_cpu_user_seconds_total')).toBe(true);
    expect(families.has('nodejs_eventloop_lag_seconds')).toBe(true);
    // Label values are bounded: no argument value ever became one.
    expect(text).not.toContain('back');
    expect(text).not.toContain('/tmp/x');
  });
});

describe('metrics when serving stdio', { timeout: 60_000 }, () => {
  it('O1: serve --metrics-port answers GET /metrics on 127.0.0.1 while stdout stays the protocol', async () => {
    const { client: stdio, stderr } = await connectStdio(
      writeConfig(`servers:\n${fixtureEntry('echo', 'echo')}\n`),
      {},
      ['--metrics-port', '0'],
    );
    try {
      await stdio.callTool({ name: 'echo_echo', arguments: { text: 'x' } });
      const url = await vi.waitFor(() => {
        const found = /"url":"(http:\/\/127\.0\.0\.1:\d+\/metrics)"/.exec(stderr())?.[1];
        if (found === undefined) throw new Error('no metrics URL yet');
        return found;
      });
      const text = await (await fetch(url)).text();
      expect(text).toMatch(/^mcp_normalizer_tool_calls_total\{server="echo",tool="echo",outcome="ok"\} 1$/m);
      expect(text).toMatch(
        /^mcp_normalizer_upstream_requests_total\{era="legacy",method="tools\/call"\} 1$/m,
      );
    } finally {
      await stdio.close();
    }
  });
});

describe('traces exported by the OTEL_* variables', { timeout: 60_000 }, () => {
  it("O2: with OTEL_EXPORTER_OTLP_ENDPOINT set, serve over stdio exports the call spans over OTLP, under the caller's traceparent", async () => {
    const posts: { path: string; body: string }[] = [];
    const collector = createServer((req, res) => {
      let body = '';
      req.on('data', (chunk: Buffer) => (body += chunk.toString('utf8')));
      req.on('end', () => {
        posts.push({ path: req.url ?? '', body });
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
      });
    });
    await new Promise<void>((resolve) => collector.listen(0, '127.0.0.1', resolve));
    const { port } = collector.address() as AddressInfo;
    const { client: stdio } = await connectStdio(writeConfig(`servers:\n${fixtureEntry('echo', 'echo')}\n`), {
      OTEL_EXPORTER_OTLP_ENDPOINT: `http://127.0.0.1:${port}`,
      OTEL_EXPORTER_OTLP_PROTOCOL: 'http/json',
      OTEL_TRACES_EXPORTER: 'otlp',
      OTEL_METRICS_EXPORTER: 'none',
      OTEL_LOGS_EXPORTER: 'none',
      OTEL_BSP_SCHEDULE_DELAY: '100',
    });
    try {
      const traceId = '4bf92f3577b34da6a3ce929d0e0e4736';
      await stdio.request(
        {
          method: 'tools/call',
          params: {
            name: 'echo_echo',
            arguments: { text: 'x' },
            _meta: { traceparent: `00-${traceId}-00f067aa0ba902b7-01` },
          },
        },
        CallToolResultSchema,
      );
      await vi.waitFor(() => expect(posts.map((post) => post.path)).toContain('/v1/traces'), {
        timeout: 20_000,
        interval: 100,
      });
      const exported = posts
        .filter((post) => post.path === '/v1/traces')
        .map((post) => post.body)
        .join('\n');
      expect(exported).toContain(traceId);
      expect(exported).toContain('tools/call echo_echo');
      expect(exported).toContain('tools/call echo/echo');
    } finally {
      await stdio.close();
      collector.close();
    }
  });
});
