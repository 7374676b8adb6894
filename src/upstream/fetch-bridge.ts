/**
 * node:http ↔ the SDK's web-standard handler (`createMcpHandler(...).fetch`) for the modern leg
 * (E1). Does what `@modelcontextprotocol/node`'s `toNodeHandler` does, for a body already read and
 * parsed by the caller, with two costs fewer per request (measured in docs/performance-log.md):
 *
 * - the `Request` carries the headers and the abort signal but no body. With `parsedBody` the
 *   handler never reads the body (it classifies the parsed value); `toNodeHandler` serializes the
 *   parsed value again and wraps it in a body stream nobody reads.
 * - a JSON answer (every answer that is not an SSE stream) is read whole and written in one
 *   `end()` with its `Content-Length`, not chunk by chunk through an async iterator as chunked
 *   transfer-encoding. An SSE answer streams as before, honouring write backpressure.
 *
 * As in `toNodeHandler`: the `Request`'s signal aborts when the client goes away before the answer
 * is written (a modern client cancels by closing the stream), and a handler that throws gets the
 * same 500 JSON-RPC error with the request's id echoed.
 */
import { once } from 'node:events';
import type { AuthInfo } from '@modelcontextprotocol/server';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { isRecord } from '../core/json.js';

/** The part of the SDK's `McpHttpHandler` the bridge calls. */
export interface FetchHandler {
  fetch(request: Request, options?: { parsedBody?: unknown; authInfo?: AuthInfo }): Promise<Response>;
}

/** Serves one request whose body (if any) is already parsed. */
export type NodeFetchHandler = (
  req: IncomingMessage,
  res: ServerResponse,
  parsedBody: unknown,
) => Promise<void>;

/**
 * Adapts `handler` to node:http. `onerror` sees a handler that threw (the client gets a 500).
 * @example const serve = bridgeFetchHandler(createMcpHandler(factory, { legacy: 'reject' }), logError);
 */
export function bridgeFetchHandler(handler: FetchHandler, onerror: (error: Error) => void): NodeFetchHandler {
  return async (req, res, parsedBody) => {
    let finished = false;
    const abort = new AbortController();
    res.once('close', () => {
      if (!finished) abort.abort();
    });
    if (res.destroyed) abort.abort();
    let response: Response;
    try {
      // I1: the token validated by http-auth.ts, as the handlers' `authInfo`.
      const authInfo = (req as IncomingMessage & { auth?: AuthInfo }).auth;
      response = await handler.fetch(webRequest(req, abort.signal), {
        parsedBody,
        ...(authInfo !== undefined ? { authInfo } : {}),
      });
    } catch (error) {
      try {
        onerror(error instanceof Error ? error : new Error(String(error)));
      } catch {
        // An observer that throws does not change the answer.
      }
      response = Response.json(
        {
          jsonrpc: '2.0',
          error: { code: -32603, message: 'Internal server error' },
          id: echoableId(parsedBody),
        },
        { status: 500 },
      );
    }
    const headers: Record<string, string> = {};
    for (const [name, value] of response.headers) headers[name] = value;
    if (response.body === null) {
      finished = true;
      res.writeHead(response.status, headers);
      res.end();
      return;
    }
    if (!isEventStream(headers['content-type'])) {
      const body = Buffer.from(await response.arrayBuffer());
      finished = true;
      headers['content-length'] = String(body.byteLength);
      res.writeHead(response.status, headers);
      res.end(body);
      return;
    }
    res.writeHead(response.status, headers);
    await pipeStream(response.body, res, abort.signal);
    finished = true;
    res.end();
  };
}

/** The web `Request` the handler reads: method, URL, headers and the abort signal; no body. */
function webRequest(req: IncomingMessage, signal: AbortSignal): Request {
  const method = (req.method ?? 'GET').toUpperCase();
  const host = first(req.headers.host) ?? 'localhost';
  const headers = new Headers();
  for (const [name, value] of Object.entries(req.headers)) {
    if (value === undefined || name.startsWith(':')) continue;
    // The body is not forwarded, so neither are the headers that describe it.
    if (name === 'content-length' || name === 'transfer-encoding' || name === 'content-encoding') continue;
    if (Array.isArray(value)) for (const item of value) headers.append(name, item);
    else headers.set(name, value);
  }
  return new Request(`http://${host}${req.url ?? '/'}`, { method, headers, signal });
}

/** Writes an SSE body to `res` as it comes, waiting for `drain` when the socket is full. */
async function pipeStream(
  body: ReadableStream<Uint8Array>,
  res: ServerResponse,
  signal: AbortSignal,
): Promise<void> {
  try {
    for await (const chunk of body) {
      if (signal.aborted) break;
      // Rejects when the client leaves while we wait.
      if (!res.write(chunk)) await once(res, 'drain', { signal });
    }
  } catch {
    // The stream failed or the client left: end what was written.
  }
}

function isEventStream(contentType: string | undefined): boolean {
  return contentType !== undefined && contentType.toLowerCase().startsWith('text/event-stream');
}

function first(value: string | string[] | undefined): string | undefined {
  return Array.isArray(value) ? value[0] : value;
}

/** The id a 500 answer echoes: a single request's string or number id, otherwise null. */
function echoableId(body: unknown): string | number | null {
  if (!isRecord(body) || typeof body['method'] !== 'string') return null;
  const id = body['id'];
  return typeof id === 'string' || typeof id === 'number' ? id : null;
}
