/**
 * The modern leg's node:http bridge (src/upstream/fetch-bridge.ts) against the SDK's own
 * `toNodeHandler`, each on a real socket (127.0.0.1, port 0) in front of the same
 * `createMcpHandler`: the same status, content type and bytes for every kind of answer, one
 * `Content-Length` body instead of chunks for JSON, SSE streamed, the client's disconnect seen as
 * an abort, and a handler that throws answered 500.
 */
import {
  createServer,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
  type ServerResponse,
} from 'node:http';
import type { AddressInfo } from 'node:net';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { bridgeFetchHandler, type FetchHandler } from '../../src/upstream/fetch-bridge.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0).reverse()) await close();
});

/** A promise and its resolve (Node 20 has no `Promise.withResolvers`). */
function deferred(): { promise: Promise<void>; resolve: () => void } {
  let resolve = (): void => {};
  const promise = new Promise<void>((done) => (resolve = done));
  return { promise, resolve };
}

/** What the slow tool saw: whether its signal aborted. */
const seen = { aborted: false, started: deferred(), abort: deferred() };

function makeServer(): Server {
  const server = new Server({ name: 'bridge-test', version: '1.0.0' }, { capabilities: { tools: {} } });
  server.setRequestHandler('tools/list', () => ({
    tools: [
      { name: 'echo', inputSchema: { type: 'object' } },
      { name: 'slow', inputSchema: { type: 'object' } },
    ],
  }));
  server.setRequestHandler('tools/call', async (request, ctx) => {
    const token = ctx.mcpReq._meta?.progressToken;
    if (request.params.name === 'slow') {
      // With a progress token the answer is already an SSE stream when the client leaves.
      if (token !== undefined) {
        await ctx.mcpReq.notify({
          method: 'notifications/progress',
          params: { progressToken: token, progress: 1 },
        });
      }
      seen.started.resolve();
      await new Promise<void>((resolve) => ctx.mcpReq.signal.addEventListener('abort', () => resolve()));
      seen.aborted = true;
      seen.abort.resolve();
      return { content: [] };
    }
    if (request.params.name !== 'echo') throw new Error(`no tool ${request.params.name}`);
    if (token !== undefined) {
      await ctx.mcpReq.notify({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1 },
      });
    }
    return {
      content: [{ type: 'text', text: `é ${JSON.stringify(request.params.arguments)}` }],
      structuredContent: { echoed: request.params.arguments },
    };
  });
  return server;
}

type NodeHandler = (req: IncomingMessage, res: ServerResponse, parsedBody: unknown) => Promise<void>;

/** Serves `handler` on 127.0.0.1 with the body read and parsed first, as src/upstream/http.ts does. */
async function listen(handler: NodeHandler): Promise<number> {
  const server = createServer((req, res) => {
    const chunks: Buffer[] = [];
    req.on('data', (chunk: Buffer) => chunks.push(chunk));
    req.on(
      'end',
      () => void handler(req, res, JSON.parse(Buffer.concat(chunks).toString('utf8')) as unknown),
    );
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  closers.push(
    () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  );
  return (server.address() as AddressInfo).port;
}

/** The two sides: the bridge and the SDK's adapter, each on its own handler and socket. */
async function bothSides(): Promise<{ bridge: number; sdk: number }> {
  const onerror = (): void => {};
  const a = createMcpHandler(makeServer, { legacy: 'reject' });
  const b = createMcpHandler(makeServer, { legacy: 'reject' });
  closers.push(
    () => a.close(),
    () => b.close(),
  );
  return {
    bridge: await listen(bridgeFetchHandler(a, onerror)),
    sdk: await listen(toNodeHandler(b, { onerror }) as NodeHandler),
  };
}

const META = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

interface Raw {
  status: number;
  headers: IncomingMessage['headers'];
  body: Buffer;
}

/** A POST to `/mcp` with the JSON and SSE accept header and `headers`; the body not yet sent. */
function open(
  port: number,
  headers: Record<string, string>,
  onResponse?: (res: IncomingMessage) => void,
): ClientRequest {
  return httpRequest(
    {
      host: '127.0.0.1',
      port,
      path: '/mcp',
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        ...headers,
      },
    },
    onResponse,
  );
}

function post(port: number, message: object, headers: Record<string, string>): Promise<Raw> {
  return new Promise((resolve, reject) => {
    const req = open(port, headers, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () =>
        resolve({ status: res.statusCode ?? 0, headers: res.headers, body: Buffer.concat(chunks) }),
      );
    });
    req.on('error', reject);
    req.end(JSON.stringify(message));
  });
}

const modern = (method: string, name?: string): Record<string, string> => ({
  'mcp-protocol-version': '2026-07-28',
  'mcp-method': method,
  ...(name === undefined ? {} : { 'mcp-name': name }),
});

/** One request of each kind of answer: a result, a JSON-RPC error, and each rejection status. */
const CASES: { name: string; message: object; headers: Record<string, string> }[] = [
  {
    name: 'server/discover',
    message: { jsonrpc: '2.0', id: 1, method: 'server/discover', params: { _meta: META } },
    headers: modern('server/discover'),
  },
  {
    name: 'tools/list',
    message: { jsonrpc: '2.0', id: 'l', method: 'tools/list', params: { _meta: META } },
    headers: modern('tools/list'),
  },
  {
    name: 'tools/call with a non-ASCII result',
    message: {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/call',
      params: { name: 'echo', arguments: { x: 'ü' }, _meta: META },
    },
    headers: modern('tools/call', 'echo'),
  },
  {
    name: 'tools/call of a tool that throws',
    message: {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/call',
      params: { name: 'nope', arguments: {}, _meta: META },
    },
    headers: modern('tools/call', 'nope'),
  },
  {
    name: 'an unknown method',
    message: { jsonrpc: '2.0', id: 4, method: 'no/such', params: { _meta: META } },
    headers: modern('no/such'),
  },
  {
    name: 'an unsupported protocol version',
    message: {
      jsonrpc: '2.0',
      id: 5,
      method: 'tools/list',
      params: { _meta: { ...META, 'io.modelcontextprotocol/protocolVersion': '2099-01-01' } },
    },
    headers: { ...modern('tools/list'), 'mcp-protocol-version': '2099-01-01' },
  },
  {
    name: 'a Mcp-Method header that disagrees with the body',
    message: { jsonrpc: '2.0', id: 6, method: 'tools/list', params: { _meta: META } },
    headers: modern('tools/call', 'echo'),
  },
  {
    name: 'a notification',
    message: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 9, _meta: META } },
    headers: modern('notifications/cancelled'),
  },
];

describe('the modern leg bridge', () => {
  it.each(CASES)(
    'E1: $name is answered with the SDK adapter’s status, content type and bytes',
    async ({ message, headers }) => {
      const { bridge, sdk } = await bothSides();
      const [ours, theirs] = await Promise.all([post(bridge, message, headers), post(sdk, message, headers)]);
      expect(ours.status).toBe(theirs.status);
      expect(ours.headers['content-type']).toBe(theirs.headers['content-type']);
      expect(ours.body.toString('utf8')).toBe(theirs.body.toString('utf8'));
      // JSON goes out whole, with its length; the SDK adapter sends it chunked.
      if (ours.body.byteLength > 0) {
        expect(ours.headers['content-length']).toBe(String(ours.body.byteLength));
        expect(ours.headers['transfer-encoding']).toBeUndefined();
      }
    },
  );

  it('E1/P3: a call that sends progress first is streamed as SSE, frame for frame as the SDK adapter', async () => {
    const { bridge, sdk } = await bothSides();
    const message = {
      jsonrpc: '2.0',
      id: 7,
      method: 'tools/call',
      params: { name: 'echo', arguments: { n: 1 }, _meta: { ...META, progressToken: 'p' } },
    };
    const [ours, theirs] = await Promise.all([
      post(bridge, message, modern('tools/call', 'echo')),
      post(sdk, message, modern('tools/call', 'echo')),
    ]);
    expect(ours.headers['content-type']).toBe('text/event-stream');
    expect(ours.headers['content-length']).toBeUndefined();
    const text = ours.body.toString('utf8');
    expect(text).toContain('"method":"notifications/progress"');
    expect(text.indexOf('notifications/progress')).toBeLessThan(text.indexOf('"result"'));
    expect(text).toBe(theirs.body.toString('utf8'));
  });

  it.each([
    { when: 'before any answer', meta: META },
    { when: 'while its SSE answer streams', meta: { ...META, progressToken: 'p' } },
  ])('E3: a client that closes the connection $when aborts the call’s signal', async ({ meta }) => {
    seen.aborted = false;
    seen.started = deferred();
    seen.abort = deferred();
    const handler = createMcpHandler(makeServer, { legacy: 'reject' });
    closers.push(() => handler.close());
    const port = await listen(bridgeFetchHandler(handler, () => {}));
    const streaming = deferred();
    const req = open(port, modern('tools/call', 'slow'), (res) => {
      res.once('data', () => streaming.resolve());
    });
    req.on('error', () => {});
    req.end(
      JSON.stringify({
        jsonrpc: '2.0',
        id: 8,
        method: 'tools/call',
        params: { name: 'slow', arguments: {}, _meta: meta },
      }),
    );
    await seen.started.promise;
    // With progress, wait until the stream's first frame has reached the client.
    if ('progressToken' in meta) await streaming.promise;
    req.destroy();
    await seen.abort.promise;
    expect(seen.aborted).toBe(true);
  });

  it('E1: a handler that throws is answered 500 with the request’s id, and the error is reported', async () => {
    const onerror = vi.fn();
    const failing: FetchHandler = { fetch: () => Promise.reject(new Error('boom')) };
    const port = await listen(bridgeFetchHandler(failing, onerror));
    const answer = await post(port, { jsonrpc: '2.0', id: 'x1', method: 'tools/list', params: {} }, {});
    expect(answer.status).toBe(500);
    expect(JSON.parse(answer.body.toString('utf8'))).toEqual({
      jsonrpc: '2.0',
      error: { code: -32603, message: 'Internal server error' },
      id: 'x1',
    });
    expect(onerror).toHaveBeenCalledWith(expect.objectContaining({ message: 'boom' }));
  });
});
