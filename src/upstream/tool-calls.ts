/**
 * One connection's tools/call handler (T3, T7–T9, Q1–Q3, P3, O2): the call's span, its input
 * rounds, the pipeline's answer (call-pipeline.ts), and its place among the calls in flight
 * (P5's drain). server.ts registers it; the stdio direct path (direct-calls.ts) calls it too.
 */
import type { CallToolResult, Server, ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Result } from '../core/result.js';
import { endSpan, startCallSpan } from '../log/trace.js';
import type { PreparedForward, ToolBackend } from './backend.js';
import type { CallPipeline } from './call-pipeline.js';
import type { RequestCaller } from './caller-identity.js';
import { callSignalOf, type CallHandler } from './direct-calls.js';
import type { InputRounds, RoundState } from './input-rounds.js';
import { progressSink } from './progress.js';
import type { RequestScope } from './scope.js';

/** What {@link toolCallHandler} is built from. */
export interface ToolCallParts<F extends PreparedForward> {
  readonly backend: ToolBackend<F>;
  readonly rounds: InputRounds;
  readonly pipeline: CallPipeline;
  readonly logger: Logger;
  /** P5: the calls in flight, which the drain waits for. */
  readonly calls: Set<Promise<unknown>>;
  /** A result the pipeline finished (the net, a failed round), in the caller's envelope. */
  readonly renderFailure: (result: Result, who: RequestCaller) => CallToolResult;
  /** I2, I6, Q2, Q3: who is behind a call (caller-identity.ts), worked out once per call. */
  readonly resolve: (ctx: ServerContext) => RequestCaller;
  /** O1: one notification sent upstream. */
  readonly onForward?: (kind: 'progress') => void;
}

/** The tools/call handler of `server`, whose requests `scope` describes. */
export function toolCallHandler<F extends PreparedForward>(
  server: Server,
  scope: RequestScope,
  parts: ToolCallParts<F>,
): CallHandler {
  const { backend, rounds, pipeline, logger, calls, onForward } = parts;
  return (request, ctx) => {
    const requestId = ctx.mcpReq.id;
    const name = request.params.name;
    // A tools/call asks once: resolved directly, without the scope's per-request cache entry.
    const who = parts.resolve(ctx);
    const { era } = scope;
    const called = backend.calledName?.(name, request.params.arguments) ?? name;
    // O2: a span per upstream call, parented to the request's `traceparent`, named after the
    // tool only when the tool exists (an unknown name is unbounded input).
    const known = backend.exposes?.(called) !== false;
    const meta = ctx.mcpReq._meta as Record<string, unknown> | undefined;
    const traced = startCallSpan(known ? called : undefined, meta, era, who.subject);
    const span = { trace: traced.context, outcome: {} as { errorType?: string }, era };
    const pending = rounds.handle(
      {
        name: called,
        state: ctx.mcpReq.requestState<RoundState>(),
        responses: ctx.mcpReq.inputResponses,
        // Q1: the upstream client is this server instance: a 2025 session, a stdio
        // connection, or (2026 HTTP builds one per request) the request itself.
        callerKey: server,
        // Q3: a round is bound to its caller: the session or connection; a 2026 HTTP request
        // has neither, and every anonymous caller is one (the principal, once there is one).
        callerId: who.roundKey,
        arguments: request.params.arguments,
        capabilities: who.capabilities,
        // The request's cancellation goes down as it is (the SDK's per-request signal, or the
        // direct path's own, which makes no AbortController unless asked): whatever a cancelled
        // call rejects with is classified `cancelled` (R3). It fires on `notifications/cancelled`
        // (legacy, modern stdio) and when a modern HTTP client closes the call's response stream
        // (P3, E3).
        signal: callSignalOf(ctx),
        onProgress: progressSink(ctx, () => onForward?.('progress'), logger),
        detach: era === 'modern',
      },
      (run) =>
        pipeline.answer(name, request.params.arguments, {
          signal: run.signal,
          requestId,
          onProgress: run.onProgress,
          caller: run.caller,
          reply: run.reply,
          who,
          span,
        }),
      (result) => parts.renderFailure(pipeline.finish(called, result, requestId), who),
    );
    calls.add(pending);
    const ended = (): void => {
      calls.delete(pending);
      // A call that came before the first catalog: named now, if its tool turned out to exist.
      const { errorType } = span.outcome;
      const named = !known && errorType !== 'unknown_tool' && backend.exposes?.(called) === true;
      endSpan(traced.span, errorType, named ? called : undefined);
    };
    // A protocol error (SEP-2575's -32021) rejects `pending`: the SDK answers it; this side
    // chain only cleans up, and must not leave a rejection of its own unhandled.
    pending.then(ended, ended);
    return pending;
  };
}
