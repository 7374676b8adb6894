/**
 * The stdio front (CONTRACT E1, P1): a host that spawns the gateway is answered its opening
 * message within tens of milliseconds, before the SDK, the config and the downstream servers
 * have loaded. Claude Code waits about 2.6 s for the answer to its `server/discover` probe and
 * then falls back to the 2025 protocol; loading the gateway takes longer than that on a busy
 * machine, and it takes most of a second on an idle one.
 *
 * The front holds stdin from the first byte. When the first line is a well-formed opening
 * (`server/discover` with the 2026-07-28 envelope, or a plain 2025 `initialize`), it answers it
 * at once from capabilities.ts, exactly as the server will; anything else waits. After a 2025
 * opening it also answers each plain `ping` (`{}`), which hosts send right after the handshake
 * (Gemini CLI's `mcp list` waits for its answer). When the server is up, it takes the input from
 * the front's {@link StdioFront.input}: every byte again, the opening and the pings included, so
 * that the SDK sees the connection from its start, pins its era and counts every request as
 * usual; its own answers to what the front answered are dropped ({@link StdioFront.answered}).
 * The front never answers what it cannot answer exactly: anything it does not recognise is left
 * to the server.
 */
import { PassThrough, type Readable, type Writable } from 'node:stream';
import type { StdioFront } from '../upstream/stdio.js';
import {
  LEGACY_PROTOCOL_VERSIONS,
  LIST_HINT,
  MODERN_PROTOCOL_VERSION,
  gatewayCapabilities,
} from '../upstream/capabilities.js';
import { LineSplitter, type LineSink } from '../wire/lines.js';
import { PACKAGE_NAME, packageVersion } from './version.js';

export type { StdioFront };

/** The longest line the front reads (the opening, a ping); a longer one waits for the server. */
const MAX_LINE_BYTES = 64 * 1024;
/** Input held before the server takes it; past this, stdin is paused (the host waits). */
const MAX_HELD_BYTES = 16 * 1024 * 1024;

const META = {
  protocolVersion: 'io.modelcontextprotocol/protocolVersion',
  clientInfo: 'io.modelcontextprotocol/clientInfo',
  clientCapabilities: 'io.modelcontextprotocol/clientCapabilities',
  serverInfo: 'io.modelcontextprotocol/serverInfo',
} as const;

type Json = Record<string, unknown>;

function isObject(value: unknown): value is Json {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

const optional = (value: unknown, test: (value: unknown) => boolean): boolean =>
  value === undefined || test(value);
const isString = (value: unknown): boolean => typeof value === 'string';

/** An icon as the SDK's `IconSchema` reads it. */
function isIcon(value: unknown): boolean {
  if (!isObject(value) || typeof value['src'] !== 'string') return false;
  return (
    optional(value['mimeType'], isString) &&
    optional(value['sizes'], (sizes) => Array.isArray(sizes) && sizes.every(isString)) &&
    optional(value['theme'], (theme) => theme === 'light' || theme === 'dark')
  );
}

/** An `Implementation` as the SDK's schema reads it (other fields are dropped, not refused). */
function isClientInfo(value: unknown): boolean {
  if (!isObject(value) || typeof value['name'] !== 'string' || typeof value['version'] !== 'string')
    return false;
  return (
    optional(value['title'], isString) &&
    optional(value['description'], isString) &&
    optional(value['websiteUrl'], isString) &&
    optional(value['icons'], (icons) => Array.isArray(icons) && icons.every(isIcon))
  );
}

/** Capabilities whose every entry is an object, as every capability of the schema is. */
function isCapabilities(value: unknown): boolean {
  return isObject(value) && Object.values(value).every(isObject);
}

/**
 * The answer to `message` that the server would give, when `message` is an opening the front
 * answers; undefined for anything else.
 */
export function openingAnswer(
  message: unknown,
  serverInfo: { name: string; version: string },
): Json | undefined {
  if (!isObject(message) || message['jsonrpc'] !== '2.0') return undefined;
  const id = message['id'];
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  const params = message['params'];
  if (!isObject(params)) return undefined;
  const meta = params['_meta'];
  if (message['method'] === 'server/discover') {
    if (!isObject(meta) || meta[META.protocolVersion] !== MODERN_PROTOCOL_VERSION) return undefined;
    if (!isClientInfo(meta[META.clientInfo]) || !isCapabilities(meta[META.clientCapabilities]))
      return undefined;
    if (Object.keys(params).length !== 1) return undefined;
    const result = {
      supportedVersions: [MODERN_PROTOCOL_VERSION],
      capabilities: gatewayCapabilities('modern'),
      resultType: 'complete',
      ...LIST_HINT,
      _meta: { [META.serverInfo]: serverInfo },
    };
    return { jsonrpc: '2.0', id, result };
  }
  if (message['method'] === 'initialize') {
    // A 2025 opening only: one with the 2026 envelope is the modern era's, and the server's.
    if (meta !== undefined) return undefined;
    const requested = params['protocolVersion'];
    if (typeof requested !== 'string' || !isCapabilities(params['capabilities'])) return undefined;
    if (!isClientInfo(params['clientInfo']) || Object.keys(params).length !== 3) return undefined;
    const protocolVersion = LEGACY_PROTOCOL_VERSIONS.includes(requested)
      ? requested
      : LEGACY_PROTOCOL_VERSIONS[0];
    const result = { protocolVersion, capabilities: gatewayCapabilities('legacy'), serverInfo };
    return { jsonrpc: '2.0', id, result };
  }
  return undefined;
}

/**
 * The id of `message` when it is a 2025 `ping` the front answers (no params, or empty ones; the
 * server answers `{}` to it in every 2025 revision); undefined for anything else.
 */
export function pingId(message: unknown): string | number | undefined {
  if (!isObject(message) || message['jsonrpc'] !== '2.0' || message['method'] !== 'ping') return undefined;
  const id = message['id'];
  if (!(typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id)))) return undefined;
  const params = message['params'];
  if (params !== undefined && !(isObject(params) && Object.keys(params).length === 0)) return undefined;
  const known = ['jsonrpc', 'id', 'method', 'params'];
  return Object.keys(message).every((key) => known.includes(key)) ? id : undefined;
}

/** A line of input as JSON, or undefined when it is not JSON. */
function parsed(line: string): unknown {
  try {
    return JSON.parse(line);
  } catch {
    return undefined;
  }
}

/** A first line the server reads as nothing (wire/lines.ts): empty, or a lone `\r`. */
const isBlank = (line: Buffer): boolean => line.length === 0 || (line.length === 1 && line[0] === 0x0d);

/** A JSON-RPC notification: nothing waits for its answer. */
const isNotification = (message: unknown): boolean =>
  isObject(message) && typeof message['method'] === 'string' && !('id' in message);

const immediate = (): Promise<void> => new Promise((resolve) => setImmediate(resolve));

/**
 * One turn of the event loop: input that is ready (the front's stdin) is read before it resolves.
 * Two immediates: one queued while the loop runs a poll callback (a file read's completion, as
 * when a step ends) runs before the loop polls again; the second runs after it has.
 */
export async function turn(): Promise<void> {
  await immediate();
  await immediate();
}

/**
 * P1: runs `steps` (dynamic imports, in the order their graphs build on one another) with a turn
 * of the event loop before each, until the front has seen the opening; then returns, and the
 * caller loads the rest in one go. Node 22 and later load and evaluate a dynamic import's whole
 * graph without turning the event loop (`serve`'s takes ~0.55 s on a small machine), so the front
 * could read stdin only after it; Node 20 turned it between files. A host that wrote its opening
 * before the gateway started is answered in the first turn; one that writes it later, within a
 * step (the longest ~0.14 s) of it.
 * @example await loadInTurns([() => import('./a.js'), () => import('./b.js')], front);
 */
export async function loadInTurns(
  steps: readonly (() => Promise<unknown>)[],
  front: Pick<StdioFront, 'openingSeen'>,
): Promise<void> {
  for (const step of steps) {
    await turn();
    if (front.openingSeen) return;
    await step();
  }
}

/**
 * Starts holding `stdin` and answers a recognised opening on `stdout`.
 * @example const front = openStdioFront(); ...; await proxy.serveStdio({ front });
 */
export function openStdioFront(
  stdin: Readable = process.stdin,
  stdout: Writable = process.stdout,
  serverInfo = { name: PACKAGE_NAME, version: packageVersion() },
): StdioFront {
  const held: Buffer[] = [];
  let heldBytes = 0;
  let looked = false;
  let ended = false;
  let taken = false;
  let openingId: string | number | undefined;
  let answeredAtMs: number | undefined;
  /** After a 2025 opening the front answered: pings are answered too. */
  let answersPings = false;
  /** The ids of the pings the front answered, each as often as it did. */
  const pings = new Map<string | number, number>();
  /** Something held waits for the server: a request not answered here, or a line it cannot read. */
  let waiting = false;
  /** Once the opening was looked at: splits the input after it; undefined once nothing is to learn. */
  let lines: LineSplitter | undefined;
  let hostHasLeft = false;
  let left: () => void = () => undefined;
  const hostLeft = new Promise<void>((resolve) => (left = resolve));

  const write = (answer: Json): void => {
    stdout.write(`${JSON.stringify(answer)}\n`, () => undefined);
  };
  /** Each whole line after the opening (empty ones are skipped, as the server skips them). */
  const sink: LineSink = {
    line(text) {
      const message = parsed(text);
      const id = answersPings ? pingId(message) : undefined;
      if (id !== undefined) {
        pings.set(id, (pings.get(id) ?? 0) + 1);
        write({ jsonrpc: '2.0', id, result: {} });
      } else if (!isNotification(message)) waiting = true;
    },
    oversized() {
      waiting = true;
    },
  };
  const readLines = (chunk: Buffer): void => {
    lines?.push(chunk, sink);
    // Nothing more to learn: no ping to answer, and the server has work anyway.
    if (waiting && !answersPings) lines = undefined;
    // A line too long to read ends the reading: the rest waits for the server.
    else if (lines !== undefined && lines.pendingBytes > MAX_LINE_BYTES) {
      waiting = true;
      lines = undefined;
    }
  };
  const lookAtOpening = (): void => {
    const joined = Buffer.concat(held);
    const end = joined.indexOf(0x0a);
    if (end < 0 && joined.length < MAX_LINE_BYTES && !ended) return;
    looked = true;
    if (end < 0 || end > MAX_LINE_BYTES) {
      waiting = joined.length > 0;
      return;
    }
    const line = joined.subarray(0, end);
    const message = parsed(line.toString('utf8'));
    const answer = openingAnswer(message, serverInfo);
    if (answer !== undefined) {
      openingId = answer['id'] as string | number;
      answeredAtMs = performance.now();
      write(answer);
      answersPings = (message as Json)['method'] === 'initialize';
    } else if (!isBlank(line) && !isNotification(message)) waiting = true;
    lines = new LineSplitter(MAX_LINE_BYTES);
    readLines(joined.subarray(end + 1));
  };
  const onData = (chunk: Buffer): void => {
    held.push(chunk);
    heldBytes += chunk.length;
    if (!looked) lookAtOpening();
    else readLines(chunk);
    if (heldBytes > MAX_HELD_BYTES) stdin.pause();
  };
  const onEnd = (): void => {
    ended = true;
    if (!looked) lookAtOpening();
    // P5: the host is gone; an unfinished last line counts as something the server must see.
    if (lines !== undefined && lines.pendingBytes > 0) waiting = true;
    if (waiting || taken) return;
    hostHasLeft = true;
    left();
  };
  // A write error before the server takes over means the host is gone; its end of stdin says so.
  const onWriteError = (): void => undefined;
  stdin.on('data', onData);
  stdin.once('end', onEnd);
  stdout.on('error', onWriteError);

  return {
    get answeredAtMs() {
      return answeredAtMs;
    },
    get openingSeen() {
      return looked;
    },
    hostLeft,
    get hostHasLeft() {
      return hostHasLeft;
    },
    input(): Readable {
      if (taken) throw new Error('the stdio front was already taken over');
      taken = true;
      stdin.off('data', onData);
      stdin.off('end', onEnd);
      stdout.off('error', onWriteError);
      const input = new PassThrough();
      for (const chunk of held.splice(0)) input.write(chunk);
      if (ended) input.end();
      else stdin.pipe(input);
      // P5: stdin closed without an end (the host went away) ends the copy too, after what it holds.
      stdin.once('close', () => {
        if (!input.writableEnded) input.end();
      });
      return input;
    },
    answered(id: string | number, result: unknown): boolean {
      if (openingId !== undefined && id === openingId) {
        openingId = undefined;
        return true;
      }
      // A ping's answer is `{}`: any answer that is not (a request that reused the id) is sent.
      const count = pings.get(id);
      if (count === undefined || !isObject(result) || Object.keys(result).length > 0) return false;
      if (count === 1) pings.delete(id);
      else pings.set(id, count - 1);
      return true;
    },
  };
}
