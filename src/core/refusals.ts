/**
 * I7, issue 55: the two refusals a call meets before any downstream is asked when the caller's
 * rate limits count it: past a limit (`rate_limited`, with the wait), and the shared store that
 * keeps the counts unreachable (`downstream_unavailable`, reason `store_unavailable`, naming the
 * store and telling the model it is the gateway's store, not the tool's server). Pure.
 */
import { STORE_INSTRUCTION } from './instructions.js';
import type { LimitVerdict } from './rate-limits.js';
import { failure, type FailureResult } from './result.js';

/** Where the refused call was going. */
export interface RefusedCall {
  readonly server: string;
  readonly tool: string;
}

/** I7: the refusal of a call to `name` past `verdict`'s limit. */
export function rateLimited(
  call: RefusedCall,
  name: string,
  verdict: Extract<LimitVerdict, { allowed: false }>,
): FailureResult {
  const retryAfterS = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
  const { calls, windowMs } = verdict.limit;
  return failure(
    'rate_limited',
    `Rate limit: at most ${calls} calls per ${windowMs / 1000} s to "${name}" for this caller; try again in ${retryAfterS} s`,
    {
      meta: { server: call.server, tool: call.tool },
      errorData: { calls, per_s: windowMs / 1000, retry_after_s: retryAfterS },
    },
  );
}

/** Issue 55: the refusal of a rate-limited call whose count the store at `where` could not keep. */
export function storeUnavailable(
  call: RefusedCall,
  name: string,
  where: string,
  error: unknown,
): FailureResult {
  return failure(
    'downstream_unavailable',
    `The shared store (${where}) is unreachable, and calls to "${name}" are rate-limited: they cannot be counted (${error instanceof Error ? error.message : String(error)})`,
    {
      meta: { server: call.server, tool: call.tool },
      errorData: { reason: 'store_unavailable', store: where },
      instruction: STORE_INSTRUCTION,
    },
  );
}
