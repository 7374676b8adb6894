/**
 * One downstream over the SDK's InMemoryTransport, with fake timers driving restarts and
 * withholding (P3, P4, P7, P8, T10, T12).
 */
import { buildCatalog } from '../../src/core/catalog.js';
import { getEventListeners } from 'node:events';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { ListPromptsRequestSchema, ListToolsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { SdkErrorCode } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ServerConfig } from '../../src/config/types.js';
import { Connection, type ConnectionState } from '../../src/downstream/connection.js';
import { memoryConfig } from '../helpers/fixtures.js';
import {
  captureLogger,
  MemoryTransports,
  rawServer,
  type Connectable,
  type RawScript,
} from '../helpers/memory-servers.js';

const OBJECT = { type: 'object', properties: {} };

/** Lets every pending message and promise chain run (setImmediate is left real). */
async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

function config(overrides: Partial<ServerConfig> = {}): ServerConfig {
  return memoryConfig('s', overrides);
}

/** An McpServer with `echo`, and `hang` whose calls never answer. */
function echoServer(extraTool?: string): McpServer {
  const server = new McpServer({ name: 'mem', version: '1' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => ({
    content: [{ type: 'text', text }],
  }));
  server.registerTool('hang', {}, () => new Promise(() => {}));
  if (extraTool) server.registerTool(extraTool, {}, () => ({ content: [] }));
  return server;
}

function setup(build: () => Connectable, overrides: Partial<ServerConfig> = {}) {
  const transports = new MemoryTransports({ s: build });
  const { logger, lines } = captureLogger();
  const connection = new Connection({
    server: config(overrides),
    logger,
    transports,
    random: () => 0,
    clientInfo: { name: 'test', version: '1.0.0' },
  });
  const states: ConnectionState[] = [];
  let toolsChanged = 0;
  connection.events.on('stateChanged', (state) => states.push(state));
  connection.events.on('toolsChanged', () => toolsChanged++);
  return { connection, transports, lines, states, changes: () => toolsChanged };
}

const CATALOG_OPTIONS = {
  separator: '_',
  nameMaxLength: 64,
  explicitDestructive: true,
  strictArguments: false,
  describeArguments: false,
};

const names = (connection: Connection): string[] =>
  connection.tools.map((tool) => (tool as { name: string }).name);

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Connection', () => {
  it.each([
    [[], {}],
    [['elicitation', 'sampling'], { elicitation: { form: {}, url: {} }, sampling: {} }],
    [['roots'], { roots: {} }],
  ] as const)(
    'P8: a 2025 downstream is told exactly the client features its config allows (%j)',
    async (clientFeatures, advertised) => {
      const server = echoServer();
      const { connection } = setup(() => server, { clientFeatures, protocol: 'legacy' });
      await connection.start();
      expect(connection.state).toBe('ready');
      expect(server.server.getClientCapabilities()).toEqual(advertised);
      await connection.close();
    },
  );

  it("T12: a listing with malformed tools is passed on whole: every per-tool verdict is the catalog's", async () => {
    const raw = rawServer(() => ({
      pages: [
        {
          tools: [
            { name: 'good', inputSchema: OBJECT },
            { name: 'bad_schema', inputSchema: 'not a schema' },
            { description: 'nameless', inputSchema: OBJECT },
            {
              name: 'also_good',
              inputSchema: { type: 'object', $defs: {}, properties: { a: { $ref: '#/$defs/x' } } },
            },
          ],
        },
      ],
    }));
    const { connection } = setup(() => raw);
    await connection.start();
    expect(connection.state).toBe('ready');
    expect(connection.tools).toHaveLength(4);
    const catalog = buildCatalog([{ server: 's', prefix: 's', tools: connection.tools }], CATALOG_OPTIONS);
    // also_good's $ref does not resolve: the catalog withholds it too (its schema cannot compile).
    expect(catalog.tools.map((tool) => tool.tool)).toEqual(['good']);
    expect(catalog.problems.map((problem) => problem.tool)).toEqual(['bad_schema', '#2', 'also_good']);
    await connection.close();
  });

  it('T12: every page of tools/list is followed', async () => {
    const raw = rawServer(() => ({
      pages: [
        { tools: [{ name: 'a', inputSchema: OBJECT }], nextCursor: '1' },
        { tools: [{ name: 'b', inputSchema: OBJECT }], nextCursor: '2' },
        { tools: [{ name: 'c', inputSchema: OBJECT }] },
      ],
    }));
    const { connection } = setup(() => raw);
    await connection.start();
    expect(names(connection)).toEqual(['a', 'b', 'c']);
    await connection.close();
  });

  it('P4: a server is never ready while its tool listing fails, and it is retried with backoff', async () => {
    const { connection, transports, states } = setup(() => rawServer(() => ({ listFails: true })));
    await connection.start();
    expect(connection.state).toBe('down');
    expect(connection.lastError).toMatch(/listing is broken/);
    expect(connection.retryAfterMs()).toBe(250); // nextDelay(0, () => 0)
    await vi.advanceTimersByTimeAsync(249);
    expect(transports.attempts('s')).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    await settle();
    expect(transports.attempts('s')).toBe(2);
    expect(connection.state).toBe('down');
    expect(connection.retryAfterMs()).toBe(500); // nextDelay(1, () => 0)
    expect(states).not.toContain('ready');
    await connection.close();
  });

  it.each([
    ['without the tools capability: ready, with no tools', {}, 'ready'],
    ['that announced tools: down (P4)', { tools: {} }, 'down'],
  ] as const)(
    'U5: a prompts-only server answering "method not found" to tools/list %s',
    async (_d, tools, state) => {
      const { connection } = setup(() => {
        const server = new Server({ name: 'mem', version: '1' }, { capabilities: { ...tools, prompts: {} } });
        server.setRequestHandler(ListPromptsRequestSchema, () => ({ prompts: [{ name: 'p' }] }));
        return server;
      });
      await connection.start();
      expect(connection.state).toBe(state);
      if (state === 'ready') {
        expect(connection.tools).toEqual([]);
        expect(connection.features.prompts).toEqual([{ name: 'p' }]);
      }
      await connection.close();
    },
  );

  it('P1: a server that cannot start is reported down with its error and retried in the background', async () => {
    let fail = true;
    const { connection, transports } = setup(() => {
      if (fail) throw Object.assign(new Error('spawn nope ENOENT'), { code: 'ENOENT' });
      return echoServer();
    });
    await connection.start();
    expect(connection.state).toBe('down');
    expect(connection.lastError).toMatch(/ENOENT/);
    fail = false;
    await vi.advanceTimersByTimeAsync(250);
    await settle();
    expect(transports.attempts('s')).toBe(2);
    expect(connection.state).toBe('ready');
    expect(connection.lastError).toBeUndefined();
    await connection.close();
  });

  it('P4: a dropped connection fails every call in flight at once; the server restarts by itself', async () => {
    const { connection, transports, states } = setup(() => echoServer());
    await connection.start();
    const calls = [1, 2, 3].map(() => connection.call('hang', {}));
    await settle();
    expect(connection.inflight).toBe(3);
    await transports.drop('s');
    const outcomes = await Promise.allSettled(calls); // no timer advanced: nothing can time out
    for (const outcome of outcomes) {
      expect(outcome.status).toBe('rejected');
      expect((outcome as PromiseRejectedResult).reason).toMatchObject({
        code: SdkErrorCode.ConnectionClosed,
      });
    }
    expect(connection.state).toBe('down');
    await expect(connection.call('echo', { text: 'x' })).rejects.toMatchObject({
      code: SdkErrorCode.ConnectionClosed,
    });
    await vi.advanceTimersByTimeAsync(250);
    await settle();
    expect(states).toEqual(['ready', 'down', 'restarting', 'ready']);
    expect(connection.restarts).toBe(1);
    await expect(connection.call('echo', { text: 'back' })).resolves.toMatchObject({
      content: [{ type: 'text', text: 'back' }],
    });
    await connection.close();
  });

  it('P4: last known good tools stay listed while restarting; a same list after restart emits no change', async () => {
    let up = true;
    const { connection, transports, changes } = setup(() => {
      if (!up) throw new Error('still starting');
      return echoServer();
    });
    await connection.start();
    expect(changes()).toBe(1);
    up = false;
    await transports.drop('s');
    expect(connection.state).toBe('down');
    expect(names(connection)).toEqual(['echo', 'hang']);
    await vi.advanceTimersByTimeAsync(250 + 500);
    await settle();
    expect(transports.attempts('s')).toBe(3);
    expect(names(connection)).toEqual(['echo', 'hang']);
    up = true;
    await vi.advanceTimersByTimeAsync(1000);
    await settle();
    expect(connection.state).toBe('ready');
    expect(changes()).toBe(1);
    await connection.close();
  });

  it('P4/T10: a restart that brings a different list emits toolsChanged', async () => {
    let generation = 0;
    const { connection, transports, changes } = setup(() =>
      echoServer(generation++ === 0 ? undefined : 'new_tool'),
    );
    await connection.start();
    await transports.drop('s');
    await vi.advanceTimersByTimeAsync(250);
    await settle();
    expect(names(connection)).toEqual(['echo', 'hang', 'new_tool']);
    expect(changes()).toBe(2);
    await connection.close();
  });

  it('P4/T10: only a server down longer than withhold_after_ms has its tools withheld; they return with it', async () => {
    let up = true;
    const { connection, transports, changes } = setup(
      () => {
        if (!up) throw new Error('down for good');
        return echoServer();
      },
      { withholdAfterMs: 10_000 },
    );
    await connection.start();
    up = false;
    await transports.drop('s');
    await vi.advanceTimersByTimeAsync(9_999);
    expect(connection.toolsWithheld).toBe(false);
    expect(names(connection)).toEqual(['echo', 'hang']);
    expect(changes()).toBe(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(connection.toolsWithheld).toBe(true);
    expect(connection.tools).toEqual([]);
    expect(changes()).toBe(2);
    up = true;
    await vi.advanceTimersByTimeAsync(30_000);
    await settle();
    expect(connection.state).toBe('ready');
    expect(connection.toolsWithheld).toBe(false);
    expect(names(connection)).toEqual(['echo', 'hang']);
    expect(changes()).toBe(3);
    await connection.close();
  });

  it('T10: tools/list_changed re-lists, and emits a change only when the list differs', async () => {
    let script: RawScript = { pages: [{ tools: [{ name: 'a', inputSchema: OBJECT }] }] };
    const raw = rawServer(() => script);
    const { connection, changes } = setup(() => raw);
    await connection.start();
    const lists = (): number =>
      raw.received.filter((message) => 'method' in message && message.method === 'tools/list').length;
    expect(lists()).toBe(1);
    await raw.notify('notifications/tools/list_changed');
    await settle();
    expect(lists()).toBe(2);
    expect(changes()).toBe(1);
    script = {
      pages: [
        {
          tools: [
            { name: 'a', inputSchema: OBJECT },
            { name: 'b', inputSchema: OBJECT },
          ],
        },
      ],
    };
    await raw.notify('notifications/tools/list_changed');
    await settle();
    expect(names(connection)).toEqual(['a', 'b']);
    expect(changes()).toBe(2);
    await connection.close();
  });

  it('P4: a re-listing that fails takes the server down instead of reporting it healthy', async () => {
    let script: RawScript = { pages: [{ tools: [{ name: 'a', inputSchema: OBJECT }] }] };
    const raw = rawServer(() => script);
    const { connection } = setup(() => raw);
    await connection.start();
    script = { listFails: true };
    await raw.notify('notifications/tools/list_changed');
    await settle();
    expect(connection.state).toBe('down');
    expect(names(connection)).toEqual(['a']);
    await connection.close();
  });

  it.each([
    ['an unknown content block type', { content: [{ type: 'hologram', frames: 3 }] }],
    ['a non-object structuredContent', { content: [], structuredContent: [1, 2, 3] }],
    ['a result violating the listed outputSchema', { content: [], structuredContent: { unexpected: true } }],
  ])('P7: %s comes back as sent, for the normalizer to judge', async (_d, result) => {
    const raw = rawServer(() => ({
      pages: [
        {
          tools: [
            {
              name: 't',
              inputSchema: OBJECT,
              outputSchema: { type: 'object', properties: { x: { type: 'number' } }, required: ['x'] },
            },
          ],
        },
      ],
      call: () => result,
    }));
    const { connection } = setup(() => raw);
    await connection.start();
    await expect(connection.call('t', {})).resolves.toEqual(result);
    await connection.close();
  });

  it('P3/R3: a response the SDK cannot even read as one (a non-object result) ends in a timeout, never a hang', async () => {
    const raw = rawServer(() => ({
      pages: [{ tools: [{ name: 't', inputSchema: OBJECT }] }],
      call: () => 'a string',
    }));
    const { connection } = setup(() => raw, { timeoutMs: 1000 });
    await connection.start();
    const call = connection.call('t', {});
    const outcome = expect(call).rejects.toMatchObject({ code: SdkErrorCode.RequestTimeout });
    await vi.advanceTimersByTimeAsync(1000);
    await outcome;
    await connection.close();
  });

  it('issue 56: a late answer to a request the gateway gave up on (an abandoned era probe) is a debug line, no warning; the server serves on', async () => {
    const raw = rawServer(() => ({
      pages: [{ tools: [{ name: 't', inputSchema: OBJECT }] }],
      call: () => ({}),
    }));
    const { connection, lines } = setup(() => raw);
    await connection.start();
    // What a slow 2025 server does after the probe's bound: answers an id nobody waits for.
    await raw.answerLate(987_654, { capabilities: {} });
    await settle();
    expect(lines.filter((line) => Number(line['level']) >= 40)).toEqual([]);
    expect(lines.some((line) => line['msg'] === 'late answer to an abandoned request')).toBe(true);
    expect(connection.state).toBe('ready');
    await connection.close();
  });

  it('P3: the per-call signal of the caller goes to the SDK as it is, with no forwarding controller in between', async () => {
    const { connection } = setup(() => echoServer());
    await connection.start();
    // One signal per call, as the upstream's per-request signal is: the SDK's own abort listener
    // sits on it directly while the call runs, and is removed once the call has ended (SDK v2 at
    // once, our request tap within 100 ms).
    for (let i = 0; i < 3; i++) {
      const caller = new AbortController();
      const call = connection.call('echo', { text: String(i) }, { signal: caller.signal });
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
      await call;
      await vi.advanceTimersByTimeAsync(100);
      expect(getEventListeners(caller.signal, 'abort')).toHaveLength(0);
    }
    await connection.close();
  });

  it('P4: a downstream that exits while its prompts are being listed is down and restarted, not ready', async () => {
    let crashNext = true;
    const live: { transports?: MemoryTransports } = {};
    const { connection, transports } = setup(() => {
      const server = new Server({ name: 'mem', version: '1' }, { capabilities: { tools: {}, prompts: {} } });
      server.setRequestHandler(ListToolsRequestSchema, () => ({
        tools: [{ name: 'a', inputSchema: OBJECT }],
      }));
      server.setRequestHandler(ListPromptsRequestSchema, async () => {
        if (!crashNext) return { prompts: [] };
        crashNext = false;
        // The process dies before it answers: its pipe closes under the pending request.
        await live.transports?.drop('s');
        return new Promise<never>(() => {});
      });
      return server;
    });
    live.transports = transports;
    await connection.start();
    expect(connection.state).toBe('down');
    await expect(connection.call('a', {})).rejects.toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    await vi.advanceTimersByTimeAsync(250);
    await settle();
    expect(connection.state).toBe('ready');
    expect(transports.attempts('s')).toBe(2);
    await connection.close();
  });

  it('P5: close is terminal: state closed, no restart, calls refused', async () => {
    const { connection, transports } = setup(() => echoServer());
    await connection.start();
    await connection.close();
    expect(connection.state).toBe('closed');
    await vi.advanceTimersByTimeAsync(60_000);
    expect(transports.attempts('s')).toBe(1);
    await expect(connection.call('echo', { text: 'x' })).rejects.toMatchObject({
      code: SdkErrorCode.ConnectionClosed,
    });
  });
});
