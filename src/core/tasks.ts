/**
 * The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`; issue 47, contract X5): the
 * words the pool, the app and the upstream server share. A 2026-07-28 server may answer a
 * `tools/call` of a caller that declared the extension with a `CreateTaskResult` (`resultType:
 * "task"`, the task's fields flat) instead of its result; the caller then polls `tasks/get`, answers
 * input with `tasks/update` and may `tasks/cancel`. The gateway relays all of it under task ids of
 * its own, each bound to the server, the downstream's id and the caller that created it. Pure: no
 * I/O, no SDK.
 */
import { isRecord } from './json.js';

/** The extension's identifier, as declared under `capabilities.extensions`. */
export const TASKS_EXTENSION = 'io.modelcontextprotocol/tasks';

/** A task's statuses that never change again. */
export const TERMINAL_STATUSES: ReadonlySet<string> = new Set(['completed', 'failed', 'cancelled']);

/** A downstream's `CreateTaskResult` to a call, to relay to the caller under the gateway's id. */
export interface CreatedTask {
  readonly kind: 'task';
  /** The task's fields as the downstream sent them (`taskId` is the downstream's). */
  readonly task: Readonly<Record<string, unknown>>;
  readonly server: string;
  readonly tool: string;
}

/** Narrows a call's outcome to a {@link CreatedTask}. */
export function isCreatedTask(value: unknown): value is CreatedTask {
  return (value as { kind?: unknown } | null)?.kind === 'task';
}

/** Whether capabilities (a host's, a server's) declare the extension. */
export function declaresTasks(capabilities: { readonly extensions?: object } | undefined): boolean {
  const extensions = capabilities?.extensions as Record<string, unknown> | undefined;
  return extensions !== undefined && isRecord(extensions[TASKS_EXTENSION]);
}

/** The error data of -32021 when a caller did not declare the extension (SEP-2663). */
export const TASKS_REQUIRED = Object.freeze({
  requiredCapabilities: { extensions: { [TASKS_EXTENSION]: {} } },
});

/**
 * A downstream's task fields as the caller sees them: under the gateway's `taskId`, without what
 * belonged to the downstream's answer rather than to the task (`resultType`, which the gateway's
 * SDK stamps, and `_meta`, whose server identity is the downstream's, not ours).
 */
export function exposeTask(task: Readonly<Record<string, unknown>>, taskId: string): Record<string, unknown> {
  const { resultType: _type, _meta: _meta, ...fields } = task;
  return { ...fields, taskId };
}

/** How long the gateway remembers a task: its `ttlMs`, within [1 minute, 1 day] (null: a day). */
export function rememberMs(task: Readonly<Record<string, unknown>>): number {
  const ttl = task['ttlMs'];
  const day = 86_400_000;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl)) return day;
  return Math.min(day, Math.max(60_000, Math.ceil(ttl)));
}
