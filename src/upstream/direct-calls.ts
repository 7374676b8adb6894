/**
 * The hot path of a 2025 stdio session (U1, P3): a plain tools/call request is answered beside
 * the SDK `Server` that serves the session, by the same handler, rather than through it.
 *
 * Why: the SDK v2 `Protocol` classifies every incoming message with up to four zod `safeParse`s,
 * validates the request and our own result against the 2025 schemas (zod again), and builds a
 * context of a dozen closures per request; that was a third of the gateway's CPU per echo call
 * (docs/performance-log.md). The stdio line was already checked as a JSON-RPC envelope
 * (`wire/lines.ts`), and the result is the renderer's, built to the schema.
 *
 * How: once the session's `Server` is connected, its transport's `onmessage` is wrapped. A
 * `tools/call` request whose params hold only a string `name`, an object `arguments` and a plain
 * `_meta` goes to the handler here; anything else (another method, a task-augmented call, a field
 * the SDK would reject or lift) reaches the SDK as before, so every refusal stays the SDK's. A
 * `notifications/cancelled` for a call answered here aborts it; others go to the SDK.
 *
 * What the SDK promises, kept rule for rule: the handler gets the request's signal, `_meta` and
 * `notify` (the signal is a `LazySignal`, `core/call-signal.ts`: no `AbortController` unless
 * something reads `signal`); a cancelled call is never answered; a thrown error becomes a
 * JSON-RPC error with its code (-32603 when it has none; 2025 maps -32002 to -32602); an
 * `input_required` round toward this 2025 host goes through the SDK's own legacy shim, which
 * asks the host and calls the handler again; a result is checked against the 2025 schema only
 * when its shape is not the renderer's plain one; the session's close aborts every call in
 * flight.
 */
import { CallToolResultSchema } from '@modelcontextprotocol/core';
import {
  isInputRequiredResult,
  ProtocolError,
  ProtocolErrorCode,
  SdkError,
  SdkErrorCode,
} from '@modelcontextprotocol/server';
import type {
  CallToolRequest,
  CallToolResult,
  InputRequiredResult,
  JSONRPCMessage,
  Server,
  ServerContext,
  Transport,
} from '@modelcontextprotocol/server';
import { LazySignal, type CallSignal } from '../core/call-signal.js';
import { isRecord } from '../core/json.js';

/** The session's tools/call handler, as registered on its `Server`. */
export type CallHandler = (
  request: CallToolRequest,
  ctx: ServerContext,
) => Promise<CallToolResult | InputRequiredResult>;

/**
 * The part of the SDK `Server` the direct path reaches past its public surface: the 2025 shim
 * that turns an `input_required` round into requests on the host's session (SDK 2.4). Checked
 * at wiring: without it, every call takes the SDK's path.
 */
interface LegacyShimHost {
  _legacyInputRequiredShim(): {
    fulfill(
      method: string,
      handler: CallHandler,
      request: CallToolRequest,
      ctx: ServerContext,
      first: InputRequiredResult,
    ): Promise<CallToolResult | InputRequiredResult>;
  };
}

/** A direct call carries no request state (a round's retry is the SDK's). */
const noState = (): undefined => undefined;

/**
 * The cancellation of the call `ctx` serves: the direct path's own (its `callSignal`, which the
 * SDK's input-round shim copies with the rest of `mcpReq`), else the SDK's per-request signal.
 * @example const signal = callSignalOf(ctx);
 */
export function callSignalOf(ctx: ServerContext): CallSignal {
  const own = (ctx.mcpReq as { callSignal?: unknown }).callSignal;
  return own instanceof LazySignal ? own : ctx.mcpReq.signal;
}

const PLAIN_PARAMS = new Set(['name', 'arguments', '_meta']);
/** 2025 error code the SDK's 2025 codec rewrites on the way out. */
const RESOURCE_NOT_FOUND_2026 = -32002;

/** A tools/call whose params the SDK would take as they are (see the module comment). */
function isPlainCall(
  message: JSONRPCMessage,
): message is JSONRPCMessage & CallToolRequest & { id: string | number } {
  if (!('method' in message) || message.method !== 'tools/call' || !('id' in message)) return false;
  const params = message.params;
  if (!isRecord(params) || typeof params['name'] !== 'string') return false;
  for (const key in params) if (!PLAIN_PARAMS.has(key)) return false;
  const args = params['arguments'];
  if (args !== undefined && !isRecord(args)) return false;
  const meta = params['_meta'];
  if (meta === undefined) return true;
  if (!isRecord(meta)) return false;
  const token = meta['progressToken'];
  if (token !== undefined && typeof token !== 'string' && typeof token !== 'number') return false;
  // 2026-07-28 envelope keys are the SDK's to lift or refuse.
  for (const key in meta) if (key.startsWith('io.modelcontextprotocol/')) return false;
  return true;
}

/** The renderer's result shape: the SDK's schema would accept it as it is. */
function isPlainResult(result: CallToolResult): boolean {
  const structured = result.structuredContent;
  return (
    Array.isArray(result.content) &&
    (structured === undefined || isRecord(structured)) &&
    (result.isError === undefined || typeof result.isError === 'boolean')
  );
}

/**
 * Answers the plain tools/call requests of `server`'s session on `transport` with `handler`
 * (module comment). `transport` must be connected to `server`.
 * @example
 * await server.connect(transport);
 * answerCallsDirectly(server, transport, handler);
 */
export function answerCallsDirectly(server: Server, transport: Transport, handler: CallHandler): void {
  const shim = server as unknown as Partial<LegacyShimHost>;
  if (typeof shim._legacyInputRequiredShim !== 'function') return;
  const inflight = new Map<string | number, LazySignal>();
  const sdkMessage = transport.onmessage;
  const sdkClose = transport.onclose;

  const send = (message: JSONRPCMessage): void => {
    transport.send(message).catch(() => {
      // The host is gone: the session's close follows and aborts what is left.
    });
  };

  const notify = (notification: { method: string; params?: Record<string, unknown> }): Promise<void> =>
    transport.send({ jsonrpc: '2.0', ...notification } as JSONRPCMessage);

  const answer = (request: CallToolRequest & { id: string | number }): void => {
    const id = request.id;
    const cancel = new LazySignal();
    inflight.set(id, cancel);
    // Its cancellation is a LazySignal, which the call path listens to (`callSignal`): a real
    // AbortSignal is made only if something reads `signal` (the SDK's input-round shim, which
    // also copies `mcpReq` with a spread: hence an own getter), not one per call.
    const ctx = {
      mcpReq: {
        id,
        method: 'tools/call',
        _meta: request.params._meta,
        callSignal: cancel,
        get signal(): AbortSignal {
          return cancel.toAbortSignal();
        },
        requestState: noState,
        notify,
      },
    } as unknown as ServerContext;
    const done = (): void => {
      if (inflight.get(id) === cancel) inflight.delete(id);
    };
    const answered = (result: CallToolResult): void => {
      done();
      if (!cancel.aborted) send({ jsonrpc: '2.0', id, result } as JSONRPCMessage);
    };
    const failed = (thrownValue: unknown): void => {
      done();
      if (cancel.aborted) return;
      const error = (isRecord(thrownValue) || thrownValue instanceof Error ? thrownValue : {}) as {
        code?: unknown;
        message?: unknown;
        data?: unknown;
      };
      const thrown = Number.isSafeInteger(error.code)
        ? (error.code as number)
        : ProtocolErrorCode.InternalError;
      const code = thrown === RESOURCE_NOT_FOUND_2026 ? ProtocolErrorCode.InvalidParams : thrown;
      const message = typeof error.message === 'string' ? error.message : 'Internal error';
      send({
        jsonrpc: '2.0',
        id,
        error: { code, message, ...(error.data !== undefined ? { data: error.data } : {}) },
      } as JSONRPCMessage);
    };
    // The handler starts at once (its downstream request goes out before this returns); a throw
    // is answered like a rejection. One reaction per call: an input round (rare) takes the shim's
    // chain; a plain result is answered in the same reaction.
    let started: Promise<CallToolResult | InputRequiredResult>;
    try {
      started = handler(request, ctx);
    } catch (error) {
      started = Promise.reject(error);
    }
    started.then((first) => {
      if (!isInputRequiredResult(first)) {
        let result: CallToolResult;
        try {
          result = checked(first);
        } catch (error) {
          failed(error);
          return;
        }
        answered(result);
        return;
      }
      (shim as LegacyShimHost)
        ._legacyInputRequiredShim()
        .fulfill('tools/call', handler, request, ctx, first)
        .then((result) => answered(checked(result)))
        .catch(failed);
    }, failed);
  };

  transport.onmessage = ((message: JSONRPCMessage, extra) => {
    if (isPlainCall(message)) {
      answer(message);
      return;
    }
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const params = message.params as { requestId?: string | number; reason?: unknown } | undefined;
      const cancel = params?.requestId === undefined ? undefined : inflight.get(params.requestId);
      if (cancel !== undefined) {
        cancel.abort(params?.reason);
        return;
      }
    }
    sdkMessage?.(message, extra);
  }) as NonNullable<Transport['onmessage']>;

  transport.onclose = () => {
    try {
      sdkClose?.();
    } finally {
      // As the SDK does: the session's own close hook first, then every call in flight aborted.
      const cancels = [...inflight.values()];
      inflight.clear();
      for (const cancel of cancels)
        cancel.abort(new SdkError(SdkErrorCode.ConnectionClosed, 'Connection closed'));
    }
  };
}

/**
 * The result as the SDK would send it: the renderer's plain shape as it is; anything else
 * through the 2025 schema, whose refusal is the SDK's -32602.
 */
function checked(result: CallToolResult | InputRequiredResult): CallToolResult {
  const plain = result as CallToolResult;
  if (isPlainResult(plain)) return plain;
  const parsed = CallToolResultSchema.safeParse(plain);
  if (parsed.success) return parsed.data as CallToolResult;
  throw new ProtocolError(
    ProtocolErrorCode.InvalidParams,
    `Invalid tools/call result: ${parsed.error.message}`,
  );
}
