/**
 * One tool call → one Result (R3): the single place where anything thrown by a call (SDK,
 * p-queue, transport) becomes a Result. Queue bound (P2), fail-fast while down (P4), the call
 * itself (P3), then `core/normalize` or `core/classify`, instructions (R4), elapsed time, and one
 * start and one end log line per call (L1).
 */
import { isInputRequiredResult } from '@modelcontextprotocol/client';
import type { Logger } from 'pino';
import type { ServerConfig } from '../config/types.js';
import { classifyError } from '../core/classify.js';
import { normalizeCallToolResult } from '../core/normalize.js';
import { isInputRound, type Caller, type InputRound } from '../core/input.js';
import { isCreatedTask, type CreatedTask } from '../core/tasks.js';
import type { CallOptions } from '../core/call.js';
import type { CallSignal } from '../core/call-signal.js';
import { failure, ok, withMeta, type Result } from '../core/result.js';
import { logCallStart } from '../log/call-log.js';
import { endSpan, startDownstreamSpan, traceMeta } from '../log/trace.js';
import type { CallerLane } from './callers.js';
import type { Connection } from './connection.js';
import type { CallSlots } from './slots.js';
import type { Timers } from '../core/timers.js';
import type { Deadlines } from './deadlines.js';
import { LOGIN_INSTRUCTION } from '../core/instructions.js';
import { isLoginRequired } from './start-errors.js';
import { takeCreatedTask } from './task-results.js';

export type { CallOptions } from '../core/call.js';

/**
 * What a call with a caller ends in: a Result, a 2026 server's input round to relay (Q3), or the
 * task it created for a caller that takes tasks (X5).
 */
export type CallOutcome = Result | InputRound | CreatedTask;

/** Everything the dispatcher needs to know about one server. */
export interface DispatchTarget {
  readonly server: ServerConfig;
  readonly connection: Connection;
  /** The server's slots: `concurrency` calls at a time, the rest waiting in its p-queue (P2). */
  readonly slots: CallSlots;
  /** The server's child logger. */
  readonly logger: Logger;
  /** Q1: present when the server has `isolate_callers`. */
  readonly lane?: CallerLane;
  /** O3: true once a reload removes the server: new calls fail at once. */
  removing?: boolean;
}

/** Pool-wide settings of the dispatcher. */
export interface DispatchContext {
  readonly timers: Timers;
  /** P3: the queue deadlines of the pool's waiting calls, on one timer. */
  readonly deadlines: Deadlines;
  /** N9. @default 65536 */
  readonly maxInlineBytes: number;
  /** True once the pool is shutting down (P5): new calls fail at once. */
  readonly closing: () => boolean;
}

function unavailable(target: DispatchTarget, tool: string, why: string): Result {
  const retryAfterMs = target.connection.retryAfterMs();
  return failure('downstream_unavailable', `Server "${target.server.name}" ${why}`, {
    meta: { server: target.server.name, tool },
    errorData: {
      state: target.connection.state,
      ...(retryAfterMs !== undefined ? { retry_after_ms: retryAfterMs } : {}),
      ...(target.connection.lastError !== undefined ? { last_error: target.connection.lastError } : {}),
      // D3: the caller has no usable login to this server (app/logins/logins.ts may ask for one).
      ...(target.connection.loginRequired ? { reason: 'login_required' } : {}),
    },
    ...(target.connection.loginRequired ? { instruction: LOGIN_INSTRUCTION } : {}),
  });
}

/**
 * D2, D3: a request the server refused for want of a (wider) login while the connection stays
 * up: its 403 `insufficient_scope` step-up asked for a scope the stored login lacks, and the
 * gateway never starts a login on its own. Answered as a missing login is (`reason:
 * login_required`), so that app/logins/logins.ts asks a caller with its own identity to log in with the
 * wider scope (kept in the store by oauth-login.ts), and the call runs again.
 */
function withLoginReason(classified: Result, target: DispatchTarget, error: unknown): Result {
  if (classified.success || !isLoginRequired(error)) return classified;
  const message = error instanceof Error ? error.message : String(error);
  return failure('downstream_unavailable', message, {
    meta: classified.meta,
    errorData: { state: target.connection.state, reason: 'login_required' },
    instruction: LOGIN_INSTRUCTION,
  });
}

/** P4: a drop in flight is told when the server will be tried again, like a fail-fast call. */
function withRetryAfter(result: Result, target: DispatchTarget): Result {
  if (result.success || result.errorType !== 'downstream_unavailable') return result;
  const retryAfterMs = target.connection.retryAfterMs();
  if (retryAfterMs === undefined) return result;
  return { ...result, errorData: { ...result.errorData, retry_after_ms: retryAfterMs } };
}

/**
 * The answer a request gets without reaching the queue, if any: shutting down (P5), not ready
 * (P4: fail fast, with when to try again), or no free slot and `max_queue` calls already waiting
 * (P2: p-queue has no size limit of its own; checked before adding, answered at once).
 */
function admit(context: DispatchContext, target: DispatchTarget, tool: string): Result | undefined {
  const { server, connection, slots } = target;
  if (context.closing()) return unavailable(target, tool, 'is shutting down');
  if (target.removing === true) return unavailable(target, tool, 'is being removed by a config reload');
  if (connection.state !== 'ready') return unavailable(target, tool, `is ${connection.state}`);
  if (!slots.hasFreeSlot && slots.waiting >= server.maxQueue) {
    return failure(
      'overloaded',
      `Server "${server.name}" has ${slots.waiting} calls waiting (max_queue ${server.maxQueue})`,
      {
        meta: { server: server.name, tool },
        errorData: { queued: slots.waiting, in_flight: slots.inFlight, max_queue: server.maxQueue },
      },
    );
  }
  return undefined;
}

/** The wait of a call that found no free slot: aborts at its deadline unless it started first. */
interface QueueDeadline {
  /** The caller's signal and the deadline together: p-queue drops the call when either fires. */
  readonly signal: AbortSignal;
  /** The wait is over (the call got its slot, or left the queue): the deadline timer goes. */
  stop(): void;
  /** True when the call was dropped from the queue because its deadline passed. */
  expired(): boolean;
}

function queueDeadline(context: DispatchContext, timeoutMs: number, caller?: CallSignal): QueueDeadline {
  // p-queue drops a waiting call when its signal aborts: one controller, aborted by the shared
  // deadline timer (deadlines.ts) or by the caller's own signal, linked by a listener.
  const controller = new AbortController();
  let expired = false;
  const deadline = context.deadlines.add(context.timers.now() + timeoutMs, () => {
    expired = true;
    controller.abort(new DOMException('Queued past the call timeout', 'TimeoutError'));
  });
  const onAbort = (): void => controller.abort(caller?.reason);
  if (caller?.aborted === true) onAbort();
  else caller?.addEventListener('abort', onAbort, { once: true });
  return {
    signal: controller.signal,
    stop: () => {
      deadline.cancel();
      caller?.removeEventListener('abort', onAbort);
    },
    expired: () => expired,
  };
}

/**
 * An answer without a downstream call, from a task that waited for its slot (the server went
 * down, or its deadline passed). Anything else a task resolves with is the downstream's raw
 * result, parsed JSON, which is never an instance of this class.
 */
class Early {
  constructor(readonly result: Result) {}
}

/** Q3: a 2026 server's `input_required` answer, relayed only when a caller can answer it. */
function inputRound(raw: unknown, target: DispatchTarget, tool: string, options: CallOptions): CallOutcome {
  const { inputRequests, requestState } = raw as { inputRequests?: unknown; requestState?: unknown };
  if (options.caller === undefined) {
    return failure(
      'downstream_error',
      `"${target.server.name}" (tool "${tool}") asked its client for input, and no client can answer here`,
      { meta: { server: target.server.name, tool }, errorData: { reason: 'input_required' } },
    );
  }
  return {
    kind: 'input_required',
    inputRequests:
      typeof inputRequests === 'object' && inputRequests !== null
        ? (inputRequests as Record<string, unknown>)
        : {},
    ...(typeof requestState === 'string' ? { requestState } : {}),
    server: target.server.name,
    tool,
  };
}

/** P3: a call that waited for a slot (or its lane) until its deadline, and never started. */
function queuedTooLong(
  server: DispatchTarget['server'],
  tool: string,
  slots: boolean,
  elapsedMs: number,
): Result {
  const why = slots
    ? `all ${server.concurrency} of its slots stayed busy`
    : 'calls of another client held it (isolate_callers)';
  return failure(
    'timeout',
    `"${server.name}" (tool "${tool}") did not start within ${server.timeoutMs} ms: ${why}`,
    {
      meta: { server: server.name, tool, source: 'proxy', elapsedMs },
      errorData: { timeout_ms: server.timeoutMs, reason: 'queued', concurrency: server.concurrency },
    },
  );
}

async function run(
  context: DispatchContext,
  target: DispatchTarget,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions,
  startedAt: number,
  meta: Record<string, unknown> | undefined,
): Promise<CallOutcome> {
  const { server, connection, slots } = target;
  const refused = admit(context, target, tool);
  if (refused) return refused;
  // Q1: with `isolate_callers`, a call waits while calls of another upstream client run.
  const lane = options.caller !== undefined ? target.lane : undefined;
  const laneBusy = lane !== undefined && !lane.isFree(options.caller!.key);
  // P3: a call's deadline counts from its arrival. One that has to wait for a slot gives up
  // waiting when `timeout_ms` has passed, and one that starts late gets only what is left.
  const queued =
    slots.hasFreeSlot && !laneBusy ? undefined : queueDeadline(context, server.timeoutMs, options.signal);
  let inLane = false;
  const waited = (): number => context.timers.now() - startedAt;
  try {
    if (lane !== undefined) {
      await lane.acquire(options.caller!.key, queued?.signal ?? options.signal);
      inLane = true;
    }
    const outcome = await slots.run((): Promise<unknown> => {
      queued?.stop();
      // The server may have gone down while this call waited in the queue.
      if (connection.state !== 'ready')
        return Promise.resolve(new Early(unavailable(target, tool, `is ${connection.state}`)));
      const waitedMs = waited();
      // P3: a slot that frees the moment the deadline passes is too late; the call never starts.
      if (queued !== undefined && waitedMs >= server.timeoutMs)
        return Promise.resolve(new Early(queuedTooLong(server, tool, true, waitedMs)));
      return connection.call(tool, args, {
        signal: options.signal,
        onProgress: options.onProgress,
        ...(queued !== undefined ? { timeoutMs: Math.max(1, server.timeoutMs - waitedMs) } : {}),
        ...(options.caller !== undefined ? { caller: options.caller } : {}),
        ...(options.reply !== undefined ? { reply: options.reply } : {}),
        ...(meta !== undefined ? { meta } : {}),
      });
    }, queued?.signal ?? options.signal);
    if (outcome instanceof Early) return outcome.result;
    if (isInputRequiredResult(outcome)) return inputRound(outcome, target, tool, options);
    const task = takeCreatedTask(outcome);
    if (task !== undefined) return { kind: 'task', task, server: server.name, tool };
    return normalizeCallToolResult(outcome, {
      server: server.name,
      tool,
      elapsedMs: context.timers.now() - startedAt,
      maxInlineBytes: context.maxInlineBytes,
      inbandErrors: server.inbandErrors,
    });
  } catch (error) {
    if (queued?.expired() === true)
      return queuedTooLong(server, tool, inLane || lane === undefined, waited());
    const classified = classifyError(error, {
      server: server.name,
      tool,
      elapsedMs: context.timers.now() - startedAt,
      timeoutMs: server.timeoutMs,
      // P3: the SDK rejects an abort with the timeout code; only our caller's signal tells them apart.
      aborted: options.signal?.aborted ?? false,
    });
    return withRetryAfter(withLoginReason(classified, target, error), target);
  } finally {
    // A call dropped from the queue for another reason must not leave its deadline timer behind.
    queued?.stop();
    if (inLane) lane?.release();
  }
}

/**
 * Calls `tool` on `target` and answers with a Result, whatever happens: this promise never
 * rejects (R3).
 */
export async function dispatchCall(
  context: DispatchContext,
  target: DispatchTarget,
  tool: string,
  args: Record<string, unknown>,
  options: CallOptions = {},
): Promise<CallOutcome> {
  const startedAt = context.timers.now();
  const exposedName = options.exposedName ?? `${target.server.name}/${tool}`;
  const requestId = options.requestId;
  let result: CallOutcome;
  // O2: one span per downstream call, its trace context in the request's `_meta`.
  const traced = startDownstreamSpan(options.trace, target.server.name, tool, target.connection.era);
  try {
    logCallStart(target.logger, {
      exposedName,
      server: target.server.name,
      tool,
      requestId,
      args,
      ...(options.principal !== undefined ? { principal: options.principal } : {}),
    });
    result = await run(context, target, tool, args, options, startedAt, traceMeta(traced));
  } catch (error) {
    // Only a bug of ours gets here (normalize and classify are total); still an answer (R3).
    result = failure('normalization_error', `Internal error while calling "${tool}": ${String(error)}`, {
      meta: { server: target.server.name, tool },
      exception: error,
    });
  }
  // The caller owns the outcome: instructions (R4) and the end line in the log (L1).
  if (isInputRound(result) || isCreatedTask(result)) {
    endSpan(traced.span, undefined);
    return result;
  }
  endSpan(traced.span, result.success ? undefined : result.errorType);
  return withMeta(result, { elapsedMs: context.timers.now() - startedAt });
}

/**
 * U5: one non-tool request (`prompts/get`, `resources/read`, `completion/complete`) through the
 * same machinery as a call: shutdown, fail-fast while down, the queue bound and `concurrency`,
 * the server's timeout, the caller's cancellation and an immediate answer when the connection
 * drops. `subject` names what is asked for (prompt name, URI) in messages and the log. The value
 * of a success is the downstream's raw result (the caller checks it); never rejects.
 */
export async function dispatchRequest(
  context: DispatchContext,
  target: DispatchTarget,
  method: string,
  params: Record<string, unknown>,
  subject: string,
  signal?: CallSignal,
  caller?: Caller,
): Promise<Result> {
  const startedAt = context.timers.now();
  const { server, connection, slots } = target;
  try {
    const refused = admit(context, target, subject);
    if (refused) return refused;
    const outcome = await slots.run((): Promise<unknown> => {
      if (connection.state !== 'ready')
        return Promise.resolve(new Early(unavailable(target, subject, `is ${connection.state}`)));
      return connection.request(method, params, {
        ...(signal !== undefined ? { signal } : {}),
        ...(caller !== undefined ? { caller } : {}),
      });
    }, signal);
    if (outcome instanceof Early) return outcome.result;
    target.logger.debug(
      { method, subject, elapsedMs: context.timers.now() - startedAt },
      `${method} answered`,
    );
    return ok(outcome, { meta: { server: server.name, tool: subject } });
  } catch (error) {
    const classified = classifyError(error, {
      server: server.name,
      tool: subject,
      elapsedMs: context.timers.now() - startedAt,
      timeoutMs: server.timeoutMs,
      aborted: signal?.aborted ?? false,
    });
    target.logger.warn(
      { method, subject, errorType: classified.errorType, error: classified.error },
      `${method} failed`,
    );
    return withRetryAfter(withLoginReason(classified, target, error), target);
  }
}
