/**
 * OpenTelemetry traces (O2) in process: an SDK tracer provider with an in-memory exporter is
 * registered for the test, as `OTEL_*` would register one in production; one tools/call with a
 * `traceparent` in its `_meta` gives one trace: the upstream span parented to the caller's, the
 * downstream span its child, and the downstream request carries that span's `traceparent`.
 */
import { propagation, trace } from '@opentelemetry/api';
import { W3CTraceContextPropagator } from '@opentelemetry/core';
import { InMemorySpanExporter, SimpleSpanProcessor, TracerProvider } from '@opentelemetry/sdk-trace';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { createProxy, type Proxy } from '../../src/app/proxy.js';
import { issuerPrincipal } from '../../src/core/policy.js';
import type { AuthInfo } from '@modelcontextprotocol/sdk/server/auth/types.js';
import { memoryConfig, runtimeConfig } from '../helpers/fixtures.js';
import { captureLogger, MemoryTransports } from '../helpers/memory-servers.js';

const exporter = new InMemorySpanExporter();
beforeAll(() => {
  trace.setGlobalTracerProvider(
    new TracerProvider({ spanProcessors: [new SimpleSpanProcessor({ exporter })] }),
  );
  propagation.setGlobalPropagator(new W3CTraceContextPropagator());
});
afterAll(() => {
  trace.disable();
  propagation.disable();
});

const TRACE_ID = '4bf92f3577b34da6a3ce929d0e0e4736';
const PARENT_ID = '00f067aa0ba902b7';

/** A downstream whose `meta` tool answers with the `_meta` its request carried. */
function metaServer(): McpServer {
  const server = new McpServer({ name: 'meta', version: '1.0.0' });
  server.registerTool('meta', { description: 'Returns the request _meta.' }, (extra) => ({
    content: [{ type: 'text', text: JSON.stringify(extra._meta ?? {}) }],
  }));
  return server;
}

/** A proxy in front of the meta server, and a client of it; each request carries `authInfo` when given. */
async function connected(authInfo?: AuthInfo): Promise<{ proxy: Proxy; client: Client }> {
  const { logger } = captureLogger();
  const proxy = createProxy(runtimeConfig([memoryConfig('m', { protocol: 'legacy' })]), {
    logger,
    pool: { transports: new MemoryTransports({ m: metaServer }) },
  });
  await proxy.start();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  if (authInfo !== undefined) {
    const send = clientSide.send.bind(clientSide);
    clientSide.send = (message, options) => send(message, { ...options, authInfo });
  }
  await proxy.upstream.connect(serverSide);
  const client = new Client({ name: 'trace-test', version: '1.0.0' });
  await client.connect(clientSide);
  return { proxy, client };
}

describe('traces', () => {
  it('O2: one trace per call: the upstream span under the incoming traceparent, the downstream span its child, passed on in _meta', async () => {
    const { proxy, client } = await connected();
    try {
      exporter.reset();
      const result = await client.request(
        {
          method: 'tools/call',
          params: { name: 'm_meta', arguments: {}, _meta: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` } },
        },
        CallToolResultSchema,
      );
      const received = (result.structuredContent as { results: { traceparent?: string } }).results;
      const spans = exporter.getFinishedSpans();
      const upstream = spans.find((span) => span.name === 'tools/call m_meta');
      const downstream = spans.find((span) => span.name === 'tools/call m/meta');
      expect(upstream?.spanContext().traceId).toBe(TRACE_ID);
      expect(upstream?.parentSpanContext?.spanId).toBe(PARENT_ID);
      expect(downstream?.spanContext().traceId).toBe(TRACE_ID);
      expect(downstream?.parentSpanContext?.spanId).toBe(upstream?.spanContext().spanId);
      expect(downstream?.attributes).toMatchObject({
        'mcp.server': 'm',
        'mcp.tool.name': 'meta',
        'mcp.era': 'legacy',
      });
      expect(received.traceparent).toBe(`00-${TRACE_ID}-${downstream?.spanContext().spanId}-01`);
      // No token named a caller: the span names none.
      expect(upstream?.attributes['enduser.id']).toBeUndefined();

      // A failure ends both spans with its error type.
      exporter.reset();
      await client.request(
        { method: 'tools/call', params: { name: 'm_nothing', arguments: {} } },
        CallToolResultSchema,
      );
      const refused = exporter.getFinishedSpans();
      expect(refused).toHaveLength(1);
      expect(refused[0]?.attributes['error.type']).toBe('unknown_tool');
      // A name no tool has is an agent's input: it names no span, whatever its length.
      expect(refused[0]?.name).toBe('tools/call');
      expect(refused[0]?.attributes['mcp.tool.name']).toBeUndefined();
      exporter.reset();
      const huge = await client.request(
        { method: 'tools/call', params: { name: 'x'.repeat(1_000_000), arguments: {} } },
        CallToolResultSchema,
      );
      expect(exporter.getFinishedSpans().map((span) => span.name)).toEqual(['tools/call']);
      expect(JSON.stringify(huge).length).toBeLessThan(2_000);
    } finally {
      await client.close();
      await proxy.stop({ graceMs: 0 });
    }
  });

  it('O2, I2: the upstream span carries the caller’s subject from its validated token, never the token', async () => {
    // What the HTTP front puts on each request once a token is validated (upstream/identity.ts).
    const { proxy, client } = await connected({
      token: 'secret-token-value',
      clientId: 'c',
      scopes: [],
      extra: { principal: issuerPrincipal('https://idp.example.com', 'alice', { groups: [], scopes: [] }) },
    });
    try {
      exporter.reset();
      await client.request(
        { method: 'tools/call', params: { name: 'm_meta', arguments: {} } },
        CallToolResultSchema,
      );
      const upstream = exporter.getFinishedSpans().find((span) => span.name === 'tools/call m_meta');
      expect(upstream?.attributes['enduser.id']).toBe('https://idp.example.com#alice');
      expect(JSON.stringify(exporter.getFinishedSpans().map((span) => span.attributes))).not.toContain(
        'secret-token-value',
      );
    } finally {
      await client.close();
      await proxy.stop({ graceMs: 0 });
    }
  });
});

describe('traces in code mode', () => {
  it('O2, M2: a run is one span, each call of its snippet one span under it, each downstream call under that', async () => {
    const { logger } = captureLogger();
    const proxy = createProxy(runtimeConfig([memoryConfig('m', { protocol: 'legacy', expose: 'code' })]), {
      logger,
      pool: { transports: new MemoryTransports({ m: metaServer }) },
    });
    await proxy.start();
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.upstream.connect(serverSide);
    const client = new Client({ name: 'trace-test', version: '1.0.0' });
    await client.connect(clientSide);
    try {
      exporter.reset();
      const result = await client.request(
        {
          method: 'tools/call',
          params: {
            name: 'run_code',
            arguments: {
              code: 'await tools.m_meta({}); try { await tools.m_nothing({}); } catch {} return 1;',
            },
            _meta: { traceparent: `00-${TRACE_ID}-${PARENT_ID}-01` },
          },
        },
        CallToolResultSchema,
      );
      expect((result.structuredContent as { results: { calls: number } }).results.calls).toBe(2);
      const spans = exporter.getFinishedSpans();
      const run = spans.find((span) => span.name === 'tools/call run_code');
      const calls = spans.filter((span) => span.attributes['mcp.code_mode'] === true);
      const downstream = spans.find((span) => span.name === 'tools/call m/meta');
      expect(run?.parentSpanContext?.spanId).toBe(PARENT_ID);
      // A name no tool has names no span, inside a snippet too.
      expect(calls.map((span) => span.name).sort()).toEqual(['tools/call', 'tools/call m_meta']);
      for (const call of calls) expect(call.parentSpanContext?.spanId).toBe(run?.spanContext().spanId);
      const meta = calls.find((span) => span.name === 'tools/call m_meta');
      expect(downstream?.parentSpanContext?.spanId).toBe(meta?.spanContext().spanId);
      const missing = calls.find((span) => span.name === 'tools/call');
      expect(missing?.attributes['error.type']).toBe('unknown_tool');
    } finally {
      await client.close();
      await proxy.stop({ graceMs: 0 });
    }
  });
});
