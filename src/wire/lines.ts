/**
 * Newline-delimited JSON-RPC on a byte stream (the MCP stdio transport): the framing both our
 * stdio server (upstream) and our stdio client (downstream) speak.
 *
 * Why not the SDK's `ReadBuffer`: it concatenates the whole buffer on every chunk and searches
 * it from the start again (quadratic in the chunks of one long line: a 1 MiB result arrives as
 * 16 pipe chunks), validates every message with zod although the SDK's `Protocol` classifies it
 * with zod again right after, and on a line over its 10 MiB limit drops the buffer and throws,
 * which closes the whole connection and fails every call on it. Here each chunk is searched once,
 * a line is decoded once, and a line over the limit is skipped on its own and reported with the
 * request id it carries, so only that one request fails (docs/performance-log.md).
 */
import type { JSONRPCMessage } from '@modelcontextprotocol/server';

const NEWLINE = 0x0a;
const CARRIAGE_RETURN = 0x0d;

/** How much of an oversized line's start and end is kept to find its request id. */
const PEEK_BYTES = 512;

/** What the ends of a line too long to parse show of its message. */
export interface LinePeek {
  /** Its JSON-RPC id, when one shows where SDKs write it. */
  readonly id?: string | number;
  /** A request (`method`) or a response (`result` / `error`), when the start shows which. */
  readonly kind?: 'request' | 'response';
}

/** What {@link LineSplitter.push} found in a chunk. */
export interface LineSink {
  /** One complete line, without its `\n` (and without a `\r` before it). Never empty. */
  line(text: string): void;
  /** A line longer than the limit was skipped whole; `peek` is what its two ends show. */
  oversized(bytes: number, peek: LinePeek): void;
}

/**
 * Splits a byte stream into lines of at most `maxLineBytes` bytes. Chunk boundaries may fall
 * anywhere, inside a UTF-8 sequence included: a line is decoded only once it is complete.
 *
 * @example
 * const splitter = new LineSplitter(1024);
 * splitter.push(Buffer.from('{"a":1}\n{"b"'), sink); // sink.line('{"a":1}')
 * splitter.push(Buffer.from(':2}\n'), sink); // sink.line('{"b":2}')
 */
export class LineSplitter {
  readonly #maxLineBytes: number;
  /** The start of the current line, held until its end arrives. */
  #parts: Buffer[] = [];
  #size = 0;
  /** Inside a line over the limit: its bytes are counted and dropped until its newline. */
  #skipping = false;
  #head: Buffer | undefined;
  #tail: Buffer = Buffer.alloc(0);

  constructor(maxLineBytes: number) {
    this.#maxLineBytes = maxLineBytes;
  }

  /** Bytes of an unfinished line held (for an unfinished oversized line: counted so far). */
  get pendingBytes(): number {
    return this.#size;
  }

  push(chunk: Buffer, sink: LineSink): void {
    let start = 0;
    while (start < chunk.length) {
      const end = chunk.indexOf(NEWLINE, start);
      if (end === -1) {
        this.#hold(chunk.subarray(start));
        return;
      }
      this.#finish(chunk.subarray(start, end), sink);
      start = end + 1;
    }
  }

  /** Forgets any unfinished line. */
  clear(): void {
    this.#parts = [];
    this.#size = 0;
    this.#skipping = false;
    this.#head = undefined;
    this.#tail = Buffer.alloc(0);
  }

  #hold(piece: Buffer): void {
    this.#size += piece.length;
    if (!this.#skipping && this.#size > this.#maxLineBytes) this.#startSkipping();
    if (this.#skipping) this.#keepEnds(piece);
    else this.#parts.push(piece);
  }

  #finish(last: Buffer, sink: LineSink): void {
    const size = this.#size + last.length;
    if (!this.#skipping && size > this.#maxLineBytes) this.#startSkipping();
    if (this.#skipping) {
      this.#keepEnds(last);
      const peek = peekLine(this.#head ?? Buffer.alloc(0), this.#tail);
      this.clear();
      sink.oversized(size, peek);
      return;
    }
    let end = last.length;
    if (end > 0 && last[end - 1] === CARRIAGE_RETURN) end -= 1;
    let text: string;
    if (this.#parts.length === 0) {
      text = last.toString('utf8', 0, end);
    } else {
      this.#parts.push(last.subarray(0, end));
      text = Buffer.concat(this.#parts, this.#size + end).toString('utf8');
      // A "\r" whose "\n" came in the next chunk is still at the end of the held part.
      if (end === 0 && text.endsWith('\r')) text = text.slice(0, -1);
      this.#parts = [];
    }
    this.#size = 0;
    if (text.length > 0) sink.line(text);
  }

  #startSkipping(): void {
    this.#skipping = true;
    const held = this.#parts;
    this.#parts = [];
    this.#head = undefined;
    this.#tail = Buffer.alloc(0);
    for (const part of held) this.#keepEnds(part);
  }

  /** Keeps the first and the last {@link PEEK_BYTES} of an oversized line, for {@link peekLine}. */
  #keepEnds(piece: Buffer): void {
    if (this.#head === undefined || this.#head.length < PEEK_BYTES) {
      this.#head = Buffer.concat([this.#head ?? Buffer.alloc(0), piece.subarray(0, PEEK_BYTES)]).subarray(
        0,
        PEEK_BYTES,
      );
    }
    this.#tail =
      piece.length >= PEEK_BYTES
        ? piece.subarray(-PEEK_BYTES)
        : Buffer.concat([this.#tail, piece]).subarray(-PEEK_BYTES);
  }
}

const ID_VALUE = String.raw`(-?\d+|"(?:[^"\\]|\\.)*")`;
/** `{"jsonrpc":"2.0","id":…` (Python, Rust and Go SDKs write the id first). */
const ID_AT_START = new RegExp(String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"id"\s*:\s*` + ID_VALUE);
/**
 * `…,"id":…}` as the last member (the TypeScript SDK writes the id last). A `"id":` followed by
 * exactly one `}` and the end belongs to the outermost object: inside a string its quotes would
 * be escaped, and a nested object would need a second `}`.
 */
const ID_AT_END = new RegExp(String.raw`[{,]\s*"id"\s*:\s*` + ID_VALUE + String.raw`\s*\}\s*$`);
/** The first member that tells a request from a response, after an optional jsonrpc and id. */
const KIND_AT_START = new RegExp(
  String.raw`^\s*\{\s*(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?(?:"id"\s*:\s*` +
    ID_VALUE +
    String.raw`\s*,\s*)?(?:"jsonrpc"\s*:\s*"2\.0"\s*,\s*)?"(method|result|error)"\s*:`,
);

/**
 * The JSON-RPC id and kind of a message from the first and last bytes of its line, without
 * parsing it (the line was too long to parse). Each is left out when the ends do not show it
 * where SDKs write it.
 * @example peekLine(Buffer.from('{"jsonrpc":"2.0","id":7,"result":'), Buffer.from('}}')) // { id: 7, kind: 'response' }
 */
export function peekLine(head: Buffer, tail: Buffer): LinePeek {
  const start = head.toString('utf8');
  const raw = (ID_AT_START.exec(start) ?? ID_AT_END.exec(tail.toString('utf8')))?.[1];
  const id = raw === undefined ? undefined : readId(raw);
  const member = KIND_AT_START.exec(start)?.[2];
  const kind = member === undefined ? undefined : member === 'method' ? 'request' : 'response';
  return { ...(id !== undefined ? { id } : {}), ...(kind !== undefined ? { kind } : {}) };
}

function readId(raw: string): string | number | undefined {
  try {
    const id: unknown = JSON.parse(raw);
    return typeof id === 'number' || typeof id === 'string' ? id : undefined;
  } catch {
    return undefined;
  }
}

/**
 * What {@link parseMessage} made of one line. A JSON object that is no JSON-RPC 2.0 message keeps
 * what could be read of it: its `id` (a string or number) and whether it looks like a response
 * (no `method`), so that the transport can answer it, or settle the call it answers, at once.
 */
export type ParsedLine =
  | { ok: true; message: JSONRPCMessage }
  | { ok: false; error: string; id?: string | number; response?: boolean };

/**
 * Rewrites a line's JSON before it is parsed, or returns undefined to leave it as it is: the
 * downstream side keeps numbers a double cannot carry as strings (N13, `core/exact-json.ts`).
 */
export type LineRewrite = (line: string) => string | undefined;

/** A JSON-RPC id we can answer under: a string or a safe integer (JSON-RPC 2.0, the SDKs). */
function isUsableId(id: unknown): id is string | number {
  return typeof id === 'string' || (typeof id === 'number' && Number.isSafeInteger(id));
}

/**
 * One line → one JSON-RPC message object. Checked here: the framing (JSON, an object) and the
 * JSON-RPC 2.0 envelope (`jsonrpc`, the `method`/`id` types, one of `result`/`error` with an
 * object result and a `{code, message}` error, no other top-level member of a response). The SDK
 * silently drops a message that fails its own classification, which left a malformed answer's
 * call waiting for its timeout and a malformed request unanswered; the full schema of each
 * method stays the SDK's to check. A request id that is a number must be a safe integer: `1.5`
 * or `2^53 + 1` (which JSON.parse would round onto another id) is an invalid request, answered
 * with `"id": null`.
 */
export function parseMessage(line: string, rewrite?: LineRewrite): ParsedLine {
  let value: unknown;
  const rewritten = rewrite?.(line);
  try {
    value = JSON.parse(rewritten ?? line);
  } catch (error) {
    if (rewritten !== undefined) return parseMessage(line);
    return { ok: false, error: `not JSON (${(error as Error).message}): ${excerpt(line)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: `not a JSON-RPC message object: ${excerpt(line)}` };
  }
  const problem = envelopeProblem(value as Record<string, unknown>);
  if (problem === undefined) return { ok: true, message: value as JSONRPCMessage };
  const id = (value as { id?: unknown }).id;
  return {
    ok: false,
    error: `${problem}: ${excerpt(line)}`,
    ...(isUsableId(id) ? { id } : {}),
    response: !('method' in value),
  };
}

const RESPONSE_MEMBERS = new Set(['jsonrpc', 'id', 'result', 'error']);

/** Why an object is no JSON-RPC 2.0 message (see {@link parseMessage}); undefined when it is one. */
function envelopeProblem(value: Record<string, unknown>): string | undefined {
  if (value['jsonrpc'] !== '2.0') return '"jsonrpc" is not "2.0"';
  const id = value['id'];
  const idOk = id === undefined || typeof id === 'string' || (typeof id === 'number' && Number.isFinite(id));
  if ('method' in value) {
    if (typeof value['method'] !== 'string') return '"method" is not a string';
    if (id !== undefined && !isUsableId(id)) return '"id" is not a string or an integer';
    const params = value['params'];
    if (params !== undefined && (typeof params !== 'object' || params === null))
      return '"params" is not an object';
    return undefined;
  }
  if (!('result' in value) && !('error' in value)) return 'neither a request (no "method") nor a response';
  if ('result' in value && 'error' in value) return 'a response with both "result" and "error"';
  const extra = Object.keys(value).find((key) => !RESPONSE_MEMBERS.has(key));
  if (extra !== undefined) return `a response with the unknown member "${extra}"`;
  if ('result' in value) {
    if (id === undefined || id === null || !idOk) return 'a result without a string or number "id"';
    const result = value['result'];
    if (typeof result !== 'object' || result === null || Array.isArray(result))
      return '"result" is not an object';
    const meta = (result as Record<string, unknown>)['_meta'];
    if (meta !== undefined && (typeof meta !== 'object' || meta === null || Array.isArray(meta))) {
      return '"result._meta" is not an object';
    }
    return undefined;
  }
  if (!idOk && id !== null) return '"id" is not a string, a number or null';
  const error = value['error'];
  if (typeof error !== 'object' || error === null) return '"error" is not an object';
  const { code, message } = error as Record<string, unknown>;
  if (typeof code !== 'number' || !Number.isInteger(code)) return '"error.code" is not an integer';
  if (typeof message !== 'string') return '"error.message" is not a string';
  return undefined;
}

/** A message as one line. */
export function serializeMessage(message: JSONRPCMessage): string {
  return `${JSON.stringify(message)}\n`;
}

/** The start of a line, for an error message. */
function excerpt(line: string): string {
  return line.length > 120 ? `${line.slice(0, 120)}…` : line;
}
