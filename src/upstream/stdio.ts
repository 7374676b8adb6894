/**
 * stdio hosting (CONTRACT U1, E1): the upstream client spawned us and speaks JSON-RPC on our stdin
 * and stdout. stdout carries protocol lines only: everything else logs to stderr (L1, P6).
 *
 * The era is the SDK's decision (`serveStdio` from `@modelcontextprotocol/server/stdio`): an
 * `initialize` pins the connection to a 2025-era instance, a request with the 2026-07-28 `_meta`
 * envelope to a modern one, and a `server/discover` probe is answered at once by a modern
 * instance that a later `initialize` discards. The instance comes from our factory, so it
 * answers before any downstream is up (tools/list and tools/call wait for the first connection
 * round, P1). The transport is ours (`wire/`): the SDK's would close the session on one oversized
 * line.
 */
import type { Readable, Writable } from 'node:stream';
import type { JSONRPCMessage, Server, Transport } from '@modelcontextprotocol/server';
import { serveStdio as serveStdioEntry } from '@modelcontextprotocol/server/stdio';
import type { Logger } from 'pino';
import { StreamTransport, type OversizedMessage } from '../wire/stream-transport.js';
import { eraOfRequest } from './http-era.js';
import type { Era, UpstreamServer } from './server.js';

/**
 * The longest request line read from stdin: the SDK stdio transport's own limit, kept so that no
 * request it took is refused now. A longer one is answered with an error for its id, and the
 * session goes on (the SDK's transport closed the session instead).
 */
export const MAX_STDIO_REQUEST_BYTES = 10 * 1024 * 1024;

/** JSON-RPC 2.0's codes for a line that is no JSON, and for a request we will not read. */
const PARSE_ERROR = -32700;
const INVALID_REQUEST = -32600;

/**
 * How long after a notification a response waits before it is written (P9). The SDKs' clients
 * run a notification's handler a microtask later but settle a response at once, so a progress
 * notification and the result after it that arrive in one read of the pipe reach the host the
 * wrong way round and the progress is dropped ("unknown token"). Written at once, as they leave
 * a downstream, they nearly always share one read; a short pause gives the host its own read of
 * the notification, as a server that computes between the two gives it.
 */
export const RESPONSE_AFTER_NOTIFICATION_MS = 5;

/**
 * P5: how long closing waits for the answers to requests already read (input that ended right
 * after them, as a pipe's does, starts the shutdown before the SDK has dispatched them).
 */
export const ANSWERS_BOUND_MS = 2000;

function isNotification(message: JSONRPCMessage): boolean {
  return 'method' in message && !('id' in message);
}

function isResponse(message: JSONRPCMessage): boolean {
  return !('method' in message);
}

/** Options of {@link serveStdio}; the defaults are the process's own streams. */
export interface StdioOptions {
  /** @default process.stdin */
  readonly stdin?: Readable;
  /** @default process.stdout */
  readonly stdout?: Writable;
  /** @default {@link MAX_STDIO_REQUEST_BYTES} */
  readonly maxRequestBytes?: number;
  /** @default {@link ANSWERS_BOUND_MS} */
  readonly answersBoundMs?: number;
  /** O1: each request read, by era and method (`initialize` and `ping` included). */
  readonly onRequest?: (era: Era, method: string) => void;
  /** E1, P1: the front that held stdin while the gateway loaded; its input replaces `stdin`. */
  readonly front?: StdioFront;
}

/**
 * A stdio front (`app/stdio-front.ts`): it held stdin from the process's start and may have
 * answered the opening message already.
 */
export interface StdioFront {
  /** Every byte read so far, then the rest of stdin; taken once. */
  input(): Readable;
  /**
   * True, once per answer the front gave, for the server's own answer to that request (the
   * opening's by its id; a ping's by its id and its empty `result`): that answer is dropped.
   */
  answered(id: string | number, result: unknown): boolean;
  /** When the front answered (`performance.now()`), if it did. */
  readonly answeredAtMs: number | undefined;
  /** The opening was looked at (answered, or left to the server), or stdin ended first. */
  readonly openingSeen: boolean;
  /**
   * Resolves when the host ended its input before the server took over, having written nothing
   * that waits for an answer (only what the front answered, and notifications); never otherwise.
   */
  readonly hostLeft: Promise<void>;
  /** {@link hostLeft} has resolved. */
  readonly hostHasLeft: boolean;
}

/** A running stdio endpoint. */
export interface StdioHandle {
  /** Resolves when the input ends (the client closed our stdin or went away). */
  readonly ended: Promise<void>;
  /**
   * Closes the server once every request read has been answered or cancelled (waiting at most
   * {@link ANSWERS_BOUND_MS}), and stops reading stdin.
   */
  close(): Promise<void>;
}

/**
 * The server end of stdio: newline-delimited JSON-RPC on stdin/stdout (`wire/lines.ts`). A line
 * that is not JSON is answered with a JSON-RPC parse error, a line over the limit with an
 * invalid-request error for its id; both are logged, and the lines after them are read as usual.
 */
class StdioServerTransport extends StreamTransport {
  readonly #stdin: Readable;
  readonly #stdout: Writable;
  readonly #logger: Logger;
  #started = false;
  /** When the last notification was written (`performance.now()`). */
  #lastNotificationAt = Number.NEGATIVE_INFINITY;
  /** Messages waiting behind a paused response, written in order after it. */
  #waiting = 0;
  #tail: Promise<void> = Promise.resolve();

  readonly #front: StdioFront | undefined;
  /** Requests read and not answered yet, by id (an id may be in use twice). */
  readonly #unanswered = new Map<string | number, number>();
  #allAnswered: (() => void) | undefined;
  /** Sees every message read (the O1 count), after the unanswered requests are counted. */
  observe?: (message: JSONRPCMessage) => void;

  constructor(
    stdin: Readable,
    stdout: Writable,
    maxRequestBytes: number,
    logger: Logger,
    front: StdioFront | undefined,
  ) {
    super(maxRequestBytes);
    this.#stdin = stdin;
    this.#stdout = stdout;
    this.#logger = logger;
    this.#front = front;
    this.inbound = (message) => {
      this.#read(message);
      this.observe?.(message);
    };
  }

  /**
   * Starts reading. Idempotent: {@link serveStdio} starts the transport to read the opening
   * message, then hands it to the SDK (`Server.connect` or `serveStdio`), which starts it again.
   */
  start(): Promise<void> {
    if (this.#started) return Promise.resolve();
    this.#started = true;
    this.attach(this.#stdin, this.#stdout);
    return Promise.resolve();
  }

  async close(): Promise<void> {
    // P5: an answer held for its few milliseconds behind a notification (P9) is written first.
    await this.#tail;
    this.markClosed();
    // Stop reading unless someone else still listens (tests share a stream between endpoints).
    if (this.#stdin.listenerCount('data') === 0) this.#stdin.pause();
  }

  #read(message: JSONRPCMessage): void {
    // A 2026 listen stream is answered when it ends, by the close itself: closing does not wait for it.
    if ('method' in message && 'id' in message) {
      if (message.method !== 'subscriptions/listen') this.#count(message.id, 1);
    }
    // A request the host cancelled is never answered.
    else if ('method' in message && message.method === 'notifications/cancelled') {
      const id = (message.params as { requestId?: unknown } | undefined)?.requestId;
      if (typeof id === 'string' || typeof id === 'number') this.#count(id, -1);
    }
  }

  #count(id: string | number, by: 1 | -1): void {
    const count = (this.#unanswered.get(id) ?? 0) + by;
    if (count > 0) this.#unanswered.set(id, count);
    else this.#unanswered.delete(id);
    if (this.#unanswered.size === 0) this.#allAnswered?.();
  }

  /** Resolves once every request read has been answered (or cancelled), or after `boundMs`. */
  answered(boundMs: number): Promise<void> {
    if (this.#unanswered.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => {
      const bound = setTimeout(resolve, boundMs);
      this.#allAnswered = () => {
        clearTimeout(bound);
        resolve();
      };
    });
  }

  /** Writes `message`, a response right after a notification a moment later (P9), in order. */
  override send(message: JSONRPCMessage): Promise<void> {
    if (isResponse(message) && 'id' in message && message.id !== undefined && message.id !== null) {
      this.#count(message.id, -1);
      // E1: what the front answered (the opening, pings) is answered once.
      if (this.#front?.answered(message.id, 'result' in message ? message.result : undefined))
        return Promise.resolve();
    }
    if (this.#waiting === 0 && this.#pause(message) <= 0) return this.#write(message);
    this.#waiting += 1;
    const written = this.#tail.then(() => this.#writeAfterPause(message)).finally(() => (this.#waiting -= 1));
    this.#tail = written.catch(() => undefined);
    return written;
  }

  /** How long `message` has to wait yet: a response, until the last notification is old enough. */
  #pause(message: JSONRPCMessage): number {
    if (!isResponse(message)) return 0;
    return this.#lastNotificationAt + RESPONSE_AFTER_NOTIFICATION_MS - performance.now();
  }

  async #writeAfterPause(message: JSONRPCMessage): Promise<void> {
    // Measured again after each pause: another notification may have gone out meanwhile.
    for (let pause = this.#pause(message); pause > 0; pause = this.#pause(message)) {
      await new Promise<void>((resolve) => setTimeout(resolve, pause));
    }
    await this.#write(message);
  }

  #write(message: JSONRPCMessage): Promise<void> {
    if (isNotification(message)) this.#lastNotificationAt = performance.now();
    return super.send(message);
  }

  protected oversized({ bytes, limit, id, kind }: OversizedMessage): void {
    this.#logger.warn({ bytes, limit, requestId: id }, 'skipped a message over the limit on stdin');
    // Only a request is answered: a notification has no id, and a response is not ours to answer.
    if (id !== undefined && kind === 'request') {
      const message = `Request of ${bytes} bytes refused: one message may be at most ${limit} bytes`;
      this.#reply({ jsonrpc: '2.0', id, error: { code: INVALID_REQUEST, message } });
    }
  }

  protected unparsable(error: string, id?: string | number): void {
    this.#logger.warn({ error, requestId: id }, 'unreadable line on stdin');
    // JSON-RPC 2.0: a parse error, or an invalid request whose id cannot be read, is answered
    // with `"id": null` (as our HTTP endpoint does; the SDK's message type has no null id, hence
    // the cast); an invalid request with a readable id gets its answer under that id.
    const code = error.startsWith('not JSON (') ? PARSE_ERROR : INVALID_REQUEST;
    const text = code === PARSE_ERROR ? `Parse error: ${error}` : `Invalid Request: ${error}`;
    const reply = { jsonrpc: '2.0', id: id ?? null, error: { code, message: text } };
    this.#reply(reply as unknown as JSONRPCMessage);
  }

  #reply(message: JSONRPCMessage): void {
    this.send(message).catch((error: unknown) => this.#logger.debug({ err: error }, 'error reply not sent'));
  }
}

/**
 * Serves `upstream` on stdin/stdout.
 * @example const stdio = await serveStdio(upstream, {}, logger); await stdio.ended;
 */
export async function serveStdio(
  upstream: UpstreamServer,
  options: StdioOptions,
  logger: Logger,
): Promise<StdioHandle> {
  const stdin = options.front?.input() ?? options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(
    stdin,
    stdout,
    options.maxRequestBytes ?? MAX_STDIO_REQUEST_BYTES,
    logger,
    options.front,
  );
  const onRequest = options.onRequest;
  if (onRequest !== undefined) {
    transport.observe = (message) => {
      if ('method' in message && 'id' in message)
        onRequest(eraOfRequest(message as unknown as Record<string, unknown>), message.method);
    };
  }
  // P5 treats the end of input as a shutdown request.
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    // EPIPE: the client went away mid-write. Without a listener the error would crash the process.
    stdout.once('error', () => resolve());
  });
  const factory = (context: { era: Era }): Server => {
    // One instance per era the client opens with; a probe's may be followed by a legacy one (E1).
    logger.debug({ era: context.era }, 'stdio client opened');
    return upstream.track(upstream.factory(context), context.era);
  };
  let close: () => Promise<void> = () => transport.close();
  // E1: the opening message decides who serves the connection. A plain 2025 `initialize` gets a
  // legacy `Server` connected to the transport itself, exactly as before the SDK's dual-era
  // entry existed: serveStdio's per-message channel classifies every message again (zod parses
  // in both directions), which cost 16% of the echo throughput at 64 in flight. Anything else (a
  // `server/discover` probe, a modern request) goes to the SDK's `serveStdio`, which owns the era
  // rules; the first message is handed on as it arrived.
  transport.onmessage = (first) => {
    // The SDK chains an onmessage it finds (Protocol.connect): hand over a clean transport.
    transport.onmessage = undefined;
    if (isLegacyOpening(first)) {
      logger.debug({ era: 'legacy' }, 'stdio client opened');
      // U1: plain tools/call requests are answered past the SDK's Protocol (direct-calls.ts).
      const connecting = upstream.connect(transport, { direct: true });
      // connect() takes over onmessage synchronously, before its first await.
      handOn(transport, first);
      void connecting.then(
        (server) => (close = () => server.close()),
        (error: unknown) => logger.error({ err: error }, 'stdio session failed to start'),
      );
      return;
    }
    const entry = serveStdioEntry(factory, {
      legacy: 'serve',
      transport,
      onerror: (error) => logger.debug({ err: error }, 'stdio connection'),
    });
    close = () => entry.close();
    handOn(transport, first);
  };
  await transport.start();
  return {
    ended,
    // P5: what was read before the input ended is answered before the server closes.
    close: async () => {
      await transport.answered(options.answersBoundMs ?? ANSWERS_BOUND_MS);
      await close();
    },
  };
}

/** Delivers `message` to whoever took the transport over (TypeScript cannot see that happen). */
function handOn(transport: Transport, message: JSONRPCMessage): void {
  transport.onmessage?.(message);
}

/** A 2025 `initialize` request without the 2026-07-28 `_meta` envelope claim. */
function isLegacyOpening(message: JSONRPCMessage): boolean {
  if (!('method' in message) || message.method !== 'initialize' || !('id' in message)) return false;
  const meta = (message.params as { _meta?: Record<string, unknown> } | undefined)?._meta;
  return meta?.['io.modelcontextprotocol/protocolVersion'] === undefined;
}
