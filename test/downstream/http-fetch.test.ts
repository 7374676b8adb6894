/**
 * The downstream transports' fetch: a signal per request (no listener piles up on the SDK's one
 * long-lived signal) and no lost digits (N13) in JSON bodies and SSE events.
 */
import { getEventListeners } from 'node:events';
import { describe, expect, it } from 'vitest';
import { downstreamFetch, type FetchLike } from '../../src/downstream/http-fetch.js';

/** A body that arrives in `chunks`. */
function chunked(chunks: readonly string[]): ReadableStream<Uint8Array> {
  const encoder = new TextEncoder();
  let i = 0;
  return new ReadableStream({
    pull(controller) {
      if (i < chunks.length) controller.enqueue(encoder.encode(chunks[i++]));
      else controller.close();
    },
  });
}

function replying(type: string, chunks: readonly string[]): FetchLike & { signals: AbortSignal[] } {
  const signals: AbortSignal[] = [];
  const fetchLike = (async (_url: string | URL, init?: RequestInit) => {
    signals.push(init?.signal as AbortSignal);
    return new Response(chunked(chunks), { status: 200, headers: { 'content-type': type } });
  }) as FetchLike & { signals: AbortSignal[] };
  fetchLike.signals = signals;
  return fetchLike;
}

const RESULT = '{"jsonrpc":"2.0","id":1,"result":{"structuredContent":{"n":18446744073709551616,"x":1.5}}}';

describe('downstreamFetch', () => {
  it('N13: a JSON body keeps every digit, whatever its chunks', async () => {
    const fetchLike = downstreamFetch(replying('application/json', [RESULT.slice(0, 50), RESULT.slice(50)]));
    const body = (await (await fetchLike('http://127.0.0.1/mcp')).json()) as {
      result: { structuredContent: unknown };
    };
    expect(body.result.structuredContent).toEqual({ n: '18446744073709551616', x: 1.5 });
  });

  it('N13: an SSE event cut across chunks keeps every digit; other events pass as they are', async () => {
    const stream = `: keep-alive\n\nevent: message\nid: 7\ndata: ${RESULT}\n\n`;
    const cut = [stream.slice(0, 30), stream.slice(30, 75), stream.slice(75)];
    const text = await (await downstreamFetch(replying('text/event-stream', cut))('http://x')).text();
    expect(text).toBe(
      `: keep-alive\n\nevent: message\nid: 7\ndata: ${RESULT.replace('18446744073709551616', '"18446744073709551616"')}\n\n`,
    );
  });

  it('N13: any other body passes byte for byte', async () => {
    const html = '<p>12345678901234567890</p>';
    const text = await (await downstreamFetch(replying('text/html', [html]))('http://x')).text();
    expect(text).toBe(html);
  });

  it('P3: each request gets its own signal, and the caller signal has one listener whatever the number of requests', async () => {
    // SSE streams that stay open (a listen stream, a long call), except the first one.
    const signals: AbortSignal[] = [];
    const base = async (_url: string | URL, init?: RequestInit): Promise<Response> => {
      signals.push(init?.signal as AbortSignal);
      const body = signals.length === 1 ? chunked([': hi\n\n']) : new ReadableStream<Uint8Array>();
      return new Response(body, { status: 200, headers: { 'content-type': 'text/event-stream' } });
    };
    const fetchLike = downstreamFetch(base);
    const shared = new AbortController();
    const responses = await Promise.all(
      Array.from({ length: 50 }, () => fetchLike('http://x', { signal: shared.signal })),
    );
    expect(new Set(signals).size).toBe(50);
    expect(signals).not.toContain(shared.signal);
    expect(getEventListeners(shared.signal, 'abort')).toHaveLength(1);
    // A request still reading its body is aborted with the caller; one that was read is not.
    await responses[0]?.text();
    shared.abort(new Error('closing'));
    expect(signals[0]?.aborted).toBe(false);
    expect(signals[1]?.aborted).toBe(true);
  });
});
