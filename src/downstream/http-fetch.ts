/**
 * The `fetch` the SDK's HTTP client transports (Streamable HTTP, legacy SSE) are given, for two
 * things the SDK's own use of the global `fetch` gets wrong for a gateway:
 *
 * - **One signal per request.** The SDK hands every POST of a connection the same long-lived
 *   abort signal, and undici adds an abort listener to it per request that only garbage
 *   collection removes: 14,006 `MaxListenersExceededWarning` lines in 30,000 calls, and the
 *   gateway's RSS at 234-240 MB against 114-166 MB with a stdio downstream. Here each request gets
 *   its own controller; one listener per caller signal (not per request) aborts them all, and a
 *   request leaves that set once its body is read, cancelled or failed.
 * - **No lost digits (N13).** The SDK parses responses with `JSON.parse`, which turns 2^64 into
 *   18446744073709552000. A JSON body, and each event of an SSE stream, is read here first: a
 *   number a double cannot carry becomes a string of its digits (`core/exact-json.ts`), and
 *   everything else passes byte for byte. Events are passed on whole, as the SDK's parser
 *   dispatches them anyway.
 */
import { keepInexactNumbers, mayHoldInexactNumber } from '../core/exact-json.js';

/** The shape of `fetch` the SDK transports take. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

/** The controllers of the requests in flight under each caller signal. */
const inFlight = new WeakMap<AbortSignal, Set<AbortController>>();

/** Ties `own` to `outer`: aborting `outer` aborts it, until the returned function is called. */
function link(outer: AbortSignal | null | undefined, own: AbortController): () => void {
  if (outer === undefined || outer === null) return () => {};
  if (outer.aborted) {
    own.abort(outer.reason);
    return () => {};
  }
  let members = inFlight.get(outer);
  if (members === undefined) {
    const created = new Set<AbortController>();
    members = created;
    inFlight.set(outer, created);
    // One listener for the signal's lifetime, whatever the number of requests under it.
    outer.addEventListener(
      'abort',
      () => {
        for (const controller of created) controller.abort(outer.reason);
        created.clear();
      },
      { once: true },
    );
  }
  const set = members;
  set.add(own);
  return () => {
    set.delete(own);
  };
}

/** How a body is read before the SDK sees it. */
interface BodyReader {
  chunk(bytes: Uint8Array): Uint8Array | undefined;
  end(): Uint8Array | undefined;
}

const encoder = new TextEncoder();

/** Any other body (an error page, ...): as it is. */
const passReader: BodyReader = { chunk: (bytes) => bytes, end: () => undefined };

/** A JSON body: read whole (the SDK reads it whole too), its inexact numbers kept as strings. */
function jsonReader(): BodyReader {
  const chunks: Uint8Array[] = [];
  return {
    chunk(bytes) {
      chunks.push(bytes);
      return undefined;
    },
    end() {
      const whole = Buffer.concat(chunks);
      const kept = keepInexactNumbers(whole.toString('utf8'));
      return kept === undefined ? whole : encoder.encode(kept.text);
    },
  };
}

/** The end of a complete SSE event: a blank line, in any of the three line endings. */
const EVENT_END = /\r\n\r\n|\n\n|\r\r/g;

/** One SSE event with its `data` lines' JSON read by {@link keepInexactNumbers}. */
function exactEvent(event: string): string {
  const data: string[] = [];
  const other: string[] = [];
  for (const line of event.split(/\r\n|\r|\n/)) {
    if (line.startsWith('data:')) data.push(line.slice(line.startsWith('data: ') ? 6 : 5));
    else if (line !== '') other.push(line);
  }
  const kept = data.length === 0 ? undefined : keepInexactNumbers(data.join('\n'));
  if (kept === undefined) return event;
  return [...other, ...kept.text.split('\n').map((line) => `data: ${line}`)].join('\n');
}

/** An SSE stream: passed on event by event, each complete event read for inexact numbers. */
function sseReader(): BodyReader {
  const decoder = new TextDecoder();
  let pending = '';
  const complete = (text: string): Uint8Array | undefined => {
    pending += text;
    let last = 0;
    let out = '';
    EVENT_END.lastIndex = 0;
    for (let match = EVENT_END.exec(pending); match !== null; match = EVENT_END.exec(pending)) {
      const event = pending.slice(last, match.index);
      out += (mayHoldInexactNumber(event) ? exactEvent(event) : event) + match[0];
      last = match.index + match[0].length;
    }
    if (last === 0) return undefined;
    pending = pending.slice(last);
    return encoder.encode(out);
  };
  return {
    chunk: (bytes) => complete(decoder.decode(bytes, { stream: true })),
    end() {
      const rest = complete(decoder.decode());
      // An unfinished last event goes as it is: the SDK's parser decides what it was.
      const tail = pending;
      pending = '';
      if (tail === '') return rest;
      return rest === undefined ? encoder.encode(tail) : Buffer.concat([rest, encoder.encode(tail)]);
    },
  };
}

/** Media type of a Content-Type, lower case, without parameters. */
function mediaType(contentType: string | null): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** `source` read through `reader`; `done` runs once the body ends, fails or is cancelled. */
function readThrough(
  source: ReadableStream<Uint8Array>,
  reader: BodyReader,
  done: () => void,
): ReadableStream<Uint8Array> {
  const input = source.getReader();
  return new ReadableStream<Uint8Array>({
    async pull(controller) {
      try {
        // Until something can be handed on: a pull that enqueues nothing is not pulled again.
        for (;;) {
          const { value, done: ended } = await input.read();
          if (ended) {
            const tail = reader.end();
            if (tail !== undefined && tail.length > 0) controller.enqueue(tail);
            controller.close();
            done();
            return;
          }
          const out = reader.chunk(value);
          if (out !== undefined && out.length > 0) {
            controller.enqueue(out);
            return;
          }
        }
      } catch (error) {
        done();
        controller.error(error);
      }
    },
    cancel(reason) {
      done();
      return input.cancel(reason);
    },
  });
}

/**
 * The downstream transports' `fetch` (see the module header).
 * @example new StreamableHTTPClientTransport(url, { fetch: downstreamFetch() })
 */
export function downstreamFetch(base: FetchLike = fetch): FetchLike {
  return async (url, init) => {
    const own = new AbortController();
    const unlink = link(init?.signal, own);
    let response: Response;
    try {
      response = await base(url, { ...init, signal: own.signal });
    } catch (error) {
      unlink();
      throw error;
    }
    if (response.body === null) {
      unlink();
      return response;
    }
    const type = mediaType(response.headers.get('content-type'));
    const reader =
      type === 'application/json' ? jsonReader() : type === 'text/event-stream' ? sseReader() : passReader;
    return new Response(readThrough(response.body, reader, unlink), {
      status: response.status,
      statusText: response.statusText,
      headers: response.headers,
    });
  };
}
