/**
 * The tools/call pipeline of the aggregated server (CONTRACT R2, R3, P5, T7–T9, I3, Q3): accept,
 * prepare (the backend's lookup, with the authorization step, the gate and the arguments), run,
 * and the answer, rendered by the server (`server.ts`, the only importer of the renderer). Every
 * answer, including the failures it makes itself, goes through the backend's outcome step.
 */
import {
  MissingRequiredClientCapabilityError,
  ProtocolErrorCode,
  type CallToolResult,
} from '@modelcontextprotocol/server';
import type { Context } from '@opentelemetry/api';
import type { Logger } from 'pino';
import { endSpan, startSnippetCallSpan } from '../log/trace.js';
import { abortSignalOf, type CallSignal } from '../core/call-signal.js';
import { isInputRound, type Caller, type InputReply, type InputRound } from '../core/input.js';
import { isCreatedTask, type CreatedTask } from '../core/tasks.js';
import { failure, type FailureResult, type Result } from '../core/result.js';
import type { PreparedForward, ToolBackend } from './backend.js';
import type { RequestCaller } from './caller-identity.js';
import type { Era } from './notifier.js';
import type { ProgressSink } from './parked-call.js';

export /** What one tools/call request brings besides its name and arguments (at most seven fields). */
interface CallExtra {
  readonly signal: CallSignal;
  readonly requestId: string | number;
  readonly onProgress: ProgressSink;
  /** Q1: the upstream client that answers what the call's server asks meanwhile. */
  readonly caller: Caller;
  readonly reply: InputReply | undefined;
  /** Who is calling, worked out once for the request (caller-identity.ts). */
  readonly who: RequestCaller;
  /** O2: the span's context; the outcome's error type is written back for the span's end. */
  readonly span: { readonly trace: Context; readonly outcome: { errorType?: string }; readonly era: Era };
}

/** A Result from step 1 is the call's answer: a refusal (T7–T9) or the gateway's own (S2). */
function isAnswered<F extends PreparedForward>(prepared: F | Result): prepared is Result {
  return (prepared as { kind?: unknown }).kind !== 'forward';
}

const SHUTTING_DOWN = 'mcp-normalizer is shutting down and takes no new calls: retry later';

/** What {@link createCallPipeline} needs from the server. */
export interface PipelineDeps<F extends PreparedForward> {
  readonly backend: ToolBackend<F>;
  readonly logger: Logger;
  /** P5: false once the server stopped taking calls. */
  readonly accepting: () => boolean;
  /** R2: a Result as the caller's envelope (the server's renderer, F7 links, L2 scrubbing). */
  readonly render: (result: Result, who: RequestCaller) => CallToolResult;
}

/** The pipeline of one upstream server. */
export interface CallPipeline {
  /** One call's answer: rendered, or an input round to relay (Q3). Rejects only with a protocol error. */
  answer(
    name: string,
    args: Record<string, unknown> | undefined,
    extra: CallExtra,
  ): Promise<CallToolResult | InputRound>;
  /**
   * The answer of a failure the server makes itself (an input round that failed): through the
   * backend's outcome step, like every call's answer (R4, L1, O1).
   */
  finish(name: string, result: FailureResult, requestId: string | number | undefined): FailureResult;
}

/** @example const pipeline = createCallPipeline({ backend, logger, accepting: () => true, render }); */
export function createCallPipeline<F extends PreparedForward>(deps: PipelineDeps<F>): CallPipeline {
  const { backend, logger } = deps;
  /**
   * The answer of a failure the server makes itself (shutting down, its outermost net, an input
   * round that failed): through the backend's outcome step, like every call's answer (R4, L1, O1).
   */
  function finish(
    name: string,
    result: FailureResult,
    requestId: string | number | undefined,
  ): FailureResult {
    return backend.answer?.(name, result, requestId) ?? result;
  }

  async function answer(
    name: string,
    args: Record<string, unknown> | undefined,
    extra: CallExtra,
  ): Promise<CallToolResult | InputRound> {
    let result: Result | InputRound | CreatedTask;
    try {
      result = await route(name, args, extra);
    } catch (error) {
      // R3, outermost net: a bug anywhere in the call path still gets exactly one answer.
      logger.error({ err: error, tool: name, requestId: extra.requestId }, 'tools/call failed unexpectedly');
      result = finish(
        name,
        failure('normalization_error', `mcp-normalizer failed to answer the call to "${name}"`, {
          exception: error,
        }),
        extra.requestId,
      );
    }
    if (isInputRound(result)) return result;
    // X5: the task a server made of the call, flat (SEP-2663's CreateTaskResult), under our id.
    // The SDK passes a `tools/call` result's own `resultType` through as it is.
    if (isCreatedTask(result)) return { resultType: 'task', ...result.task } as unknown as CallToolResult;
    if (!result.success) extra.span.outcome.errorType = result.errorType;
    // SEP-2575: a downstream that needs a capability the modern caller did not declare (its
    // declaration travels down, Q2) is answered with that protocol error, not a tool failure.
    if (
      extra.span.era === 'modern' &&
      !result.success &&
      result.errorCode === String(ProtocolErrorCode.MissingRequiredClientCapability)
    ) {
      const data = (result.errorData?.['data'] ?? {}) as { requiredCapabilities?: Record<string, unknown> };
      throw new MissingRequiredClientCapabilityError(
        { requiredCapabilities: data.requiredCapabilities ?? {} },
        result.message,
      );
    }
    return deps.render(result, extra.who);
  }

  /**
   * The call pipeline, in its order; each step answers the call or hands it on:
   * 1. accept: P5, a call during shutdown is refused;
   * 2. prepare (the backend): T3 lookup, T7 explicit gate, T8 arguments; S2 answered here;
   * 3. authorize (I3, I4): the caller's policy, right after the lookup (it needs the tool) and
   *    before the gate, the arguments or any downstream: a denied call is `access_denied`;
   * 4. limit (I7): the caller's rate limits count the call; one passed refuses it (`rate_limited`);
   * 5. run (the backend): queue, deadline, the downstream call, normalize (R3), the outcome step
   *    (R4, L1, O1); or an input round to relay (Q3).
   * Rendering (R2) follows in {@link answer}.
   */
  function route(
    name: string,
    args: Record<string, unknown> | undefined,
    extra: CallExtra,
  ): Result | Promise<Result | InputRound | CreatedTask> {
    if (!deps.accepting())
      return finish(name, failure('downstream_unavailable', SHUTTING_DOWN), extra.requestId);
    // M2: `run_code`: each of its snippet's calls comes back here, as the caller's own call.
    if (backend.code !== undefined && name === backend.code.name()) return runCode(name, args, extra);
    // Synchronous once the catalog is built: no promise of its own on the hot path (I3 inside).
    const { who } = extra;
    const preparing = backend.prepareCall(name, args, extra.requestId, who.access, who.subject);
    return preparing instanceof Promise
      ? preparing.then((prepared) => limitThenRun(name, prepared, extra))
      : limitThenRun(name, preparing, extra);
  }

  /** Steps 2 to 5 of {@link route} once the call is prepared. */
  function limitThenRun(
    name: string,
    prepared: F | Result,
    extra: CallExtra,
  ): Result | Promise<Result | InputRound | CreatedTask> {
    // T7, T8, T9: refused before any downstream sees it (the backend logged it, L1); S2 answered.
    if (isAnswered(prepared)) return prepared;
    // I7: a caller over a rate limit is refused before any downstream (counted only now, once
    // the call is known to be allowed and well formed).
    const limiting = backend.limit?.(prepared, extra.who.principal, extra.requestId);
    if (limiting instanceof Promise) return limiting.then((limited) => limited ?? run(name, prepared, extra));
    return limiting ?? run(name, prepared, extra);
  }

  /** Step 5 of {@link route}: the backend runs the call. */
  function run(name: string, prepared: F, extra: CallExtra): Promise<Result | InputRound | CreatedTask> {
    const { who } = extra;
    return backend.callTool(prepared, {
      signal: extra.signal,
      exposedName: name,
      requestId: extra.requestId,
      caller: extra.caller,
      trace: extra.span.trace,
      ...(who.instance !== undefined ? { instance: who.instance } : {}),
      ...(who.subject !== undefined ? { principal: who.subject } : {}),
      ...(extra.reply !== undefined ? { reply: extra.reply } : {}),
      // P3: forward progress only when the upstream asked for it, with ITS token.
      ...(extra.onProgress !== undefined ? { onProgress: extra.onProgress } : {}),
    });
  }

  /**
   * M2: one run of `run_code`. Each tool call of the snippet goes through {@link route} with the
   * run's caller (its view, limits, holds and gate; counted and logged as a call), with no input
   * reply of its own and its own span outcome; a snippet never runs `run_code` itself. The run's
   * answer goes through the outcome step like every call's (R4, L1, O1).
   */
  async function runCode(
    name: string,
    args: Record<string, unknown> | undefined,
    extra: CallExtra,
  ): Promise<Result> {
    const code = backend.code as NonNullable<typeof backend.code>;
    const result = await code.run(
      args,
      async (tool, toolArgs, signal) => {
        if (tool === name)
          return failure('invalid_arguments', `${name} cannot be called from inside a snippet`);
        // O2: a span per call of the snippet, under the run's; the downstream's under it.
        const known = backend.exposes?.(tool) !== false;
        const traced = startSnippetCallSpan(extra.span.trace, known ? tool : undefined, extra.span.era);
        const span = { ...extra.span, trace: traced.context, outcome: {} as { errorType?: string } };
        try {
          const result = await route(tool, toolArgs, { ...extra, signal, reply: undefined, span });
          if (!isInputRound(result) && !isCreatedTask(result) && !result.success)
            span.outcome.errorType = result.errorType;
          return result;
        } finally {
          endSpan(traced.span, span.outcome.errorType);
        }
      },
      abortSignalOf(extra.signal),
    );
    return backend.answer?.(name, result, extra.requestId, extra.who.subject) ?? result;
  }

  return { answer, finish };
}
