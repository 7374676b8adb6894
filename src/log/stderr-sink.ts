/**
 * The process's stderr as the log's destination (L1): a write never waits, never blocks the event
 * loop, and never keeps the process from exiting.
 *
 * Why not pino's own `pino.destination` (sonic-boom): its `flushSync`, which pino and we both run
 * on `exit`, retries every failed write every 100 ms for ever unless the error is EAGAIN. A host
 * that closes its end of our stderr and then our stdin (Gemini CLI's `mcp list` did, 3 runs in
 * 7) left a line in flight at exit: the write failed with EPIPE, the flush slept and retried, and
 * the gateway and every downstream child stayed alive.
 *
 * The rules here:
 * - lines queue in memory and go out in one `fs.write` at a time (the kernel's pipe buffer does
 *   the rest); up to {@link SinkOptions.maxBytes} wait, more are dropped and counted;
 * - a full pipe (EAGAIN) is tried again after a pause, without blocking anything;
 * - any other write error (EPIPE: nobody reads; EBADF: closed) ends the sink: every later line is
 *   dropped at once;
 * - {@link StderrSink.flushSync} at exit writes what waits, gives up on the first error that is
 *   not EAGAIN, and stops at a deadline in any case.
 */
import * as fs from 'node:fs';

/** The part of `node:fs` the sink uses; tests pass a fake one. */
export interface SinkFs {
  write(
    fd: number,
    buffer: Uint8Array,
    offset: number,
    length: number,
    position: null,
    callback: (error: NodeJS.ErrnoException | null, written: number) => void,
  ): void;
  writeSync(fd: number, buffer: Uint8Array, offset: number, length: number): number;
}

/** Options of {@link StderrSink}. */
export interface SinkOptions {
  /** @default 2 */
  readonly fd?: number;
  /** Bytes that may wait for the pipe; beyond this, lines are dropped. @default 16 MiB */
  readonly maxBytes?: number;
  /** How long {@link StderrSink.flushSync} may take at most. @default 1000 */
  readonly flushDeadlineMs?: number;
  /** Pause before a write that found the pipe full is tried again. @default 50 */
  readonly retryMs?: number;
  /** @default node:fs */
  readonly fs?: SinkFs;
}

/** Sleeps the thread for `ms` without spinning (only at exit, where nothing else runs). */
function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

/** The log's stderr: `write` for pino, `flushSync` for the exit. */
export class StderrSink {
  readonly #fd: number;
  readonly #maxBytes: number;
  readonly #flushDeadlineMs: number;
  readonly #retryMs: number;
  readonly #fs: SinkFs;
  /** Lines not yet handed to a write. */
  #queue: string[] = [];
  #queuedBytes = 0;
  /** The bytes of the write in flight, or waiting to be tried again (the pipe was full). */
  #writing: Buffer | undefined;
  /** True while `#writing` is with the kernel (a thread of libuv's pool). */
  #inFlight = false;
  #broken: string | undefined;
  #dropped = 0;

  constructor(options: SinkOptions = {}) {
    this.#fd = options.fd ?? 2;
    this.#maxBytes = options.maxBytes ?? 16 * 1024 * 1024;
    this.#flushDeadlineMs = options.flushDeadlineMs ?? 1000;
    this.#retryMs = options.retryMs ?? 50;
    this.#fs = options.fs ?? fs;
  }

  /** Lines dropped so far: the backlog was full, or stderr is gone. */
  get dropped(): number {
    return this.#dropped;
  }

  /** Why the sink stopped writing (`EPIPE`, ...), once it did. */
  get broken(): string | undefined {
    return this.#broken;
  }

  /** Queues one line; never throws, never waits. */
  write(line: string): boolean {
    if (this.#broken !== undefined || this.#queuedBytes + line.length > this.#maxBytes) {
      this.#dropped++;
      return true;
    }
    this.#queue.push(line);
    this.#queuedBytes += line.length;
    if (this.#writing === undefined) this.#next();
    return true;
  }

  #take(): Buffer | undefined {
    if (this.#queue.length === 0) return undefined;
    const chunk = Buffer.from(this.#queue.length === 1 ? this.#queue[0]! : this.#queue.join(''), 'utf8');
    this.#queue = [];
    this.#queuedBytes = 0;
    return chunk;
  }

  #next(): void {
    this.#writing ??= this.#take();
    const chunk = this.#writing;
    if (chunk === undefined) return;
    this.#inFlight = true;
    this.#fs.write(this.#fd, chunk, 0, chunk.length, null, (error, written) => {
      this.#inFlight = false;
      if (this.#writing !== chunk) return; // flushSync took over at exit
      if (error !== null) {
        if (error.code === 'EAGAIN') {
          setTimeout(() => this.#next(), this.#retryMs).unref();
          return;
        }
        this.#break(error);
        return;
      }
      this.#writing = written >= chunk.length ? undefined : chunk.subarray(written);
      this.#next();
    });
  }

  #break(error: NodeJS.ErrnoException): void {
    this.#broken = error.code ?? error.message;
    this.#dropped += this.#queue.length + (this.#writing === undefined ? 0 : 1);
    this.#queue = [];
    this.#queuedBytes = 0;
    this.#writing = undefined;
  }

  /**
   * Writes what waits, synchronously (the process is exiting). Bounded: the first error that is
   * not EAGAIN ends it, and so does the deadline; never throws.
   */
  flushSync(): void {
    const deadline = Date.now() + this.#flushDeadlineMs;
    // A write the kernel has (its callback will never run now) is left to it: its bytes have
    // most likely gone out, and sending them again would repeat lines. One waiting to be tried
    // again goes first.
    const waiting = this.#inFlight ? undefined : this.#writing;
    const rest = this.#take();
    let chunk: Buffer | undefined =
      waiting === undefined ? rest : rest === undefined ? waiting : Buffer.concat([waiting, rest]);
    this.#writing = undefined;
    while (chunk !== undefined && chunk.length > 0 && this.#broken === undefined) {
      try {
        const written = this.#fs.writeSync(this.#fd, chunk, 0, chunk.length);
        chunk = chunk.subarray(written);
      } catch (error) {
        const code = (error as NodeJS.ErrnoException).code;
        if (code !== 'EAGAIN' || Date.now() >= deadline) {
          this.#break(error as NodeJS.ErrnoException);
          return;
        }
        sleepSync(Math.min(10, Math.max(1, deadline - Date.now())));
      }
    }
  }
}

/**
 * `fd` itself, or (a pipe, on Linux) a second, non-blocking description of the same pipe. A
 * process's stderr pipe is often blocking (Node makes a pipe it writes with `process.stderr`
 * blocking): a write to a full one would hold a libuv thread, and a synchronous write at exit
 * would wait for a host that never reads. Reopening `/proc/self/fd/N` gives the pipe a file
 * description of our own, so `O_NONBLOCK` here changes nothing for anyone else.
 */
export function nonBlockingFd(fd: number): number {
  if (process.platform !== 'linux') return fd;
  try {
    if (!fs.fstatSync(fd).isFIFO()) return fd;
    return fs.openSync(`/proc/self/fd/${fd}`, fs.constants.O_WRONLY | fs.constants.O_NONBLOCK);
  } catch {
    return fd;
  }
}
