/**
 * One log line per call, at the level its outcome deserves (L1): trace when a call starts (with
 * its arguments, redacted by the logger), debug when it succeeds (with the elapsed time), error
 * for every failure (with its errorType; info for a refusal the agent caused: the explicit gate,
 * bad arguments, an unknown name), and warn for each warning the normalizer raised, e.g.
 * N2's `structured_text_mismatch` with its short diff.
 *
 * These helpers never throw: logging must not turn an answer into a rejection.
 */
import type { Logger } from 'pino';
import type { Result } from '../core/result.js';

/** What {@link logCallStart} logs. */
export interface CallStart {
  readonly exposedName: string;
  readonly server: string;
  readonly tool: string;
  readonly requestId?: string | number;
  /** I2: the caller's subject, when a token named one (never the token). */
  readonly principal?: string;
  /** Logged only at trace, under `args`, where the logger's redact paths apply (L1). */
  readonly args?: unknown;
}

/** What {@link logCallEnd} adds to the Result. */
export interface CallEnd {
  readonly exposedName: string;
  readonly requestId?: string | number;
  /** I2: the caller's subject, when a token named one (never the token). */
  readonly principal?: string;
}

/** True when the logger (or a parent) already binds `server`: a second copy would duplicate the key. */
function bindsServer(logger: Logger): boolean {
  // pino's bindings() re-parses the child's bindings on every call: decide once per logger.
  let binds = BINDS_SERVER.get(logger);
  if (binds === undefined) {
    binds = Object.prototype.hasOwnProperty.call(logger.bindings(), 'server');
    BINDS_SERVER.set(logger, binds);
  }
  return binds;
}

const BINDS_SERVER = new WeakMap<Logger, boolean>();

/**
 * L1: failures of the call itself, refused before any downstream saw it because of what the agent
 * sent; logged at info (an agent that forgets `explicit_action` is working as designed).
 */
const CALLER_REFUSALS: ReadonlySet<string> = new Set([
  'consent_required',
  'access_denied',
  'invalid_arguments',
  'unknown_tool',
]);

/**
 * L1: trace line when a call starts, with its arguments.
 * @example logCallStart(serverLog, { exposedName: 'fs_read', server: 'fs', tool: 'read', requestId: 7, args })
 */
export function logCallStart(logger: Logger, call: CallStart): void {
  try {
    // Arguments can be large: build nothing unless trace is on.
    if (!logger.isLevelEnabled('trace')) return;
    const server = bindsServer(logger) ? {} : { server: call.server };
    logger.trace(
      {
        event: 'call_start',
        exposedName: call.exposedName,
        ...server,
        tool: call.tool,
        requestId: call.requestId,
        ...(call.principal !== undefined ? { principal: call.principal } : {}),
        args: call.args,
      },
      `call ${call.exposedName}`,
    );
  } catch {
    // A log line is never worth a failed call.
  }
}

/**
 * L1: debug on success with the elapsed time, error on every failure with its errorType, and a
 * warn line per warning code (N2's diff comes from the Result's diagnostics).
 * @example logCallEnd(serverLog, result, { exposedName: 'fs_read', requestId: 7 })
 */
export function logCallEnd(logger: Logger, result: Result, call: CallEnd): void {
  try {
    const { meta } = result;
    // The common case, a success without warnings at info level, builds nothing.
    if (result.success && meta.warnings.length === 0 && !logger.isLevelEnabled('debug')) return;
    const server = meta.server !== undefined && !bindsServer(logger) ? { server: meta.server } : {};
    const base = {
      exposedName: call.exposedName,
      ...server,
      tool: meta.tool,
      requestId: call.requestId,
      ...(call.principal !== undefined ? { principal: call.principal } : {}),
    };
    for (const code of new Set(meta.warnings)) {
      const detail = meta.diagnostics.filter((d) => d.code === code).map((d) => d.message);
      logger.warn(
        { event: code, ...base, ...(detail.length > 0 ? { diff: detail.join('; ') } : {}) },
        code === 'structured_text_mismatch'
          ? `${call.exposedName}: structuredContent and the JSON text disagree; structuredContent wins (N2)`
          : `${call.exposedName}: ${code}`,
      );
    }
    if (result.success) {
      if (!logger.isLevelEnabled('debug')) return;
      logger.debug(
        { event: 'call_end', ...base, elapsedMs: meta.elapsedMs, source: meta.source },
        `call ${call.exposedName} ok in ${meta.elapsedMs ?? '?'} ms`,
      );
      return;
    }
    const err = result.exception instanceof Error ? { err: result.exception } : {};
    // A refusal the agent caused and can mend (the gate, its arguments, a name) is no fault here,
    // nor is a call that waits for its user's login (issue 56: it was logged as an error).
    const userActs = result.errorData?.['reason'] === 'login_required';
    const level = CALLER_REFUSALS.has(result.errorType) || userActs ? 'info' : 'error';
    logger[level](
      {
        event: 'call_end',
        ...base,
        elapsedMs: meta.elapsedMs,
        errorType: result.errorType,
        error: result.error,
        ...(result.errorCode === undefined ? {} : { errorCode: result.errorCode }),
        ...err,
      },
      `call ${call.exposedName} failed: ${result.errorType}: ${result.error}`,
    );
  } catch {
    // A log line is never worth a failed call.
  }
}
