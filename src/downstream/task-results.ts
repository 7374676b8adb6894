/**
 * X5 (SEP-2663): a 2026-07-28 server's `CreateTaskResult` reaches the pool. The SDK v2 client
 * decodes `resultType` itself and rejects any kind but `complete` and `input_required` (2.4.0
 * has no Tasks extension), losing the task. So, once a modern client is connected, its
 * transport's `onmessage` is wrapped: a response whose result is `resultType: "task"` is handed
 * to the SDK as a complete, empty tool result that carries the task under a key of ours, and
 * {@link takeCreatedTask} reads it back in the dispatcher. Every other message passes untouched.
 */
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { isRecord } from '../core/json.js';

/** Where a lifted task travels inside the SDK (a `_meta` key no server sends). */
const LIFTED = 'io.github.mcp-normalizer/created-task';

function lift(message: JSONRPCMessage): JSONRPCMessage {
  const result = (message as { result?: unknown }).result;
  if (!isRecord(result) || result['resultType'] !== 'task') return message;
  return { ...message, result: { resultType: 'complete', content: [], _meta: { [LIFTED]: result } } };
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
