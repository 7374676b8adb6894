/**
 * The `fetch` of the downstream HTTP transports (Streamable HTTP, legacy SSE) and of their OAuth
 * clients, on `node:http` / `node:https` with keep-alive agents instead of the global (undici)
 * `fetch`. Three things the SDK's use of the global `fetch` gets wrong for a gateway:
 *
 * - **Memory.** undici's per-request `Request`, fetch controller, `Headers` and web streams are
 *   garbage that V8 lets the heap grow over under load: with an HTTP downstream the gateway's RSS
 *   was 1.85x that with a stdio one after 30,000 calls (issue 27 item 22). Here a request is one
 *   `ClientRequest`, one `ReadableStream` over the response and one `Response`; a POST's SSE
 *   answer that is one message and the end arrives as a JSON body (sse-answer.ts).
 * - **Listeners.** The SDK hands every POST of a connection the same long-lived abort signal, and
 *   undici adds a listener to it per request that only garbage collection removes (14,006
 *   `MaxListenersExceededWarning` lines in 30,000 calls). Here the listener goes when the request
 *   does.
 * - **No lost digits (N13).** The SDK parses responses with `JSON.parse`, which turns 2^64 into
 *   18446744073709552000. A JSON body, and each event of an SSE stream, is read first
 *   (`bodyReaderFor`): a number a double cannot carry becomes a string of its
 *   digits, and everything else passes byte for byte.
 *
 * What the transports and the SDK's OAuth helpers use of `fetch` is supported: a method, headers
 * (a `Headers`, a record or pairs), a body (a string, `URLSearchParams`, bytes), an abort signal
 * and a `Response` back. Redirects are not followed: the SDK's redirect policy decides what to do
 * with a 3xx, as with `redirect: 'manual'`.
 */
import { setMaxListeners } from 'node:events';
import {
  Agent as HttpAgent,
  request as httpRequest,
  type ClientRequest,
  type IncomingMessage,
} from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { keepInexactNumbers, mayHoldInexactNumber } from '../core/exact-json.js';
import { EVENT_END, LINE_END, readLoneMessage } from './sse-answer.js';

/** The shape of `fetch` the SDK transports take. */
export type FetchLike = (url: string | URL, init?: RequestInit) => Promise<Response>;

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

/** One SSE event with its `data` lines' JSON read by {@link keepInexactNumbers}. */
function exactEvent(event: string): string {
  const data: string[] = [];
  const other: string[] = [];
  for (const line of event.split(LINE_END)) {
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
    // Searched from just before the new text only: a large event read in many chunks is scanned
    // once, not once per chunk.
    EVENT_END.lastIndex = Math.max(0, pending.length - 3);
    pending += text;
    let last = 0;
    let out = '';
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
function mediaType(contentType: string | null | undefined): string {
  return (contentType ?? '').split(';')[0]?.trim().toLowerCase() ?? '';
}

/** N13: how a body of `contentType` is read: JSON whole, SSE event by event, anything else as it is. */
function bodyReaderFor(contentType: string | null | undefined): BodyReader {
  const type = mediaType(contentType);
  return type === 'application/json' ? jsonReader() : type === 'text/event-stream' ? sseReader() : passReader;
}

/**
 * Keep-alive agents. An idle socket is closed after {@link IDLE_SOCKET_MS}, under the 5 s after
 * which Node's own HTTP servers close theirs, so that a request seldom meets a socket the server
 * is closing (and when it does, it is sent again: see {@link downstreamFetch}).
 */
const IDLE_SOCKET_MS = 4000;
const agents = {
  'http:': new HttpAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
  'https:': new HttpsAgent({ keepAlive: true, timeout: IDLE_SOCKET_MS }),
};

/** A reused keep-alive socket the server had closed: the request never reached it. */
function staleSocket(error: unknown): boolean {
  const code = (error as { code?: unknown }).code;
  return code === 'ECONNRESET' || code === 'EPIPE';
}

/** `init.headers` as a plain record, lower-cased. */
function headerRecord(headers: RequestInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (headers === undefined) return out;
  const entries: Iterable<[string, string]> =
    headers instanceof Headers
      ? headers.entries()
      : Array.isArray(headers)
        ? (headers as [string, string][])
        : Object.entries(headers as Record<string, string>);
  for (const [name, value] of entries) out[name.toLowerCase()] = value;
  return out;
}

/** The body as bytes, with the Content-Type `fetch` would give it when none is set. */
function bodyOf(body: RequestInit['body']): { bytes?: Buffer; type?: string } {
  if (body === undefined || body === null) return {};
  if (typeof body === 'string') return { bytes: Buffer.from(body), type: 'text/plain;charset=UTF-8' };
  if (body instanceof URLSearchParams)
    return { bytes: Buffer.from(body.toString()), type: 'application/x-www-form-urlencoded;charset=UTF-8' };
  if (body instanceof ArrayBuffer) return { bytes: Buffer.from(body) };
  if (ArrayBuffer.isView(body)) return { bytes: Buffer.from(body.buffer, body.byteOffset, body.byteLength) };
  throw new TypeError(`unsupported request body: ${Object.prototype.toString.call(body)}`);
}

/** The response's headers as a `Headers` (repeated headers joined as `fetch` does, set-cookie kept apart). */
function responseHeaders(res: IncomingMessage): Headers {
  const headers = new Headers();
  const raw = res.rawHeaders;
  for (let i = 0; i + 1 < raw.length; i += 2) headers.append(raw[i] as string, raw[i + 1] as string);
  return headers;
}

/**
 * Whether a response may be an SSE stream holding one plain message (see sse-answer.ts): the
 * answer to a POST, except to `subscriptions/listen`, whose stream's end the SDK must see.
 */
function mayBeLoneMessage(method: string, status: number, res: IncomingMessage, body?: Buffer): boolean {
  return (
    method === 'POST' &&
    status === 200 &&
    mediaType(res.headers['content-type']) === 'text/event-stream' &&
    body?.includes('"subscriptions/listen"') !== true
  );
}

/** Statuses whose response has no body by definition (a `Response` refuses one). */
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

/**
 * The response body as a web stream, each chunk read by `reader` on its way, starting with the
 * chunks already `read` from it; `done` runs once the body ended, failed or was cancelled.
 * Backpressure: the response pauses while the stream's queue is full.
 */
function bodyStream(
  res: IncomingMessage,
  reader: BodyReader,
  done: () => void,
  read: Buffer[] = [],
): ReadableStream<Uint8Array> {
  // Once the body ended, failed or was cancelled, nothing more reaches the controller.
  let settled = false;
  return new ReadableStream<Uint8Array>({
    start(controller) {
      const take = (chunk: Buffer): void => {
        const out = reader.chunk(chunk);
        if (out !== undefined && out.length > 0) controller.enqueue(out);
      };
      const fail = (error: unknown): void => {
        if (settled) return;
        settled = true;
        controller.error(error);
        done();
      };
      const end = (): void => {
        if (settled) return;
        settled = true;
        const tail = reader.end();
        if (tail !== undefined && tail.length > 0) controller.enqueue(tail);
        controller.close();
        done();
      };
      for (const chunk of read) take(chunk);
      const lost = (): void => fail(new Error('the connection closed before the response body ended'));
      // Read from a body that has already ended or failed (see sse-answer.ts).
      if (res.readableEnded) return end();
      if (res.destroyed) return lost();
      res.on('data', (chunk: Buffer) => {
        if (settled) return;
        take(chunk);
        if ((controller.desiredSize ?? 1) <= 0) res.pause();
      });
      res.once('end', end);
      res.once('error', fail);
      // A connection lost mid-body (or the request aborted): the reader must not wait for ever.
      res.once('close', lost);
    },
    pull() {
      res.resume();
    },
    cancel() {
      settled = true;
      res.destroy();
      done();
    },
  });
}

/**
 * The downstream `fetch` (see the module header).
 * @example new StreamableHTTPClientTransport(url, { fetch: downstreamFetch })
 */
/** Signals whose listener cap is lifted already. */
const lifted = new WeakSet<AbortSignal>();

/**
 * The SDK hands one long-lived signal to every request of a connection: with more than ten
 * requests in flight at once, Node warned `MaxListenersExceededWarning` although each listener
 * here goes when its request does. The listeners are bounded by the requests in flight.
 */
function liftListenerCap(signal: AbortSignal | undefined): void {
  if (signal === undefined || lifted.has(signal)) return;
  lifted.add(signal);
  setMaxListeners(0, signal);
}

export const downstreamFetch: FetchLike = (input, init = {}) =>
  new Promise<Response>((resolve, reject) => {
    const url = new URL(String(input));
    const protocol = url.protocol as keyof typeof agents;
    if (agents[protocol] === undefined) {
      reject(new TypeError(`fetch: unsupported protocol ${url.protocol}`));
      return;
    }
    const signal = init.signal ?? undefined;
    if (signal?.aborted) {
      reject(signal.reason);
      return;
    }
    liftListenerCap(signal);
    let body: { bytes?: Buffer; type?: string };
    try {
      body = bodyOf(init.body);
    } catch (error) {
      reject(error);
      return;
    }
    const method = (init.method ?? 'GET').toUpperCase();
    const headers = headerRecord(init.headers);
    if (body.type !== undefined && headers['content-type'] === undefined) headers['content-type'] = body.type;
    if (body.bytes !== undefined) headers['content-length'] = String(body.bytes.length);
    const send = protocol === 'https:' ? httpsRequest : httpRequest;
    let request: ClientRequest;
    // One listener on the caller's signal for this request's life, removed when it ends.
    const onAbort = (): void => {
      request.destroy(
        signal?.reason instanceof Error ? signal.reason : new Error('This operation was aborted'),
      );
    };
    const done = (): void => signal?.removeEventListener('abort', onAbort);
    const attempt = (retry: boolean): void => {
      let answered = false;
      request = send(url, { method, headers, agent: agents[protocol] }, (res) => {
        answered = true;
        const status = res.statusCode ?? 0;
        const answer = (
          body: ConstructorParameters<typeof Response>[0],
          headers = responseHeaders(res),
        ): void => {
          try {
            resolve(new Response(body, { status, statusText: res.statusMessage ?? '', headers }));
          } catch (error) {
            // A status a Response cannot carry (outside 200-599).
            res.destroy();
            done();
            reject(error);
          }
        };
        if (NULL_BODY.has(status) || method === 'HEAD') {
          res.resume();
          res.once('end', done);
          answer(null);
        } else if (mayBeLoneMessage(method, status, res, body.bytes)) {
          readLoneMessage(res, (outcome) => {
            if (outcome.kind === 'stream') {
              answer(bodyStream(res, sseReader(), done, outcome.read));
              return;
            }
            res.on('error', () => {});
            done();
            const headers = responseHeaders(res);
            headers.set('content-type', 'application/json');
            answer(outcome.text, headers);
          });
        } else {
          answer(bodyStream(res, bodyReaderFor(res.headers['content-type']), done));
        }
      });
      request.once('error', (error) => {
        // Node's documented case: a kept-alive socket the server closed as it was reused. The
        // request did not reach the server; it is sent once more, on a new socket.
        if (retry && !answered && request.reusedSocket && staleSocket(error) && signal?.aborted !== true) {
          attempt(false);
          return;
        }
        done();
        reject(signal?.aborted === true ? signal.reason : error);
      });
      request.end(body.bytes);
    };
    signal?.addEventListener('abort', onAbort, { once: true });
    attempt(true);
  });
