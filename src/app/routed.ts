/**
 * A routed request's answer upstream (U5, X1, X5): its value, or its failure as a JSON-RPC error
 * (these methods have no `isError` convention): InvalidParams for an unknown name or URI (naming
 * close matches), the downstream's own code for its own JSON-RPC error, InternalError otherwise,
 * with `data.error_type` from the closed R3 list. The prompts and resources, the skills and the
 * tasks all answer through here.
 */
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json.js';
import type { FailureResult, Result } from '../core/result.js';

/** A JSON-RPC error as the SDK sends it: `code`, `message` (no "MCP error" prefix), `data`. */
export function rpcError(code: number, message: string, data?: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { code, ...(data !== undefined ? { data } : {}) });
}

/** InvalidParams for a name or URI no server serves (`what`), naming up to 3 close ones. */
export function unknown(what: string, name: string, suggestions: readonly string[]): Error {
  const hint = suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
  return rpcError(ProtocolErrorCode.InvalidParams, `Unknown ${what} "${name}"${hint}`, {
    [what.replace(' ', '_')]: name,
    suggestions,
  });
}

/**
 * A failed routed request as a JSON-RPC error: a server's own error keeps its code (-32602 for
 * what it does not serve), anything else is -32603; `data` names the error type and the server,
 * plus `extra`.
 */
export function requestError(result: FailureResult, extra: Readonly<Record<string, unknown>> = {}): Error {
  const own = result.errorType === 'downstream_error' ? Number(result.errorCode) : NaN;
  return rpcError(Number.isSafeInteger(own) ? own : ProtocolErrorCode.InternalError, result.error, {
    error_type: result.errorType,
    ...(result.meta.server !== undefined ? { server: result.meta.server } : {}),
    ...extra,
  });
}

/** A routed request's value as an object ({} for a value that is none); its failure thrown. */
export function routedRecord(result: Result): Record<string, unknown> {
  if (!result.success) throw requestError(result);
  return isRecord(result.value) ? result.value : {};
}
