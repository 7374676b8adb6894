/**
 * The one logger: pino on stderr (L1), with argument redaction and secret scrubbing (L2).
 *
 * stdout belongs to the MCP stdio transport, so the default destination is file descriptor 2.
 * Two independent guards keep secrets out of the log:
 * - `redact` paths blank configured argument keys (`password`, `token`, ...) under `args`, the
 *   field where call-log.ts puts a call's arguments (L1);
 * - a `streamWrite` hook replaces every interpolated env value (L2) in the FINAL line, so a
 *   secret is caught wherever it hides: a message, a nested object, an error's message or stack.
 */
import pino, { type DestinationStream, type Logger } from 'pino';
import { REDACTED, secretScrubber } from '../core/secrets.js';
import { nonBlockingFd, StderrSink } from './stderr-sink.js';
import type { LogLevel } from '../config/types.js';

export type { Logger } from 'pino';

/** Options of {@link createLogger}. */
export interface LoggerOptions {
  /**
   * Lowest level written; `silent` writes nothing.
   * @default 'info'
   */
  readonly level?: LogLevel | 'silent';
  /**
   * Where lines go. Tests inject a Writable that collects them.
   * @default {@link stderrDestination} (stderr, written without blocking)
   */
  readonly destination?: DestinationStream;
  /**
   * Argument keys whose values are redacted in call logs (L1), matched at `args.<key>` up to
   * three levels deep, in the spellings `key`, `KEY`, `Key`, and camelCase of snake_case.
   * @example ['password', 'api_key']
   */
  readonly redactKeys?: readonly string[];
  /**
   * Values interpolated from the environment (Config.secrets): never written (L2). Values shorter
   * than MIN_SECRET_LENGTH (4) are skipped: replacing every "1" or "on" in every line would make
   * the log unreadable while protecting nothing.
   */
  readonly secrets?: readonly string[];
}

/**
 * Log lines buffered while stderr cannot take them, at most (a host that never reads the
 * gateway's stderr): beyond this, lines are dropped, never the gateway's time or memory.
 */
export const STDERR_BACKLOG_BYTES = 16 * 1024 * 1024;

let stderr: StderrSink | undefined;

/**
 * L1: the process's one stderr destination ({@link StderrSink}): written without blocking, on a
 * non-blocking description of the pipe. A synchronous write to a pipe its reader has not drained
 * fails with EAGAIN, and pino's own writer then slept 100 ms with the whole event loop (the chaos
 * bench: 8–16 answers of 20,000 over 100 ms late). Lines still waiting when the process exits
 * are flushed on `exit`, bounded: a reader that is gone (EPIPE) or never reads cannot keep the
 * process alive (P5).
 */
export function stderrDestination(): DestinationStream {
  if (stderr === undefined) {
    const sink = new StderrSink({ fd: nonBlockingFd(2), maxBytes: STDERR_BACKLOG_BYTES });
    process.once('exit', () => sink.flushSync());
    stderr = sink;
  }
  return stderr;
}

/** How deep below `args` a configured key is still redacted (args.k, args.*.k, args.*.*.k). */
const REDACT_DEPTH = 3;

const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

function spellings(key: string): string[] {
  const camel = key.toLowerCase().replace(/[_-]([a-z0-9])/g, (_m, c: string) => c.toUpperCase());
  const capitalized = key.charAt(0).toUpperCase() + key.slice(1).toLowerCase();
  return [...new Set([key, key.toLowerCase(), key.toUpperCase(), capitalized, camel])];
}

/**
 * pino redact paths for `keys` under `args` (L1): every spelling at every depth up to
 * {@link REDACT_DEPTH}. Wildcards also cross array indices (`args.items[0].password`).
 * @example redactPaths(['token']) // ['args.token', 'args.*.token', 'args.*.*.token', 'args.TOKEN', ...]
 */
export function redactPaths(keys: readonly string[]): string[] {
  const paths: string[] = [];
  for (const key of keys) {
    for (const spelling of spellings(key)) {
      const leaf = IDENTIFIER.test(spelling) ? `.${spelling}` : `[${JSON.stringify(spelling)}]`;
      for (let depth = 0; depth < REDACT_DEPTH; depth++) paths.push(`args${'.*'.repeat(depth)}${leaf}`);
    }
  }
  return [...new Set(paths)];
}

/**
 * The application logger (L1, L2).
 * @example const logger = createLogger({ level: config.logLevel, redactKeys: config.redactKeys, secrets: config.logSecrets });
 */
export function createLogger(options: LoggerOptions = {}): Logger {
  const scrub = secretScrubber(options.secrets ?? []);
  return pino(
    {
      level: options.level ?? 'info',
      // hostname is noise on a local stderr; pid tells two instances apart.
      base: { pid: process.pid },
      timestamp: pino.stdTimeFunctions.isoTime,
      redact: { paths: redactPaths(options.redactKeys ?? []), censor: REDACTED },
      serializers: { err: serializeError },
      ...(scrub === undefined ? {} : { hooks: { streamWrite: scrub } }),
    },
    options.destination ?? stderrDestination(),
  );
}

/** Error codes of a peer that went away: what happened is the whole story, not where. */
const GONE = new Set(['EPIPE', 'ECONNRESET', 'ERR_STREAM_DESTROYED', 'ERR_STREAM_WRITE_AFTER_END']);

/**
 * L1: an error on a log line. An abort (a DOMException, whose serialization held its whole table
 * of legacy constants) and a peer that went away (EPIPE and kin) are expected and read as their
 * name and message; anything else with its stack, as pino writes it.
 */
export function serializeError(error: unknown): unknown {
  if (typeof DOMException !== 'undefined' && error instanceof DOMException)
    return { type: 'DOMException', name: error.name, message: error.message };
  const code = (error as { code?: unknown } | null)?.code;
  if (error instanceof Error && typeof code === 'string' && GONE.has(code))
    return { type: error.name, code, message: error.message };
  return pino.stdSerializers.err(error as Error);
}

/** The child logger of one downstream server: every line carries `server` (P6). */
export function serverLogger(logger: Logger, name: string): Logger {
  return logger.child({ server: name });
}
