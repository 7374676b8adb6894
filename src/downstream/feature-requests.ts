/**
 * The U5 requests a pool sends besides tools/call (`prompts/get`, `resources/read`, subscriptions,
 * completions): their options, and the params of a relayed input round's retry (Q3).
 */
import type { Caller, InputReply } from '../core/input.js';

/** Options of the U5 requests (`Pool.getPrompt`, `Pool.readResource`, `Pool.complete`, ...). */
export interface RequestOptions {
  /** The upstream request's cancellation: aborting it cancels the downstream request. */
  readonly signal?: AbortSignal;
  /** Q3: the retry of a relayed `input_required` round (`prompts/get`, `resources/read`). */
  readonly reply?: InputReply;
  /** Q2: the host behind the request (its capabilities travel to a 2026 server). */
  readonly caller?: Caller;
}

/** Q3: `params` with a relayed round's answers and the server's own state. */
export function withReply(
  params: Record<string, unknown>,
  reply: InputReply | undefined,
): Record<string, unknown> {
  if (reply === undefined) return params;
  return {
    ...params,
    inputResponses: reply.inputResponses,
    ...(reply.requestState !== undefined ? { requestState: reply.requestState } : {}),
  };
}
