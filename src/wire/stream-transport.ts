/**
 * An SDK {@link Transport} over a readable and a writable byte stream, newline-delimited
 * (`lines.ts`). The stdio server (upstream, on our own stdin/stdout) and the stdio client
 * (downstream, on a child's stdout/stdin) are both this, with their own start and close.
 */
import type { Readable, Writable } from 'node:stream';
import type { Transport, JSONRPCMessage } from '@modelcontextprotocol/server';
import { LineSplitter, parseMessage, serializeMessage, type LinePeek, type LineRewrite } from './lines.js';

/** What a send that went out at once resolves with (one promise for all of them). */
const SENT: Promise<void> = Promise.resolve();

/** A line over the limit, skipped whole, with what its ends show of its id and kind. */
export interface OversizedMessage extends LinePeek {
  readonly bytes: number;
  readonly limit: number;
}

/**
 * The message pump shared by both stdio ends: reads lines from `input`, hands each parsed
 * message to `onmessage`, writes messages to `output`. What differs between the ends is who
 * answers a line that is too long or not a message ({@link StreamTransport.oversized},
 * {@link StreamTransport.unparsable}) and what starting and closing mean; the pump does not own
 * the streams' lifetimes: `detach()` stops reading.
 */
export abstract class StreamTransport implements Transport {
  onmessage?: Transport['onmessage'];
  onerror?: Transport['onerror'];
  onclose?: Transport['onclose'];
  /** Sees every message read, before `onmessage` (whoever owns that): the O1 count. */
  inbound?: (message: JSONRPCMessage) => void;

  readonly #splitter: LineSplitter;
  readonly #limit: number;
  readonly #rewrite: LineRewrite | undefined;
  #input: Readable | undefined;
  #output: Writable | undefined;
  #closed = false;
  /** The wait for `drain` that every write made while the output buffer is full shares. */
  #drained: Promise<void> | undefined;
  /** Messages of this turn held until the handler of the notification before them has run. */
  #held: JSONRPCMessage[] = [];
  #holding = false;

  /** `rewrite`: applied to each line before it is parsed (the downstream side keeps digits, N13). */
  constructor(maxMessageBytes: number, rewrite?: LineRewrite) {
    this.#limit = maxMessageBytes;
    this.#rewrite = rewrite;
    this.#splitter = new LineSplitter(maxMessageBytes);
  }

  /** The SDK's `Protocol.connect()` calls this; it must {@link StreamTransport.attach} the streams. */
  abstract start(): Promise<void>;

  /** A line over the limit was skipped whole. */
  protected abstract oversized(message: OversizedMessage): void;

  /**
   * A line that is not a JSON-RPC message was skipped; `error` says why, `id` is its id when one
   * could be read, `response` is true when it had no `method`.
   */
  protected abstract unparsable(error: string, id?: string | number, response?: boolean): void;

  /** Starts reading `input` and writing to `output`. */
  protected attach(input: Readable, output: Writable): void {
    this.#input = input;
    this.#output = output;
    input.on('data', this.#onData);
    input.on('error', this.#onError);
    output.on('error', this.#onError);
  }

  /** Stops reading and forgets any unfinished line; the streams stay open. */
  protected detach(): void {
    this.#input?.off('data', this.#onData);
    this.#input?.off('error', this.#onError);
    this.#output?.off('error', this.#onError);
    this.#splitter.clear();
  }

  /** Detaches once and reports `onclose` once. */
  protected markClosed(): void {
    if (this.#closed) return;
    this.#closed = true;
    this.detach();
    this.onclose?.();
  }

  abstract close(): Promise<void>;

  /**
   * Writes one message. Resolves once the stream took it (at once, or on `drain` when its buffer
   * is full, as the SDK's stdio transports do); rejects when the stream is gone or fails first.
   * Every write made while the buffer is full waits on one shared `drain`, so a host that stops
   * reading adds three listeners in all, not three per message (Node warns past ten).
   */
  send(message: JSONRPCMessage): Promise<void> {
    const output = this.#output;
    if (this.#closed || output === undefined || output.destroyed || output.writableEnded) {
      return Promise.reject(new Error('Not connected'));
    }
    // A turn's messages go out together, in one system call (a writev at the uncork): at 64
    // calls in flight the pipe writes were a third of the gateway's CPU, one per message. But
    // when the last turn wrote one message (a sequential call's answer), the first of this one
    // is written at once: corked, a lone answer's write went through Node's corked path at the
    // tick, and in a process's first calls the gateway stayed busy ~15 µs after it while the
    // peer it had woken waited (issue 57). A send resolves once its message went out (at once,
    // or at the uncork), so that `await send(); exit()` loses nothing.
    let flushed = this.#flushed;
    // The turn's first message: its end is scheduled.
    if (this.#turnMessages++ === 0) process.nextTick(this.#endTurn, output);
    if (flushed === undefined) {
      if (this.#turnMessages === 1 && !this.#burst) flushed = SENT;
      else {
        output.cork();
        flushed = this.#flushed = new Promise<void>((resolve) => (this.#written = resolve));
      }
    }
    if (output.write(serializeMessage(message))) return flushed;
    this.#drained ??= new Promise<void>((resolve, reject) => {
      const done = (error?: Error): void => {
        output.off('drain', onDrain);
        output.off('error', done);
        output.off('close', onClose);
        this.#drained = undefined;
        if (error) reject(error);
        else resolve();
      };
      const onDrain = (): void => done();
      const onClose = (): void => done(new Error('Not connected'));
      output.once('drain', onDrain);
      output.once('error', done);
      output.once('close', onClose);
    });
    return this.#drained;
  }

  /** Messages sent in this turn (its others are corked until its end). */
  #turnMessages = 0;
  /** The last turn sent more than one message: this turn's first is corked too. */
  #burst = false;
  /** While this turn's writes are corked (they go out together at the next tick): their end. */
  #flushed: Promise<void> | undefined;
  #written: (() => void) | undefined;
  readonly #endTurn = (output: Writable): void => {
    this.#burst = this.#turnMessages > 1;
    this.#turnMessages = 0;
    const written = this.#written;
    if (written === undefined) return;
    this.#flushed = undefined;
    this.#written = undefined;
    output.uncork();
    written();
  };

  readonly #onError = (error: Error): void => {
    this.onerror?.(error);
  };

  readonly #onData = (chunk: Buffer | string): void => {
    this.#splitter.push(typeof chunk === 'string' ? Buffer.from(chunk) : chunk, this.#sink);
  };

  /**
   * Hands one message to the SDK in the order the peer wrote it. The SDK's `Protocol` runs a
   * notification's handler in a microtask but settles a response at once, so a progress
   * notification and the result after it in one chunk would arrive the wrong way round: the call
   * is settled, its progress handler removed, and the progress dropped with an "unknown token"
   * error. After a notification, the messages after it are therefore held until a microtask
   * queued behind the notification's handler.
   */
  #deliver(message: JSONRPCMessage): void {
    if (this.#holding) this.#held.push(message);
    else this.#dispatch(message);
  }

  /** Delivers held messages in order, pausing a microtask after each notification again. */
  readonly #release = (): void => {
    this.#holding = false;
    while (this.#held.length > 0 && !this.#holding) {
      const message = this.#held.shift() as JSONRPCMessage;
      if (!this.#closed) this.#dispatch(message);
    }
  };

  #dispatch(message: JSONRPCMessage): void {
    try {
      this.inbound?.(message);
      this.onmessage?.(message);
    } catch (error) {
      // A throwing handler must not stop the lines after this one.
      this.onerror?.(error instanceof Error ? error : new Error(String(error)));
    }
    if ('method' in message && !('id' in message)) {
      this.#holding = true;
      queueMicrotask(this.#release);
    }
  }

  readonly #sink = {
    line: (text: string): void => {
      // A handler may close the transport while the rest of a chunk is still being split.
      if (this.#closed) return;
      const parsed = parseMessage(text, this.#rewrite);
      if (!parsed.ok) {
        this.unparsable(parsed.error, parsed.id, parsed.response);
        return;
      }
      this.#deliver(parsed.message);
    },
    oversized: (bytes: number, peek: LinePeek): void => {
      if (this.#closed) return;
      this.oversized({ bytes, limit: this.#limit, ...peek });
    },
  };
}
