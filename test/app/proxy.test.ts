/**
 * The composition root with in-memory downstream servers (no processes): catalog rebuilds and
 * list_changed (T10), collisions logged (T4), instructions of refused calls (R4), /healthz (U4).
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createProxy } from '../../src/app/proxy.js';
import type { Config, ToolOverride } from '../../src/config/types.js';
import { memoryConfig, runtimeConfig } from '../helpers/fixtures.js';
import { captureLogger, echoServer, MemoryTransports } from '../helpers/memory-servers.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const config = runtimeConfig;

const memory = (name: string) => memoryConfig(name);

async function started(cfg: Config, builders: Record<string, () => McpServer>) {
  const { logger, lines } = captureLogger();
  const proxy = createProxy(cfg, { logger, pool: { transports: new MemoryTransports(builders) } });
  stops.push(() => proxy.stop({ graceMs: 0 }));
  await proxy.start();
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.upstream.connect(serverSide);
  const client = new Client({ name: 'proxy-test', version: '1.0.0' });
  await client.connect(clientSide);
  stops.push(() => client.close());
  return { proxy, client, lines };
}

function call(client: Client, name: string, args: Record<string, unknown> = {}) {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

describe('createProxy', () => {
  it('R4/L1: every answer gets the most specific instruction (tool, server, global) and one end line in the log, refused or forwarded', async () => {
    const failing = (): McpServer => {
      const server = echoServer();
      server.registerTool('fail', { description: 'Always fails.' }, () => ({
        isError: true,
        content: [{ type: 'text', text: 'broken' }],
      }));
      return server;
    };
    const tools = (overrides: Record<string, ToolOverride>) => ({
      include: [],
      exclude: [],
      rename: {},
      overrides,
      stripPrefix: false,
    });
    const { client, lines } = await started(
      config(
        [
          memoryConfig('a', {
            instructions: { tool_error: 'server a says' },
            tools: tools({ fail: { instructions: { tool_error: 'tool says' }, instruction: 'well done' } }),
          }),
          memoryConfig('b', { instructions: { tool_error: 'server b says' } }),
          memory('c'),
        ],
        { instructions: { tool_error: 'global says', unknown_tool: 'global: check the name' } },
      ),
      { a: failing, b: failing, c: failing },
    );
    const instruction = async (name: string, args: Record<string, unknown> = {}) =>
      ((await call(client, name, args)).structuredContent as { meta_data?: { instruction?: string } })
        .meta_data?.instruction;
    expect(await instruction('a_fail')).toBe('tool says');
    expect(await instruction('b_fail')).toBe('server b says');
    expect(await instruction('c_fail')).toBe('global says');
    expect(await instruction('nope_fail')).toBe('global: check the name');
    // One end line per call, at error level for a failure, whichever way it failed.
    const ends = lines.filter((line) => line['event'] === 'call_end').map((line) => line['exposedName']);
    expect(ends).toEqual(['a_fail', 'b_fail', 'c_fail', 'nope_fail']);
  });

  it('T10: a downstream adding a tool rebuilds the catalog and notifies the upstream client once', async () => {
    let downstream: McpServer | undefined;
    const { proxy, client } = await started(config([memory('dyn')]), {
      dyn: () => (downstream = echoServer()),
    });
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    expect(proxy.catalog().tools.map((tool) => tool.name)).toEqual(['dyn_echo']);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['dyn_echo']);
    downstream?.registerTool('shout', { description: 'Shout.' }, () => ({
      content: [{ type: 'text', text: 'HI' }],
    }));
    await expect.poll(() => changed).toBe(1);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(['dyn_echo', 'dyn_shout']);
    expect((await call(client, 'dyn_shout')).structuredContent).toMatchObject({ results: 'HI' });
  });

  it('T4: a collision between two unprefixed servers is logged as an error and the later tool withheld', async () => {
    const { proxy, lines } = await started(
      config([
        { ...memory('first'), prefix: '' },
        { ...memory('second'), prefix: '' },
      ]),
      { first: echoServer, second: echoServer },
    );
    expect(proxy.catalog().tools.map((tool) => `${tool.server}/${tool.name}`)).toEqual(['first/echo']);
    const logged = lines.find(
      (line) => line['level'] === 50 && String(line['msg']).startsWith('Name collision'),
    );
    expect(logged?.['server']).toBe('second');
  });

  it('R4: a refused call carries the configured instruction (global layer) in its envelope', async () => {
    const { client } = await started(
      config([memory('a')], { instructions: { unknown_tool: 'List the tools first.' } }),
      {
        a: echoServer,
      },
    );
    const result = await call(client, 'a_ehco');
    expect(result.structuredContent).toMatchObject({
      meta_data: { error_type: 'unknown_tool', instruction: 'List the tools first.' },
    });
  });

  it('U4: health reports each server with state and exposed-tool count; 200 while serving, 503 once stopping', async () => {
    const { proxy } = await started(config([memory('a'), { ...memory('off'), enabled: false }]), {
      a: echoServer,
    });
    expect(proxy.health()).toEqual({
      status: 200,
      body: {
        status: 'ok',
        // E5: an SDK v1 server answers the probe with "method not found": the 2025 protocol.
        servers: [
          {
            name: 'a',
            state: 'ready',
            tools: 1,
            era: 'legacy',
            protocol_version: '2025-11-25',
            in_flight: 0,
            queued: 0,
          },
        ],
      },
    });
    await proxy.stop({ graceMs: 0 });
    expect(proxy.health()).toMatchObject({ status: 503, body: { status: 'stopping' } });
  });

  it('P1/U4: a server that cannot start is reported degraded with its error; the others serve', async () => {
    const { proxy, client } = await started(config([memory('a'), memory('broken')]), {
      a: echoServer,
      broken: () => {
        throw new Error('spawn ENOENT');
      },
    });
    const health = proxy.health();
    expect(health.status).toBe(200);
    expect(health.body).toMatchObject({
      status: 'degraded',
      servers: [
        { name: 'a', state: 'ready', tools: 1 },
        { name: 'broken', tools: 0, error: expect.stringContaining('ENOENT') as unknown },
      ],
    });
    expect((await call(client, 'a_echo', { text: 'still here' })).structuredContent).toMatchObject({
      results: 'still here',
    });
  });

  it("P1: a list waits for a server still starting only until list_wait_ms after the gateway's start, not the pool's", async () => {
    const { logger } = captureLogger();
    // `stuck` never answers initialize; the window is long, but it began a minute ago.
    const transports = new MemoryTransports({ ok: echoServer, stuck: () => ({ connect: async () => {} }) });
    const cfg = { ...config([memory('stuck'), memory('ok')]), listWaitMs: 60_000 };
    const proxy = createProxy(cfg, { logger, pool: { transports }, startedAt: Date.now() - 61_000 });
    stops.push(() => proxy.stop({ graceMs: 0 }));
    void proxy.start();
    await proxy.pool.firstAttempt('ok');
    const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
    await proxy.upstream.connect(serverSide);
    const client = new Client({ name: 'proxy-test', version: '1.0.0' });
    await client.connect(clientSide);
    stops.push(() => client.close());
    // Counted from the pool's start, this list would wait the whole minute for `stuck`.
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['ok_echo']);
    expect(proxy.pool.starting()).toEqual(['stuck']);
  });
});
