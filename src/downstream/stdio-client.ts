/**
 * The client end of stdio (C3): spawns a downstream server and speaks newline-delimited JSON-RPC
 * on its stdin/stdout (`wire/lines.ts`). It does what the SDK's `StdioClientTransport` does (the
 * same spawn through cross-spawn, the same close sequence), and differs where a gateway must:
 * - a message over the limit fails only its own request, with an error that says why; the SDK's
 *   transport dropped its buffer and closed the connection, failing every call in flight and
 *   restarting the server, and then read the rest of the line as garbage;
 * - a line is searched and decoded once, and not validated twice (docs/performance-log.md);
 * - `send` rejects when the child's stdin is gone instead of waiting for a `drain` that never comes;
 * - the child leads a process group of its own (POSIX), and every signal goes to the whole group:
 *   servers are mostly started through wrappers (`npx`, `uvx`, `docker run`, `sh -c`), and
 *   signalling only the wrapper left the real server running (P5).
 */
import type { ChildProcess } from 'node:child_process';
import { existsSync, statSync } from 'node:fs';
import { PassThrough, type Readable } from 'node:stream';
import { GATEWAY_REFUSAL_KEY } from '../core/classify.js';
import { keepInexactNumbers } from '../core/exact-json.js';
import { StreamTransport, type OversizedMessage } from '../wire/stream-transport.js';
import { signalProcessTree, spawnChild, type SpawnSpec } from './spawn.js';

/** N13: a line with every number a double cannot carry turned into a string of its digits. */
const exactLine = (line: string): string | undefined => keepInexactNumbers(line)?.text;

/** How long close() waits for the child after ending its stdin, and again after SIGTERM. */
const CLOSE_STEP_MS = 2000;

/** What to spawn, and the limit on one message from it. */
export interface StdioClientOptions extends SpawnSpec {
  /** The longest line read from the child (config `max_message_bytes`). */
  readonly maxMessageBytes: number;
  /**
   * P1: a child of this spec the head start spawned already (running, its `spawn` event seen):
   * start() takes it over instead of spawning. What it wrote meanwhile waits in its pipes.
   */
  readonly child?: ChildProcess;
}

/**
 * A downstream server over stdio. The child is spawned synchronously inside `start()` (the SDK
 * `Client.connect()` calls it before its first await), so {@link StdioClientTransport.pid} is
 * known while `initialize` is still pending.
 *
 * @example
 * const transport = new StdioClientTransport({ command: 'node', args: ['server.js'], env: {}, maxMessageBytes: 1 << 20 });
 * await client.connect(transport);
 */
/** How much of a child's stderr is kept for {@link StdioClientTransport.exitReport}. */
const STDERR_TAIL_CHARS = 4096;
/** Lines of stderr an exit report shows. */
export const EXIT_REPORT_LINES = 5;
/** A longer stderr line is cut in an exit report. */
const EXIT_REPORT_LINE_CHARS = 300;

/** A stack frame, a caret under a source line, or the runtime's version: no words of the server's. */
const NOISE = /^\s+at\s|^\s*\^+\s*$|^Node\.js v\d/;

/** The line that says what went wrong (`Error: Cannot find module ...`, `fatal: ...`). */
const MESSAGE = /^\s*(?:[\w.]*(?:Error|Exception)|error|fatal|panic)\b[^:]*:/i;

/**
 * The last lines a server wrote to stderr, as an exit report shows them (P6): its stack frames
 * left out, and the line saying what went wrong kept even when more lines followed it (a wrong
 * script path left `Cannot find module` behind five lines of stack).
 * @example lastWords('Error: Cannot find module \'/x.js\'\n    at Module._resolveFilename (...)\nNode.js v20.1.0') // ["Error: Cannot find module '/x.js'"]
 */
export function lastWords(stderr: string): string[] {
  const lines = stderr
    .split(/\r?\n/)
    .map((line) => line.trimEnd())
    .filter((line) => line.trim() !== '' && !NOISE.test(line));
  let tail = lines.slice(-EXIT_REPORT_LINES);
  const message = lines.findLast((line) => MESSAGE.test(line));
  if (message !== undefined && !tail.includes(message))
    tail = [message, ...tail.slice(1 - EXIT_REPORT_LINES)];
  return tail.map((line) =>
    line.length > EXIT_REPORT_LINE_CHARS ? `${line.slice(0, EXIT_REPORT_LINE_CHARS)}…` : line,
  );
}

/** How a stdio server's process ended (P4, U3). */
export interface ExitReport {
  readonly code: number | null;
  readonly signal: NodeJS.Signals | null;
  /** Its last non-empty stderr lines, oldest first (not yet scrubbed). */
  readonly stderr: readonly string[];
}

/**
 * One line for `lastError`: `error`, how the process ended and its last stderr lines (scrubbed
 * with `scrub`, L2).
 * @example withExit('Connection closed', { code: 3, signal: null, stderr: ['fatal: no API key'] }) // 'Connection closed: the process exited with code 3; its stderr ended with: fatal: no API key'
 */
export function withExit(error: string, report: ExitReport, scrub?: (text: string) => string): string {
  const how =
    report.signal !== null ? `was killed by ${report.signal}` : `exited with code ${String(report.code)}`;
  const tail = report.stderr.map((line) => (scrub === undefined ? line : scrub(line))).join(' | ');
  return `${error}: the process ${how}${tail === '' ? ' (nothing on stderr)' : `; its stderr ended with: ${tail}`}`;
}

/**
 * A failed spawn, said plainly. Node reports a missing working directory as `spawn <command>
 * ENOENT`, blaming a command that exists; both cases are told apart here.
 */
function spawnError(error: Error, options: StdioClientOptions): Error {
  if ((error as { code?: unknown }).code !== 'ENOENT') return error;
  const { cwd, command } = options;
  if (cwd !== undefined && !(existsSync(cwd) && statSync(cwd).isDirectory())) {
    return new Error(
      `cannot start "${command}": its working directory (cwd) ${cwd} does not exist or is not a folder`,
      {
        cause: error,
      },
    );
  }
  return new Error(
    `cannot start "${command}": no such file, and no such command on the PATH (install it, or give its absolute path)`,
    { cause: error },
  );
}

/**
 * A line of a child's stdout that was skipped (not a JSON-RPC message, or over the limit): the
 * server's noise, reported by `onerror` and logged as one line without a stack (P6, L1).
 */
export class SkippedLine extends Error {
  override readonly name = 'SkippedLine';
}

export class StdioClientTransport extends StreamTransport {
  readonly #options: StdioClientOptions;
  /** Handed out before start(), so that no early line of the child's stderr is lost. */
  readonly #stderr = new PassThrough();
  #child: ChildProcess | undefined;
  #started = false;
  /** How the child ended, once it did. */
  #exit: { code: number | null; signal: NodeJS.Signals | null } | undefined;
  /** The child's pid from its spawn on (kept after close(), which forgets the child). */
  #spawnedPid: number | undefined;
  /** P6: why the last line of its stdout that was no JSON-RPC message was skipped, with its excerpt. */
  #noise: string | undefined;

  /** P6: the last line of the child's stdout that was no JSON-RPC message (why, and its excerpt). */
  get stdoutNoise(): string | undefined {
    return this.#noise;
  }

  /** Resolves when the child exits (kept after close(), which forgets the child). */
  #exited: Promise<void> | undefined;
  /** The end of what the child wrote to stderr, for {@link StdioClientTransport.exitReport}. */
  #stderrTail = '';

  constructor(options: StdioClientOptions) {
    // N13: a number a double cannot carry keeps its digits, as a string, before anything parses it.
    super(options.maxMessageBytes, exactLine);
    this.#options = options;
  }

  /** The child's stderr, readable from construction on. */
  get stderr(): Readable {
    return this.#stderr;
  }

  /**
   * How the child ended and its last stderr lines (at most {@link EXIT_REPORT_LINES}, each cut
   * to {@link EXIT_REPORT_LINE_CHARS} characters), once it exited; `undefined` while it runs.
   * What a crash at start leaves to go on: "fatal: no API key", a traceback's last line.
   */
  exitReport(): ExitReport | undefined {
    if (this.#exit === undefined) return undefined;
    return { ...this.#exit, stderr: lastWords(this.#stderrTail) };
  }

  /**
   * {@link StdioClientTransport.exitReport}, waiting up to `ms` for the child to exit: a failed
   * write (EPIPE) or a closed pipe is often seen a moment before the process's exit.
   */
  async exitReportWithin(ms: number): Promise<ExitReport | undefined> {
    if (this.#exit === undefined && this.#exited !== undefined) {
      let timer: NodeJS.Timeout | undefined;
      // Not unref'd: a one-shot command waiting here has nothing else keeping it alive.
      const timeout = new Promise<void>((resolve) => {
        timer = setTimeout(resolve, ms);
      });
      await Promise.race([this.#exited, timeout]);
      clearTimeout(timer);
    }
    return this.exitReport();
  }

  /** True from the spawn until the child has exited. */
  get running(): boolean {
    return this.#spawnedPid !== undefined && this.#exit === undefined;
  }

  /**
   * P5, last resort: SIGKILL the child's whole process group now, if it has not exited, even
   * while a {@link StdioClientTransport.close} is still waiting on it.
   */
  killNow(): void {
    if (this.running && this.#spawnedPid !== undefined) signalProcessTree(this.#spawnedPid, 'SIGKILL');
  }

  /** The child's process id while it runs; null before start() and after it exited. */
  get pid(): number | null {
    return this.#child?.pid ?? null;
  }

  start(): Promise<void> {
    if (this.#started) return Promise.reject(new Error('stdio transport already started'));
    this.#started = true;
    return new Promise((resolve, reject) => {
      const adopted = this.#options.child;
      const child = adopted ?? spawnChild(this.#options);
      this.#child = child;
      // 'exit' never comes for a child that failed to spawn (a missing command or cwd): 'close'
      // and 'error' end the wait too.
      this.#exited = new Promise((resolve) => {
        child.once('exit', () => resolve());
        child.once('close', () => resolve());
        child.once('error', () => resolve());
      });
      this.#spawnedPid = child.pid;
      let spawned = adopted !== undefined;
      child.on('error', (error) => {
        if (!spawned) reject(spawnError(error, this.#options));
        this.onerror?.(error);
      });
      if (spawned) resolve();
      else
        child.on('spawn', () => {
          spawned = true;
          resolve();
        });
      child.on('exit', (code, signal) => {
        this.#exit = { code, signal };
        // A wrapper that exits first (`sh -c`, `npx`) must not leave what it started behind; the
        // rest of the group gets the same end (and the pipes it holds close, so 'close' comes).
        if (child.pid !== undefined) signalProcessTree(child.pid, 'SIGTERM');
      });
      child.on('close', () => {
        if (this.#child === child) this.#child = undefined;
        this.markClosed();
      });
      child.stderr?.pipe(this.#stderr);
      // Read beside the pipe, synchronously: every chunk is seen before the child's 'close'.
      child.stderr?.on('data', (chunk: Buffer) => {
        this.#stderrTail = (this.#stderrTail + chunk.toString('utf8')).slice(-STDERR_TAIL_CHARS);
      });
      if (child.stdout && child.stdin) this.attach(child.stdout, child.stdin);
    });
  }

  /**
   * Ends the child's stdin (the MCP stdio shutdown), then SIGTERM after 2 s, then SIGKILL after
   * 2 s more: the SDK transport's sequence, each signal to the child's whole process group (P5).
   * Resolves once the child is gone or killed.
   */
  async close(): Promise<void> {
    const child = this.#child;
    this.#child = undefined;
    if (child !== undefined && child.exitCode === null && child.signalCode === null) {
      const gone = new Promise<void>((resolve) => child.once('close', () => resolve()));
      const within = (ms: number): Promise<void> =>
        Promise.race([gone, new Promise<void>((resolve) => setTimeout(resolve, ms).unref())]);
      try {
        child.stdin?.end();
      } catch {
        // Already closed: the signals below still apply.
      }
      await within(CLOSE_STEP_MS);
      const pid = child.pid;
      if (pid !== undefined && child.exitCode === null && child.signalCode === null) {
        signalProcessTree(pid, 'SIGTERM');
        await within(CLOSE_STEP_MS);
      }
      // SIGKILL whatever is left of the group, the child itself or what a wrapper started that
      // outlived it (a no-op when the group is empty).
      if (pid !== undefined) signalProcessTree(pid, 'SIGKILL');
    }
    this.markClosed();
  }

  /**
   * The answer was too long to read: its request gets an error answer in the downstream's place,
   * so it fails now with a reason instead of at its timeout. The answer is marked with
   * `GATEWAY_REFUSAL_KEY`, so that `classifyError` does not report its JSON-RPC code (-32603,
   * internal error) as the downstream's own.
   */
  protected oversized({ bytes, limit, id, kind }: OversizedMessage): void {
    const message = `a message of ${bytes} bytes, over the limit of ${limit} bytes for one message (max_message_bytes)`;
    this.onerror?.(new SkippedLine(`skipped ${message}${id === undefined ? '' : ` (id ${id})`}`));
    // Only an answer to one of our requests is answered in the server's place: the id of a
    // request or notification from the server would name none of ours.
    if (id === undefined || kind !== 'response') return;
    this.onmessage?.({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32603,
        message: `The server answered with ${message}`,
        data: { [GATEWAY_REFUSAL_KEY]: 'message_too_large', bytes, limit },
      },
    });
  }

  /**
   * A malformed answer to one of our requests (a result that is no object, a bad `_meta`, an
   * unknown member, an error without a code...) would be dropped by the SDK, and its call would
   * wait for its timeout: it is answered in the server's place at once instead, with what was
   * wrong (marked like an oversized answer, so the code is not reported as the server's).
   */
  protected unparsable(error: string, id?: string | number, response?: boolean): void {
    this.#noise = error;
    this.onerror?.(new SkippedLine(`skipped a line on its stdout that is no JSON-RPC message: ${error}`));
    if (id === undefined || response !== true) return;
    this.onmessage?.({
      jsonrpc: '2.0',
      id,
      error: {
        code: -32603,
        message: `The server sent a malformed answer: ${error}`,
        data: { [GATEWAY_REFUSAL_KEY]: 'malformed_response' },
      },
    });
  }
}
