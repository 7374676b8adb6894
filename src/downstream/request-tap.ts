/**
 * The hot path to a 2025 stdio server (P3, P7): tools/call and the other forwarded requests go
 * out and come back here, beside the SDK `Client` rather than through it.
 *
 * Why: the SDK v2 `Protocol` classifies every incoming message with up to four zod `safeParse`s,
 * funnels each request through its era codec and a schema check we make lenient anyway
 * (`z.unknown()`), and builds a promise chain per result; that was most of the gateway's own
 * CPU per call (docs/performance-log.md). A forwarded request needs none of it: the stdio line was
 * already checked as a JSON-RPC envelope (`wire/lines.ts`), and the normalizer judges the result.
 *
 * How: once the `Client` is connected, the tap wraps the transport's `onmessage` and `onclose`
 * the SDK installed. Responses to the tap's own ids and progress for its own tokens are taken
 * before the SDK sees them; every other message (list results, list_changed, the server's
 * requests to its client, late answers) goes to the SDK exactly as before. The tap's ids start
 * at 10⁹, far past the SDK's counter (from 0) and inside a 32-bit integer for strict peers.
 *
 * What a request promises is the SDK's, rule for rule: the timeout restarts on progress
 * (`SdkError` REQUEST_TIMEOUT), the caller's signal sends `notifications/cancelled` and rejects
 * with the abort reason (an `SdkError` when it is not one), a JSON-RPC error rejects with the
 * SDK's `ProtocolError`, a result loses a stray `resultType` (the 2025 codec's decoding), a
 * result that is not an object is left to the SDK (which reports it; the call times out), and
 * the transport's close rejects whatever is pending.
 *
 * What a request costs: no timer of its own. The tap keeps one timer, armed at the earliest
 * deadline of what is pending; a request whose deadline is later (every one, when the timeouts
 * are alike) arms nothing, and progress only moves a number. When the timer fires, what is due
 * times out and the timer is armed for the next deadline. Timers per call were ~4 µs of garbage
 * in a process's first calls (docs/performance-log.md).
 */
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Progress, Transport } from '@modelcontextprotocol/client';
import { LazySignal, type CallSignal } from '../core/call-signal.js';
import { isRecord } from '../core/json.js';

/** The tap's first request id; ids wrap back to it before {@link LAST_ID}. */
export const FIRST_ID = 1_000_000_000;
const LAST_ID = 2_000_000_000;
/** How long answered requests' abort listeners wait to be removed (see `#answered`). */
const SWEEP_AFTER_MS = 100;

/** One request's bounds and listeners. */
export interface TapRequestOptions {
  /** Fails the request with REQUEST_TIMEOUT after this long without a result or progress. */
  readonly timeoutMs: number;
  /** Aborting it cancels the request downstream (`notifications/cancelled`). */
  readonly signal?: CallSignal;
  readonly onProgress?: (progress: Progress) => void;
}

/**
 * One pending request: its bounds and how it ends. It is its own abort listener (an object with
 * `handleEvent`), so a request costs one object and no closures.
 */
class Pending {
  /** When it times out, on `Date.now()`'s clock (the one fake timers drive in every test); progress moves it. */
  deadline: number;

  constructor(
    readonly tap: RequestTap,
    readonly id: number,
    readonly resolve: (value: unknown) => void,
    readonly reject: (error: unknown) => void,
    readonly options: TapRequestOptions,
  ) {
    this.deadline = Date.now() + options.timeoutMs;
    options.signal?.addEventListener('abort', this);
  }

  /** The caller's signal aborted: the request is cancelled. */
  handleEvent(): void {
    this.tap.cancel(this.id, this.options.signal?.reason);
  }

  /** Its deadline passed. */
  onTimeout(): void {
    this.tap.cancel(
      this.id,
      new SdkError(SdkErrorCode.RequestTimeout, 'Request timed out', { timeout: this.options.timeoutMs }),
    );
  }

  /** Removes the abort listener. */
  forget(): void {
    this.options.signal?.removeEventListener('abort', this);
  }
}

type Handler = NonNullable<Transport['onmessage']>;

/** An abort reason as the SDK rejects with it. */
function abortError(reason: unknown): unknown {
  return reason instanceof SdkError ? reason : new SdkError(SdkErrorCode.RequestTimeout, String(reason));
}

/**
 * Requests to a connected 2025 server, past the SDK `Client` that shares its transport.
 * @example
 * await client.connect(transport);
 * const tap = new RequestTap(transport);
 * const result = await tap.request('tools/call', { name: 'echo', arguments: {} }, { timeoutMs: 60_000 });
 */
export class RequestTap {
  readonly #transport: Transport;
  readonly #pending = new Map<number, Pending>();
  #next = FIRST_ID;
  #closed = false;
  /** Answered requests whose abort listener is still to be removed (see {@link #answered}). */
  #stale: Pending[] = [];
  #sweepTimer: ReturnType<typeof setTimeout> | undefined;
  /** The one deadline timer, and the deadline it is armed for. */
  #deadlineTimer: ReturnType<typeof setTimeout> | undefined;
  #armedFor = Infinity;

  /** `transport` must be connected: the tap wraps the handlers the SDK set on it. */
  constructor(transport: Transport) {
    this.#transport = transport;
    const sdkMessage = transport.onmessage;
    const sdkClose = transport.onclose;
    transport.onmessage = ((message: JSONRPCMessage, extra) => {
      if (!this.#take(message)) sdkMessage?.(message, extra);
    }) as Handler;
    transport.onclose = () => {
      this.#close();
      sdkClose?.();
    };
  }

  /** Requests in flight. */
  get pending(): number {
    return this.#pending.size;
  }

  /** Sends `method` with `params` and resolves with the result as the server sent it. */
  request(method: string, params: Record<string, unknown>, options: TapRequestOptions): Promise<unknown> {
    const { signal } = options;
    if (signal?.aborted) return Promise.reject(abortError(signal.reason));
    if (this.#closed) return Promise.reject(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    const id = this.#nextId();
    return new Promise<unknown>((resolve, reject) => {
      const pending = new Pending(this, id, resolve, reject, options);
      this.#pending.set(id, pending);
      if (pending.deadline < this.#armedFor) this.#arm(pending.deadline);
      // P3: the token is the id, as the SDK makes it; a caller's own `_meta` keys stay.
      const meta = isRecord(params['_meta']) ? params['_meta'] : {};
      this.#transport
        .send({ jsonrpc: '2.0', id, method, params: { ...params, _meta: { ...meta, progressToken: id } } })
        .catch((error: unknown) => this.#settle(id)?.reject(error));
    });
  }

  /**
   * Cancels request `id` as the SDK cancels: the server hears why, the caller gets the reason as
   * an SdkError. Nothing when it is no longer pending.
   */
  cancel(id: number, reason: unknown): void {
    const pending = this.#settle(id);
    if (pending === undefined) return;
    this.#transport
      .send({
        jsonrpc: '2.0',
        method: 'notifications/cancelled',
        params: { requestId: id, reason: String(reason) },
      })
      .catch(() => {});
    pending.reject(abortError(reason));
  }

  #nextId(): number {
    const id = this.#next;
    this.#next = id + 1 >= LAST_ID ? FIRST_ID : id + 1;
    return id;
  }

  /** Arms the deadline timer for `deadline` (unref'd: the transport keeps the process alive). */
  #arm(deadline: number): void {
    clearTimeout(this.#deadlineTimer);
    this.#armedFor = deadline;
    const wait = Math.max(1, Math.ceil(deadline - Date.now()));
    this.#deadlineTimer = setTimeout(this.#expire, wait).unref();
  }

  #disarm(): void {
    clearTimeout(this.#deadlineTimer);
    this.#deadlineTimer = undefined;
    this.#armedFor = Infinity;
  }

  /** The deadline timer fired: what is due times out; the timer goes to the next deadline. */
  readonly #expire = (): void => {
    // The timer fired: its deadline is due even where the clock lags it (a fake timer in a test).
    const now = Math.max(Date.now(), this.#armedFor);
    this.#disarm();
    let next = Infinity;
    for (const pending of [...this.#pending.values()]) {
      if (pending.deadline <= now) pending.onTimeout();
      else if (pending.deadline < next) next = pending.deadline;
    }
    if (next < Infinity && next < this.#armedFor) this.#arm(next);
  };

  /** Forgets request `id` and removes its listener; its entry, or undefined when no longer pending. */
  #settle(id: number): Pending | undefined {
    const pending = this.#pending.get(id);
    if (pending === undefined) return undefined;
    this.#pending.delete(id);
    pending.forget();
    return pending;
  }

  /**
   * Forgets request `id` as answered. The abort listener on a `LazySignal` (the stdio direct
   * path's calls) goes at once: that is a field. One on an `AbortSignal` is removed later, with
   * those of the other calls answered meanwhile ({@link SWEEP_AFTER_MS}): done at once it was
   * ~5 µs of the answer's path, and done right after the answer it still slowed the host's next
   * request; kept until the sweep, each answered request and its result outlived a few hundred
   * calls, which cost the cold path at 64 in flight (docs/performance-log.md). An abort in
   * between finds the request no longer pending.
   */
  #answered(id: number): Pending {
    const pending = this.#pending.get(id) as Pending;
    this.#pending.delete(id);
    const signal = pending.options.signal;
    if (signal === undefined || signal instanceof LazySignal) pending.forget();
    else this.#stale.push(pending);
    // The sweep also drops the deadline timer once nothing is pending.
    this.#sweepTimer ??= setTimeout(this.#sweep, SWEEP_AFTER_MS).unref();
    return pending;
  }

  /** Removes answered requests' listeners; with nothing pending, the deadline timer goes too. */
  readonly #sweep = (): void => {
    clearTimeout(this.#sweepTimer);
    this.#sweepTimer = undefined;
    const stale = this.#stale;
    this.#stale = [];
    for (const pending of stale) pending.forget();
    if (this.#pending.size === 0) this.#disarm();
  };

  /** True when `message` answers or reports progress on one of the tap's requests. */
  #take(message: JSONRPCMessage): boolean {
    if ('method' in message) {
      if (message.method !== 'notifications/progress' || 'id' in message) return false;
      return this.#progress(message.params);
    }
    const id = (message as { id?: unknown }).id;
    if (typeof id !== 'number' || id < FIRST_ID) return false;
    if (!this.#pending.has(id)) return false;
    if ('error' in message) {
      const { code, message: text, data } = message.error;
      this.#settle(id)?.reject(ProtocolError.fromError(code, text, data));
      return true;
    }
    const result: unknown = (message as { result?: unknown }).result;
    // The SDK cannot read such a response either; it reports it and the call times out (P3).
    if (!isRecord(result)) return false;
    const pending = this.#answered(id);
    if ('resultType' in result) {
      const { resultType: _dropped, ...rest } = result;
      pending.resolve(rest);
    } else pending.resolve(result);
    return true;
  }

  /** P3: progress on a pending request restarts its clock and reaches its listener. */
  #progress(params: unknown): boolean {
    if (!isRecord(params)) return false;
    const token = params['progressToken'];
    const id = typeof token === 'number' ? token : typeof token === 'string' ? Number(token) : NaN;
    const pending = this.#pending.get(id);
    if (pending === undefined || typeof params['progress'] !== 'number') return false;
    // A later deadline: the armed timer fires first and re-arms for it.
    pending.deadline = Date.now() + pending.options.timeoutMs;
    const { progressToken: _token, ...progress } = params;
    pending.options.onProgress?.(progress as Progress);
    return true;
  }

  /** The transport closed: every pending request fails, as the SDK's do. */
  #close(): void {
    this.#closed = true;
    const error = new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed');
    for (const id of [...this.#pending.keys()]) this.#settle(id)?.reject(error);
    // Nothing of a closed connection's calls waits for the sweep.
    this.#sweep();
    this.#disarm();
  }
}
