/**
 * The Tasks extension (SEP-2663, `io.modelcontextprotocol/tasks`; issue 47, contract X5): the
 * words the pool, the app and the upstream server share. A 2026-07-28 server may answer a
 * `tools/call` of a caller that declared the extension with a `CreateTaskResult` (`resultType:
 * "task"`, the task's fields flat) instead of its result; the caller then polls `tasks/get`, answers
 * input with `tasks/update` and may `tasks/cancel`. The gateway relays all of it under task ids of
 * its own, each bound to the server, the downstream's id and the caller that created it. Pure: no
 * I/O, no SDK.
 */
import { deeperThan, isRecord } from './json.js';

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

/** SEP-2663's task statuses: a task in any other is no task (X9). */
export const TASK_STATUSES: ReadonlySet<string> = new Set([
  'working',
  'input_required',
  ...TERMINAL_STATUSES,
]);

/**
 * X9: how far a downstream's task fields may go. A text past its bound is cut (with `…`), a
 * number is kept within its range, a field of the wrong kind or status is left out; a task that
 * breaks a bound that cannot be cut (its id, its status, its questions, its depth) is no task.
 */
export const TASK_BOUNDS = Object.freeze({
  /** The downstream's task id (it is kept, and shared through the store). */
  idChars: 256,
  /** `statusMessage`, an error's `message`. */
  textChars: 4096,
  /** `createdAt`, `lastUpdatedAt` (ISO 8601 times). */
  timeChars: 64,
  /** `pollIntervalMs`, relayed to a 2026 host: within [50 ms, 1 min]. */
  minPollMs: 50,
  maxPollMs: 60_000,
  /** `inputRequests`: at most this many, at most this many bytes of JSON in all. */
  inputRequests: 32,
  inputBytes: 256 * 1024,
  /** An error's `data`, in bytes of JSON (left out past it). */
  dataBytes: 64 * 1024,
  /** How deep a task's values may nest (a completed result included). */
  depth: 256,
});

const cut = (text: string, max: number): string => (text.length <= max ? text : `${text.slice(0, max - 1)}…`);
const jsonBytes = (value: unknown): number => Buffer.byteLength(JSON.stringify(value) ?? '', 'utf8');

/** X9: why `task` is no task the gateway relays; undefined when it is one. */
export function invalidTask(task: Readonly<Record<string, unknown>>): string | undefined {
  const id = task['taskId'];
  if (typeof id !== 'string' || id.length === 0 || id.length > TASK_BOUNDS.idChars)
    return `its taskId is not a string of 1 to ${TASK_BOUNDS.idChars} characters`;
  if (!TASK_STATUSES.has(task['status'] as string))
    return `its status ${JSON.stringify(task['status'])} is none of SEP-2663's`;
  if (deeperThan(task, TASK_BOUNDS.depth)) return `it nests deeper than ${TASK_BOUNDS.depth} levels`;
  const asks = task['inputRequests'];
  if (task['status'] === 'input_required' && asks !== undefined) {
    if (!isRecord(asks) || !Object.values(asks).every(isRecord)) return 'its inputRequests are not requests';
    if (Object.keys(asks).length > TASK_BOUNDS.inputRequests || jsonBytes(asks) > TASK_BOUNDS.inputBytes)
      return `it asks more than ${TASK_BOUNDS.inputRequests} questions or ${TASK_BOUNDS.inputBytes} bytes at once`;
  }
  return undefined;
}

/**
 * X5, X9: a downstream's task as the caller sees it (call {@link invalidTask} first): under the
 * gateway's `taskId`, with SEP-2663's fields only, each within {@link TASK_BOUNDS}; `result`
 * only when completed, `error` only when failed, `inputRequests` only when input is required;
 * `ttlMs` as long as the gateway keeps the task. Not `resultType`, which the gateway's SDK stamps,
 * nor `_meta`, whose server identity is the downstream's, not ours.
 */
export function exposeTask(task: Readonly<Record<string, unknown>>, taskId: string): Record<string, unknown> {
  const status = task['status'] as string;
  const out: Record<string, unknown> = { taskId, status };
  const message = task['statusMessage'];
  if (typeof message === 'string') out['statusMessage'] = cut(message, TASK_BOUNDS.textChars);
  for (const key of ['createdAt', 'lastUpdatedAt'])
    if (typeof task[key] === 'string' && (task[key] as string).length <= TASK_BOUNDS.timeChars)
      out[key] = task[key];
  if ('ttlMs' in task) out['ttlMs'] = rememberMs(task);
  const poll = task['pollIntervalMs'];
  if (typeof poll === 'number' && Number.isFinite(poll))
    out['pollIntervalMs'] = Math.min(
      TASK_BOUNDS.maxPollMs,
      Math.max(TASK_BOUNDS.minPollMs, Math.round(poll)),
    );
  if (status === 'completed' && isRecord(task['result'])) out['result'] = task['result'];
  if (status === 'input_required' && isRecord(task['inputRequests']))
    out['inputRequests'] = task['inputRequests'];
  const error = task['error'];
  if (status === 'failed' && isRecord(error)) {
    const code = Number.isInteger(error['code']) ? error['code'] : -32603;
    const text =
      typeof error['message'] === 'string' ? cut(error['message'], TASK_BOUNDS.textChars) : 'Task failed';
    const data =
      error['data'] !== undefined && jsonBytes(error['data']) <= TASK_BOUNDS.dataBytes
        ? { data: error['data'] }
        : {};
    out['error'] = { code, message: text, ...data };
  }
  return out;
}

/** How long the gateway remembers a task: its `ttlMs`, within [1 minute, 1 day] (null: a day). */
export function rememberMs(task: Readonly<Record<string, unknown>>): number {
  const ttl = task['ttlMs'];
  const day = 86_400_000;
  if (typeof ttl !== 'number' || !Number.isFinite(ttl)) return day;
  return Math.min(day, Math.max(60_000, Math.ceil(ttl)));
}
