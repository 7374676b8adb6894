/**
 * Reading errors of the downstream layer: a one-line description for `lastError`, and whether a
 * failed request means the server cannot be reached at all (P4 for remote servers).
 */

/**
 * One line for `lastError` and the log: the message, prefixed by a system error code it lacks,
 * followed by what its causes add (undici's "fetch failed" says why only in its `cause`:
 * `fetch failed (ECONNREFUSED: connect ECONNREFUSED 127.0.0.1:9)`).
 */
export function describeError(error: unknown): string {
  if (!(error instanceof Error)) return String(error);
  let text = withCode(error);
  for (
    let cause = error.cause, depth = 0;
    cause instanceof Error && depth < 4;
    cause = cause.cause, depth++
  ) {
    const more = withCode(cause);
    if (more !== '' && !text.includes(more)) text += ` (${more})`;
  }
  return text;
}

function withCode(error: Error): string {
  const code = (error as { code?: unknown }).code;
  return typeof code === 'string' && !error.message.includes(code)
    ? `${code}: ${error.message}`
    : error.message;
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
