/**
 * The stdio server end (upstream/stdio.ts) with raw JSON-RPC lines on in-memory streams: what a
 * client that writes a broken or oversized line gets back, and that the session goes on (U1).
 * The process-level behaviour (stdout hygiene, end of input) is in test/e2e/lifecycle.test.ts.
 */
import { PassThrough } from 'node:stream';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { createProxy } from '../../src/app/proxy.js';
import { memoryConfig, runtimeConfig } from '../helpers/fixtures.js';
import { captureLogger, echoServer, MemoryTransports } from '../helpers/memory-servers.js';

const stops: (() => Promise<void>)[] = [];
/** The 2026-07-28 request envelope (E1). */
const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 't', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

/**
 * A proxy in front of `server` (named `e`; the echo server by default) served on in-memory
 * stdin/stdout; `send` writes raw text, `next` reads the next line, `unread` takes the lines not
 * read yet.
 */
async function stdioSession(
  maxRequestBytes: number,
  options: { server?: () => McpServer; answersBoundMs?: number; modern?: boolean } = {},
) {
  const { logger, lines } = captureLogger();
  const config = runtimeConfig([memoryConfig('e')]);
  const proxy = createProxy(config, {
    logger,
    pool: { transports: new MemoryTransports({ e: options.server ?? echoServer }) },
  });
  stops.push(() => proxy.stop({ graceMs: 0 }));
  await proxy.start();
  const stdin = new PassThrough();
  const stdout = new PassThrough();
  const handle = await proxy.serveStdio({
    stdin,
    stdout,
    maxRequestBytes,
    ...(options.answersBoundMs !== undefined ? { answersBoundMs: options.answersBoundMs } : {}),
  });
  let buffered = '';
  const queue: string[] = [];
  const waiters: ((line: string) => void)[] = [];
  stdout.on('data', (chunk: Buffer) => {
    buffered += chunk.toString('utf8');
    for (let end = buffered.indexOf('\n'); end !== -1; end = buffered.indexOf('\n')) {
      const line = buffered.slice(0, end);
      buffered = buffered.slice(end + 1);
      const waiter = waiters.shift();
      if (waiter) waiter(line);
      else queue.push(line);
    }
  });
  const next = (): Promise<Record<string, unknown>> =>
    new Promise<string>((resolve) => {
      const line = queue.shift();
      if (line !== undefined) resolve(line);
      else waiters.push(resolve);
    }).then((line) => JSON.parse(line) as Record<string, unknown>);
  const send = (text: string): void => {
    stdin.write(text);
  };
  if (options.modern === true) {
    send(
      `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'server/discover', params: { _meta: ENVELOPE } })}\n`,
    );
    expect(await next()).toMatchObject({ id: 0, result: { supportedVersions: ['2026-07-28'] } });
  } else {
    send(
      `${JSON.stringify({ jsonrpc: '2.0', id: 0, method: 'initialize', params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 't', version: '1' } } })}\n`,
    );
    expect(await next()).toMatchObject({ id: 0, result: { serverInfo: expect.any(Object) } });
    send(`${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/initialized' })}\n`);
  }
  const unread = (): Record<string, unknown>[] =>
    queue.splice(0).map((line) => JSON.parse(line) as Record<string, unknown>);
  return { send, next, unread, lines, proxy, stdin, handle };
}

/** A server whose one tool, `wait`, answers only once its call is cancelled (and then not at all). */
function waitingServer(): McpServer {
  const server = new McpServer({ name: 'waiting', version: '1.0.0' });
  server.registerTool(
    'wait',
    { description: 'Waits until cancelled.' },
    (extra) =>
      new Promise((resolve) =>
        extra.signal.addEventListener('abort', () => resolve({ content: [{ type: 'text', text: 'late' }] })),
      ),
  );
  return server;
}

const callLine = (id: number, text: string): string =>
  `${JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params: { name: 'e_echo', arguments: { text } } })}\n`;

describe('serveStdio', () => {
  it('U1: a line that is not JSON gets a JSON-RPC parse error (-32700), and the next request is served', async () => {
    const { send, next, lines } = await stdioSession(1 << 20);
    send('this is not json\n');
    expect(await next()).toEqual({
      jsonrpc: '2.0',
      id: null,
      error: { code: -32700, message: expect.stringMatching(/^Parse error: not JSON .*this is not json/) },
    });
    send(callLine(1, 'after'));
    expect(await next()).toMatchObject({ id: 1, result: { structuredContent: { results: 'after' } } });
    expect(lines.some((line) => line['msg'] === 'unreadable line on stdin')).toBe(true);
  });

  it.each([
    ['jsonrpc 1.0', { jsonrpc: '1.0', id: 3, method: 'tools/list' }, 3],
    ['no jsonrpc member', { id: 'five', method: 'tools/list' }, 'five'],
    ['a method that is no string', { jsonrpc: '2.0', id: 6, method: 42 }, 6],
    ['an id that cannot be read', { jsonrpc: '2.0', id: { x: 1 }, method: 'tools/list' }, null],
    // JSON-RPC 2.0 ids are integers: these are answered under id null (they got no answer at all).
    ['an id that is no integer (1.5)', { jsonrpc: '2.0', id: 1.5, method: 'tools/list' }, null],
    ['an id above 2^53', '{"jsonrpc":"2.0","id":9007199254740993,"method":"tools/list"}', null],
  ])(
    'U1: an invalid request (%s) gets -32600 for its id, and the session goes on',
    async (_label, request, id) => {
      const { send, next } = await stdioSession(1 << 20);
      send(`${typeof request === 'string' ? request : JSON.stringify(request)}\n`);
      expect(await next()).toMatchObject({
        jsonrpc: '2.0',
        id,
        error: { code: -32600, message: expect.stringMatching(/^Invalid Request: /) as unknown },
      });
      send(callLine(1, 'after'));
      expect(await next()).toMatchObject({ id: 1, result: { structuredContent: { results: 'after' } } });
    },
  );

  it('U1: a request over the limit gets -32600 for its own id, cut into chunks or not; the session goes on', async () => {
    const { send, next, lines } = await stdioSession(4096);
    const long = callLine(7, 'x'.repeat(10_000));
    send(long.slice(0, 3000));
    send(long.slice(3000));
    send(callLine(8, 'small'));
    expect(await next()).toEqual({
      jsonrpc: '2.0',
      id: 7,
      error: {
        code: -32600,
        message: `Request of ${long.length - 1} bytes refused: one message may be at most 4096 bytes`,
      },
    });
    expect(await next()).toMatchObject({ id: 8, result: { structuredContent: { results: 'small' } } });
    expect(lines.some((line) => line['bytes'] === long.length - 1 && line['requestId'] === 7)).toBe(true);
  });

  it('U1: an oversized notification is logged and gets no answer (it has no id to answer)', async () => {
    const { send, next, lines } = await stdioSession(4096);
    const notification = {
      jsonrpc: '2.0',
      method: 'notifications/roots/list_changed',
      params: { pad: 'p'.repeat(5000) },
    };
    send(`${JSON.stringify(notification)}\n`);
    send(callLine(9, 'next'));
    expect(await next()).toMatchObject({ id: 9, result: { structuredContent: { results: 'next' } } });
    expect(lines.some((line) => typeof line['bytes'] === 'number' && line['requestId'] === undefined)).toBe(
      true,
    );
  });

  it('P5: closing does not wait for a request the host cancelled (it is never answered); the others are answered', async () => {
    // A bound no test outlives: closing must not need it.
    const { send, unread, stdin, handle } = await stdioSession(1 << 20, {
      server: waitingServer,
      answersBoundMs: 3_600_000,
    });
    send(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'e_wait', arguments: {} } })}\n`,
    );
    send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'ping' })}\n`);
    send(
      `${JSON.stringify({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, reason: 'host gave up' } })}\n`,
    );
    stdin.end();
    await handle.ended;
    await handle.close();
    const ids = unread().map((line) => line['id']);
    expect(ids).toContain(2);
    expect(ids).not.toContain(1);
  });

  it('P5: closing does not wait for a 2026 listen stream (closing ends it); a request read before the end is answered', async () => {
    // A bound no test outlives: closing must not need it.
    const { send, next, unread, stdin, handle } = await stdioSession(1 << 20, {
      modern: true,
      answersBoundMs: 3_600_000,
    });
    send(
      `${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'subscriptions/listen', params: { _meta: ENVELOPE, notifications: { toolsListChanged: true } } })}\n`,
    );
    expect(await next()).toMatchObject({ method: 'notifications/subscriptions/acknowledged' });
    send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list', params: { _meta: ENVELOPE } })}\n`);
    stdin.end();
    await handle.ended;
    await handle.close();
    expect(unread().map((line) => line['id'])).toContain(2);
  });

  it('O1: every request read on stdio is counted by era and method, initialize, ping and the direct tools/call path included', async () => {
    const { send, next, proxy } = await stdioSession(1 << 20);
    send(`${JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'ping' })}\n`);
    await next();
    send(`${JSON.stringify({ jsonrpc: '2.0', id: 2, method: 'tools/list' })}\n`);
    await next();
    send(callLine(3, 'counted'));
    await next();
    const body = (await proxy.metrics()).body;
    for (const method of ['initialize', 'ping', 'tools/list', 'tools/call'])
      expect(body, method).toContain(
        `mcp_normalizer_upstream_requests_total{era="legacy",method="${method}"} 1`,
      );
  });
});
