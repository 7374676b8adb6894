/**
 * The downstream transports' `fetch` on node:http, against a real HTTP server on 127.0.0.1: what
 * the SDK's transports and OAuth helpers send and read, no lost digits (N13), and one listener on
 * the caller's signal per request in flight, gone with it (P3, issue 27 item 22).
 */
import { getEventListeners } from 'node:events';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterEach, describe, expect, it } from 'vitest';
import { downstreamFetch as nodeFetch } from '../../src/downstream/http-fetch.js';
import { END_WAIT_MS } from '../../src/downstream/sse-answer.js';

const servers: Server[] = [];
afterEach(async () => {
  await Promise.all(
    servers.splice(0).map(
      (server) =>
        new Promise<void>((resolve) => {
          server.closeAllConnections();
          server.close(() => resolve());
        }),
    ),
  );
});

interface Seen {
  method: string;
  headers: IncomingMessage['headers'];
  body: string;
}

/** A server answering each request with `answer`; every request it saw, with its body. */
async function serve(
  answer: (req: IncomingMessage, res: ServerResponse) => void,
): Promise<{ url: string; seen: Seen[] }> {
  const seen: Seen[] = [];
  const server = createServer((req, res) => {
    let body = '';
    req.setEncoding('utf8');
    req.on('data', (chunk: string) => (body += chunk));
    req.on('end', () => {
      seen.push({ method: req.method ?? '', headers: req.headers, body });
      answer(req, res);
    });
  });
  servers.push(server);
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return { url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`, seen };
}

const RESULT = '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"n":18446744073709551616,"x":1.5}}}';
const EXACT = { n: '18446744073709551616', x: 1.5 };

describe('downstreamFetch, on node:http', () => {
  it('N13: a JSON body keeps every digit, written in two chunks', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(RESULT.slice(0, 40));
      setImmediate(() => res.end(RESULT.slice(40)));
    });
    const body = (await (await nodeFetch(url, { method: 'POST', body: '{}' })).json()) as {
      result: { structuredContent: unknown };
    };
    expect(body.result.structuredContent).toEqual(EXACT);
  });

  it('N13: an SSE event cut across writes keeps every digit; other events pass as they are', async () => {
    const stream = `: keep-alive\n\nevent: message\nid: 7\ndata: ${RESULT}\n\n`;
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write(stream.slice(0, 30));
      setImmediate(() => {
        res.write(stream.slice(30, 75));
        setImmediate(() => res.end(stream.slice(75)));
      });
    });
    const text = await (await nodeFetch(url)).text();
    expect(text).toBe(stream.replace('18446744073709551616', '"18446744073709551616"'));
  });

  it('C3: the method, headers and body go as fetch sends them; status, headers and body come back', async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(401, 'Unauthorized', {
        'content-type': 'text/html',
        'www-authenticate': 'Bearer resource_metadata="http://127.0.0.1/x"',
        'mcp-session-id': 'abc',
      });
      res.end('<p>12345678901234567890</p>');
    });
    const headers = new Headers({ Authorization: 'Bearer t', 'mcp-protocol-version': '2025-06-18' });
    const response = await nodeFetch(url, { method: 'POST', headers, body: '{"a":1}' });
    expect(response.status).toBe(401);
    expect(response.ok).toBe(false);
    expect(response.statusText).toBe('Unauthorized');
    expect(response.headers.get('www-authenticate')).toMatch(/^Bearer resource_metadata=/);
    expect(response.headers.get('mcp-session-id')).toBe('abc');
    expect(await response.text()).toBe('<p>12345678901234567890</p>');
    expect(seen[0]).toMatchObject({
      method: 'POST',
      body: '{"a":1}',
      headers: { authorization: 'Bearer t', 'mcp-protocol-version': '2025-06-18', 'content-length': '7' },
    });
  });

  it('D1: a form body (a token request) goes urlencoded, with the Content-Type fetch would give it', async () => {
    const { url, seen } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end('{"access_token":"x","token_type":"Bearer"}');
    });
    const form = new URLSearchParams({ grant_type: 'client_credentials', scope: 'a b' });
    const response = await nodeFetch(url, { method: 'POST', body: form });
    expect(await response.json()).toEqual({ access_token: 'x', token_type: 'Bearer' });
    expect(seen[0]?.body).toBe('grant_type=client_credentials&scope=a+b');
    expect(seen[0]?.headers['content-type']).toBe('application/x-www-form-urlencoded;charset=UTF-8');
  });

  it('C3: a 202 and a 204 come back without a body', async () => {
    const { url } = await serve((req, res) => {
      res.writeHead(req.method === 'DELETE' ? 204 : 202);
      res.end();
    });
    expect((await nodeFetch(url, { method: 'POST', body: '{}' })).status).toBe(202);
    const deleted = await nodeFetch(url, { method: 'DELETE' });
    expect(deleted.status).toBe(204);
    expect(deleted.body).toBeNull();
  });

  it("P3: the caller's long-lived signal holds one listener per request in flight, none once they end; aborting ends an open stream", async () => {
    const { url } = await serve((req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      // GET: a stream that stays open (a listen stream); POST: one event, then the end.
      if (req.method === 'GET') res.write(': open\n\n');
      else res.end(`data: ${RESULT}\n\n`);
    });
    const shared = new AbortController();
    for (let i = 0; i < 30; i++)
      await (await nodeFetch(url, { method: 'POST', body: '{}', signal: shared.signal })).text();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
    const open = await nodeFetch(url, { signal: shared.signal });
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    const reading = open.text();
    shared.abort(new Error('closing'));
    await expect(reading).rejects.toThrow();
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(0);
  });

  it('P3: 64 requests in flight on one signal raise no MaxListenersExceededWarning', async () => {
    const release: (() => void)[] = [];
    const { url } = await serve((_req, res) => {
      release.push(() => res.writeHead(200, { 'content-type': 'application/json' }).end(RESULT));
    });
    const warnings: string[] = [];
    const onWarning = (warning: Error): void => void warnings.push(warning.name);
    process.on('warning', onWarning);
    try {
      const shared = new AbortController();
      const calls = Array.from({ length: 64 }, () =>
        nodeFetch(url, { method: 'POST', body: '{}', signal: shared.signal }).then((r) => r.text()),
      );
      await expect.poll(() => release.length).toBe(64);
      expect(getEventListeners(shared.signal, 'abort')).toHaveLength(64);
      release.splice(0).forEach((go) => go());
      await Promise.all(calls);
      // Warnings are emitted on the next tick.
      await new Promise((resolve) => setImmediate(resolve));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });

  it('P4: a request that meets a kept-alive socket the server has just closed is sent again, once, on a new one', async () => {
    const used = new WeakSet<object>();
    let dropped = 0;
    const { url, seen } = await serve((req, res) => {
      // The keep-alive race: the server drops the connection as the client reuses it.
      if (used.has(req.socket) && dropped === 0) {
        dropped++;
        req.socket.destroy();
        return;
      }
      used.add(req.socket);
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(RESULT);
    });
    await (await nodeFetch(url, { method: 'POST', body: '{}' })).text();
    const again = await nodeFetch(url, { method: 'POST', body: '{"second":true}' });
    expect(((await again.json()) as { result: unknown }).result).toEqual({ structuredContent: EXACT });
    expect(dropped).toBe(1);
    expect(seen.map((request) => request.body)).toEqual(['{}', '{"second":true}', '{"second":true}']);
  });

  it('P4: a server that dies in the middle of an answer fails the read at once, never a wait', async () => {
    const { url } = await serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      res.write('event: message\ndata: {"jsonrpc":"2.0","id":1,"res');
      setImmediate(() => res.socket?.destroy());
    });
    const response = await nodeFetch(url, { method: 'POST', body: '{}' });
    await expect(response.text()).rejects.toThrow();
  });

  it('P3: a signal aborted before the request rejects at once, and an unreachable server is a rejection', async () => {
    const aborted = AbortSignal.abort(new Error('gone'));
    await expect(nodeFetch('http://127.0.0.1:9/mcp', { signal: aborted })).rejects.toThrow('gone');
    await expect(nodeFetch('http://127.0.0.1:9/mcp')).rejects.toThrow(/ECONNREFUSED/);
    await expect(nodeFetch('ftp://127.0.0.1/x')).rejects.toThrow(/unsupported protocol/);
  });
});

describe("downstreamFetch: a POST's SSE answer that is one plain message", () => {
  const NOTE =
    '{"jsonrpc":"2.0","method":"notifications/progress","params":{"progressToken":1,"progress":1}}';

  /** A server answering POSTs with `events`, each written as its own chunk, then `then`. */
  async function sse(events: string[], then: (res: ServerResponse) => void = (res) => res.end()) {
    return serve((_req, res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream', 'mcp-session-id': 's1' });
      const next = (i: number): void => {
        if (i === events.length) return then(res);
        res.write(events[i]);
        setImmediate(() => next(i + 1));
      };
      next(0);
    });
  }

  it('P9: one event and the end arrive as a JSON body, every digit kept (N13), the headers as they were', async () => {
    const { url } = await sse([`event: message\ndata: ${RESULT.slice(0, 30)}`, `${RESULT.slice(30)}\n\n`]);
    const response = await nodeFetch(url, { method: 'POST', body: '{"method":"tools/call"}' });
    expect(response.headers.get('content-type')).toBe('application/json');
    expect(response.headers.get('mcp-session-id')).toBe('s1');
    const body = (await response.json()) as { result: { structuredContent: unknown } };
    expect(body.result.structuredContent).toEqual(EXACT);
  });

  it.each([
    ['a progress notification before the answer', [`data: ${NOTE}\n\n`, `data: ${RESULT}\n\n`]],
    ['a priming event with an id', ['id: 1\ndata: \n\n', `id: 2\ndata: ${RESULT}\n\n`]],
    ['an answer with an event id', [`id: 9\ndata: ${RESULT}\n\n`]],
    ['two events in one chunk', [`data: ${RESULT}\n\ndata: ${RESULT}\n\n`]],
    ['a second event after the answer', [`data: ${RESULT}\n\n`, `data: ${NOTE}\n\n`]],
    ['an answer whose last event never ends', [`data: ${RESULT}`]],
  ])('P9: %s stays a stream, nothing lost, in order', async (_name, events) => {
    const { url } = await sse(events);
    const response = await nodeFetch(url, { method: 'POST', body: '{"method":"tools/call"}' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    // Every complete event is read for its digits (N13); an unfinished one goes as it is.
    const text = events.join('');
    const complete = text.slice(0, text.lastIndexOf('\n\n') + 2);
    const exact = complete.replaceAll('18446744073709551616', '"18446744073709551616"');
    expect(await response.text()).toBe(exact + text.slice(complete.length));
  });

  it('P9: a 2 MB answer written in 64 KiB pieces arrives whole, its blank line cut across two pieces', async () => {
    const big = `{"jsonrpc":"2.0","id":1,"result":{"text":"${'x'.repeat(2 * 1024 * 1024)}","n":18446744073709551616}}`;
    const event = `data: ${big}\r\n\r\n`;
    const pieces: string[] = [];
    for (let at = 0; at < event.length - 3; at += 64 * 1024)
      pieces.push(event.slice(at, Math.min(at + 64 * 1024, event.length - 3)));
    pieces.push(event.slice(-3));
    const { url } = await sse(pieces);
    const response = await nodeFetch(url, { method: 'POST', body: '{}' });
    expect(response.headers.get('content-type')).toBe('application/json');
    const body = (await response.json()) as { result: { text: string; n: unknown } };
    expect(body.result.text).toHaveLength(2 * 1024 * 1024);
    expect(body.result.n).toBe('18446744073709551616');
  });

  it('P9: an answer whose stream stays open goes on as a stream, and what follows still arrives', async () => {
    const { url } = await sse([`data: ${RESULT}\n\n`], (res) => {
      setTimeout(() => res.end(`data: ${NOTE}\n\n`), END_WAIT_MS * 3);
    });
    const response = await nodeFetch(url, { method: 'POST', body: '{}' });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
    expect(await response.text()).toBe(
      `data: ${RESULT.replace('18446744073709551616', '"18446744073709551616"')}\n\ndata: ${NOTE}\n\n`,
    );
  });

  it('P9: the answer to subscriptions/listen stays a stream (the SDK must see its end)', async () => {
    const { url } = await sse([`data: ${RESULT}\n\n`]);
    const body = '{"jsonrpc":"2.0","id":3,"method":"subscriptions/listen","params":{}}';
    const response = await nodeFetch(url, { method: 'POST', body });
    expect(response.headers.get('content-type')).toBe('text/event-stream');
  });

  it('P4: a connection lost after the first event fails the read, never a wait', async () => {
    const { url } = await sse([`data: ${RESULT}\n\n`], (res) => res.socket?.destroy());
    const response = await nodeFetch(url, { method: 'POST', body: '{}' });
    await expect(response.text()).rejects.toThrow(/closed before the response body ended/);
  });
});
