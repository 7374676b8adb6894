/**
 * X5 (SEP-2663): a 2026-07-28 server's `CreateTaskResult` reaches the pool. The SDK v2 client
 * decodes `resultType` itself and rejects any kind but `complete` and `input_required` (2.4.0
 * has no Tasks extension), losing the task. So, once a modern client is connected, its
 * transport's `onmessage` is wrapped: a response whose result is `resultType: "task"` is handed
 * to the SDK as a complete, empty tool result that carries the task under a key of ours, and
 * {@link takeCreatedTask} reads it back in the dispatcher. Every other message passes untouched.
 *
 * X8: no private channel travels in data a downstream controls. The key names a random nonce of
 * this process, which no server can know, and any `_meta` key of the gateway's namespace a
 * downstream sends in a result is stripped before the SDK sees it: a plain result that carries
 * one is a plain result.
 */
import { randomUUID } from 'node:crypto';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { isRecord } from '../core/json.js';

/** The gateway's own `_meta` namespace: never taken from a downstream. */
const OURS = 'io.github.mcp-normalizer/';
/** Where a lifted task travels inside the SDK (a key no server can send: its nonce is this process's). */
const LIFTED = `${OURS}created-task/${randomUUID()}`;

/** `result` without `_meta` keys of the gateway's namespace (the same object when it has none). */
function stripOurs(result: Record<string, unknown>): Record<string, unknown> {
  const meta = result['_meta'];
  if (!isRecord(meta) || !Object.keys(meta).some((key) => key.startsWith(OURS))) return result;
  const kept = Object.fromEntries(Object.entries(meta).filter(([key]) => !key.startsWith(OURS)));
  return { ...result, _meta: kept };
}

function lift(message: JSONRPCMessage): JSONRPCMessage {
  const result = (message as { result?: unknown }).result;
  if (!isRecord(result)) return message;
  if (result['resultType'] !== 'task') {
    const stripped = stripOurs(result);
    return stripped === result ? message : { ...message, result: stripped };
  }
  return {
    ...message,
    result: { resultType: 'complete', content: [], _meta: { [LIFTED]: stripOurs(result) } },
  };
}

/** Wraps the `onmessage` the SDK installed on `transport` (call once it is connected). */
export function liftTaskResults(transport: Transport): void {
  const handler = transport.onmessage;
  if (handler === undefined) return;
  transport.onmessage = (message, extra) => handler(lift(message), extra);
}

/** The task a lifted result carries, if it is one. */
export function takeCreatedTask(raw: unknown): Record<string, unknown> | undefined {
  if (!isRecord(raw) || !isRecord(raw['_meta'])) return undefined;
  const task = raw['_meta'][LIFTED];
  return isRecord(task) ? task : undefined;
}
