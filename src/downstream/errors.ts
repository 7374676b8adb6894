/**
 * Reading errors of the downstream layer: a one-line description for `lastError`, and whether a
 * failed request means the server cannot be reached at all (P4 for remote servers).
 */

/** One line for `lastError` and the log: the message, prefixed by a system error code it lacks. */
export function describeError(error: unknown): string {
  if (error instanceof Error) {
    const code = (error as { code?: unknown }).code;
    return typeof code === 'string' && !error.message.includes(code)
      ? `${code}: ${error.message}`
      : error.message;
  }
  return String(error);
}

/** Socket-level error codes (Node and undici) that mean the server cannot be reached. */
const UNREACHABLE_CODES: ReadonlySet<string> = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'EPIPE',
  'ENOTFOUND',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ETIMEDOUT',
  'UND_ERR_SOCKET',
  'UND_ERR_CONNECT_TIMEOUT',
]);

/** A transport failure (fetch could not reach the server), on the error or its `cause`. */
export function isUnreachable(error: unknown): boolean {
  for (let e = error, depth = 0; e instanceof Error && depth < 3; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && UNREACHABLE_CODES.has(code)) return true;
    if (e.name === 'TypeError' && e.message === 'fetch failed') return true;
  }
  return false;
}
