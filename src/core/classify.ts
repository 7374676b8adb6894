/**
 * Anything thrown by a tool call (the SDK's `SdkError` and `ProtocolError`, p-queue TimeoutError,
 * AbortError, a closed connection, a spawn error, a thrown string) → a failure Result (R3). Errors
 * are recognised by their shape (`code`, `name`, `message`), never with `instanceof`: they come
 * from other packages, and the SDK's client and server packages each bundle their own error
 * classes (typescript-sdk docs/migration/upgrade-to-v2.md, "Dual-role processes").
 */
import { failure, type CallMeta, type ErrorType, type FailureResult } from './result.js';
import { isJsonObject, safeStringify } from './json.js';

/** What the caller knows about the failed call. */
export interface ClassifyContext {
  /** The downstream server's key in the config. */
  readonly server?: string;
  /** The downstream tool's own name. */
  readonly tool?: string;
  /** Wall time of the call until it failed. */
  readonly elapsedMs?: number;
  /** The timeout the call ran under, named in `timeout` messages. */
  readonly timeoutMs?: number;
  /** True when the caller's own signal was aborted: the SDK may report an abort as a timeout or as the raw reason. */
  readonly aborted?: boolean;
}

/**
 * The SDK's local error codes that matter here (`SdkErrorCode` of SDK v2: strings, never sent on
 * the wire). v1 used the numbers -32000 and -32001 for the same two; in v2 those numbers are a
 * downstream's own JSON-RPC codes like any other.
 */
const CONNECTION_CLOSED = 'CONNECTION_CLOSED';
const NOT_CONNECTED = 'NOT_CONNECTED';
const SEND_FAILED = 'SEND_FAILED';
const REQUEST_TIMEOUT = 'REQUEST_TIMEOUT';

/** Node system error codes that mean "the server cannot be reached or started". */
const UNAVAILABLE_CODES: ReadonlySet<string> = new Set([
  'ENOENT',
  'EACCES',
  'EPERM',
  'ENOTDIR',
  'ECONNREFUSED',
  'ECONNRESET',
  'ECONNABORTED',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EPIPE',
  'ERR_STREAM_DESTROYED',
  'ERR_STREAM_WRITE_AFTER_END',
]);

/**
 * The `data` key of a JSON-RPC error that mcp-normalizer's own stdio client answered in the
 * downstream's place (a message too long to read): its value is the reason. Such an error is the
 * gateway's refusal, so its JSON-RPC code is not reported as the downstream's `error_code`.
 */
export const GATEWAY_REFUSAL_KEY = 'mcp_normalizer';

/** Messages the SDK uses for a transport that is gone. */
const UNAVAILABLE_MESSAGE = /^(connection closed|not connected)\b/i;

const MCP_PREFIX = /^(?:\s*MCP error (-?\d+):\s*)+/;

/**
 * Splits leading `MCP error -NNNNN:` prefixes, however many (an SDK server and an SDK client each
 * add one), from a message; `code` is the first prefix's code. An SDK `McpServer` also puts the
 * prefix into the text of the `isError` results it makes from thrown errors (N7).
 * @example splitMcpErrorPrefix('MCP error -32602: MCP error -32602: bad input')
 * // { message: 'bad input', code: '-32602' }
 */
export function splitMcpErrorPrefix(message: string): { message: string; code?: string } {
  const match = MCP_PREFIX.exec(message);
  if (match === null) return { message };
  const rest = message.slice(match[0].length);
  if (rest === '') return { message: message.trim() };
  const code = /-?\d+/.exec(match[0])?.[0];
  return code === undefined ? { message: rest } : { message: rest, code };
}

/**
 * Removes leading `MCP error -NNNNN:` prefixes, however many. The code itself is kept in the
 * Result's `errorCode`.
 * @example stripMcpErrorPrefix('MCP error -32602: MCP error -32602: bad input') // 'bad input'
 */
export function stripMcpErrorPrefix(message: string): string {
  return splitMcpErrorPrefix(message).message;
}

/** Reads a property of a thrown value without trusting it (a getter may throw). */
function prop(value: unknown, key: string): unknown {
  if ((typeof value !== 'object' && typeof value !== 'function') || value === null) return undefined;
  try {
    return (value as Record<string, unknown>)[key];
  } catch {
    return undefined;
  }
}

/** The message of a thrown value, whatever it is. */
function messageOf(error: unknown): string {
  if (typeof error === 'string') return error;
  if (error === undefined) return 'undefined was thrown';
  if (error === null) return 'null was thrown';
  const message = prop(error, 'message');
  if (typeof message === 'string' && message !== '') return stripMcpErrorPrefix(message);
  if (typeof error === 'object') {
    const json = safeStringify(error);
    return json.length > 300 ? `${json.slice(0, 299)}…` : json;
  }
  try {
    return String(error);
  } catch {
    return 'an unprintable value was thrown';
  }
}

function who(context: ClassifyContext): string {
  const server = context.server !== undefined ? `"${context.server}"` : 'the downstream server';
  return context.tool !== undefined ? `${server} (tool "${context.tool}")` : server;
}

function meta(context: ClassifyContext): Partial<CallMeta> {
  const out: { -readonly [K in keyof CallMeta]?: CallMeta[K] } = { source: 'proxy' };
  if (context.server !== undefined) out.server = context.server;
  if (context.tool !== undefined) out.tool = context.tool;
  if (context.elapsedMs !== undefined) out.elapsedMs = context.elapsedMs;
  return out;
}

function fail(
  errorType: ErrorType,
  error: string,
  exception: unknown,
  context: ClassifyContext,
  extra: { errorCode?: string; errorData?: Record<string, unknown> } = {},
): FailureResult {
  // `exception: undefined` is left out by failure(); a thrown `undefined` has nothing to keep.
  return failure(errorType, error, { meta: meta(context), exception, ...extra });
}

function timedOut(error: unknown, context: ClassifyContext): FailureResult {
  const within = context.timeoutMs !== undefined ? ` within ${context.timeoutMs} ms` : ' in time';
  return fail('timeout', `No answer from ${who(context)}${within}`, error, context, {
    ...(context.timeoutMs !== undefined ? { errorData: { timeout_ms: context.timeoutMs } } : {}),
  });
}

function cancelled(error: unknown, context: ClassifyContext): FailureResult {
  return fail('cancelled', `The call to ${who(context)} was cancelled`, error, context);
}

/**
 * R3: turns anything thrown by a tool call into a failure Result (see the module comment for the
 * mapping). The thrown value is kept in `exception` for the log.
 * @example classifyError(new SdkError('REQUEST_TIMEOUT', 'Request timed out'), { server: 'db', timeoutMs: 5000 })
 * // failure('timeout', 'No answer from "db" within 5000 ms')
 */
export function classifyError(error: unknown, context: ClassifyContext): FailureResult {
  try {
    const code = prop(error, 'code');
    const name = prop(error, 'name');
    const message = messageOf(error);

    // Once the caller aborted, whatever the SDK rejects with (a timeout, an AbortError, or the raw
    // abort reason, which may be any value) is the cancellation the caller asked for.
    if (context.aborted === true) return cancelled(error, context);
    if (code === REQUEST_TIMEOUT) return timedOut(error, context);
    if (name === 'AbortError') return cancelled(error, context);
    // p-queue's TimeoutError (and AbortSignal.timeout's DOMException) carry this name.
    if (name === 'TimeoutError') return timedOut(error, context);

    if (
      code === CONNECTION_CLOSED ||
      code === NOT_CONNECTED ||
      code === SEND_FAILED ||
      UNAVAILABLE_MESSAGE.test(message)
    ) {
      return fail('downstream_unavailable', `${who(context)} is unavailable: ${message}`, error, context);
    }
    if (typeof code === 'string' && UNAVAILABLE_CODES.has(code)) {
      const errorData: Record<string, unknown> = { code };
      const syscall = prop(error, 'syscall');
      const path = prop(error, 'path');
      if (typeof syscall === 'string') errorData['syscall'] = syscall;
      if (typeof path === 'string') errorData['path'] = path;
      return fail(
        'downstream_unavailable',
        `${who(context)} is unavailable (${code}): ${message}`,
        error,
        context,
        {
          errorCode: code,
          errorData,
        },
      );
    }
    const data = prop(error, 'data');
    if (isJsonObject(data) && typeof data[GATEWAY_REFUSAL_KEY] === 'string') {
      const { [GATEWAY_REFUSAL_KEY]: reason, ...detail } = data;
      return fail('downstream_error', message, error, context, { errorData: { reason, ...detail } });
    }
    if (typeof code === 'number' && Number.isInteger(code)) {
      // -32601 method not found, -32602 invalid params, -32603 internal error, and any other
      // JSON-RPC code: the downstream answered, with an error.
      const errorData: Record<string, unknown> = { code };
      if (data !== undefined) errorData['data'] = data;
      return fail('downstream_error', message, error, context, { errorCode: String(code), errorData });
    }
    return fail('downstream_error', message, error, context);
  } catch (bug) {
    // R3 holds even if this function has a bug: the caller still gets a failure, never a throw.
    return failure('normalization_error', 'mcp-normalizer could not classify an error', {
      meta: meta(context),
      exception: bug,
    });
  }
}
