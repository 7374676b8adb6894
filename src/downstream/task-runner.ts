/**
 * Q6: a tool that only runs as a task (2025-11-25 `execution.taskSupport: "required"`) is called
 * the way its server demands, and answered like any call: the gateway sends the task-augmented
 * `tools/call`, polls `tasks/get` at the server's `pollInterval` until the task ends, and reads
 * `tasks/result`, whose CallToolResult the normalizer judges like any other (R3). The upstream
 * client sees a plain tool. Cancelling the call cancels the task (`tasks/cancel`); the call's
 * `timeout_ms` bounds the whole task and is its `ttl`.
 */
import { SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Progress } from '@modelcontextprotocol/client';
import type { CallSignal } from '../core/call-signal.js';
import type { Timers } from '../core/timers.js';

/** One request to the downstream, as `Connection.request` sends it. */
export type SendRequest = (
  method: string,
  params: Record<string, unknown>,
  options: { signal?: CallSignal | undefined; timeoutMs?: number },
) => Promise<unknown>;

/** What a task run needs besides the call. */
export interface TaskRunOptions {
  readonly timers: Timers;
  readonly timeoutMs: number;
  readonly signal?: CallSignal;
  readonly onProgress?: (progress: Progress) => void;
}

/** The poll interval bounds (ms): a server's `pollInterval` is kept within them. */
const MIN_POLL_MS = 50;
const MAX_POLL_MS = 5000;
const DEFAULT_POLL_MS = 500;

const TERMINAL = new Set(['completed', 'failed', 'cancelled']);

interface TaskView {
  readonly taskId?: unknown;
  readonly status?: unknown;
  readonly statusMessage?: unknown;
  readonly pollInterval?: unknown;
}

/** A server's poll interval (ms; a 2025 task's `pollInterval`, a 2026 one's `pollIntervalMs`), bounded. */
export function boundedPollMs(asked: unknown): number {
  return Math.min(MAX_POLL_MS, Math.max(MIN_POLL_MS, typeof asked === 'number' ? asked : DEFAULT_POLL_MS));
}

const pollMs = (task: TaskView): number => boundedPollMs(task.pollInterval);

/** Waits `ms`, or rejects with the signal's reason once it aborts. */
export function pause(timers: Timers, ms: number, signal: CallSignal | undefined): Promise<void> {
  return new Promise((resolve, reject) => {
    if (signal?.aborted === true) return reject(signal.reason as Error);
    const onAbort = (): void => {
      timers.clearTimeout(timer);
      reject(signal?.reason as Error);
    };
    const timer = timers.setTimeout(() => {
      signal?.removeEventListener('abort', onAbort);
      resolve();
    }, ms);
    signal?.addEventListener('abort', onAbort, { once: true });
  });
}

/** True for a tool that only runs as a task. */
export function taskOnly(tool: { readonly execution?: unknown }): boolean {
  return (tool.execution as { taskSupport?: unknown } | undefined)?.taskSupport === 'required';
}

/** Runs `tool` as a task on the downstream; resolves with the task's raw result. */
export async function runAsTask(
  send: SendRequest,
  tool: string,
  args: Record<string, unknown>,
  options: TaskRunOptions,
): Promise<unknown> {
  const { timers, signal } = options;
  const deadline = timers.now() + options.timeoutMs;
  const left = (): number => deadline - timers.now();
  const created = await send(
    'tools/call',
    { name: tool, arguments: args, task: { ttl: options.timeoutMs } },
    { ...(signal !== undefined ? { signal } : {}), timeoutMs: options.timeoutMs },
  );
  let task = (created as { task?: TaskView } | null)?.task;
  // A server that answered the call plainly after all: that is the result.
  if (typeof task?.taskId !== 'string') return created;
  const taskId = task.taskId;
  try {
    for (let polls = 1; !TERMINAL.has(String(task.status)); polls++) {
      await pause(timers, Math.min(pollMs(task), Math.max(0, left())), signal);
      if (left() <= 0) {
        throw new SdkError(
          SdkErrorCode.RequestTimeout,
          `Task ${taskId} did not end within ${options.timeoutMs} ms`,
          {
            timeout: options.timeoutMs,
          },
        );
      }
      task = (await send(
        'tasks/get',
        { taskId },
        { ...(signal !== undefined ? { signal } : {}), timeoutMs: left() },
      )) as TaskView;
      // P3: a status message is the task's progress (and restarts nothing: the deadline holds).
      if (typeof task.statusMessage === 'string')
        options.onProgress?.({ progress: polls, message: task.statusMessage });
    }
    if (task.status === 'cancelled') throw new Error(`The server cancelled task ${taskId}`);
    return await send(
      'tasks/result',
      { taskId },
      { ...(signal !== undefined ? { signal } : {}), timeoutMs: Math.max(1, left()) },
    );
  } catch (error) {
    // The call ended early (cancelled, timed out): the task must not run on for nobody. The
    // cancel goes out on its own, never under the call's signal (aborted by then, it would stop
    // the cancel before it is sent: a host's cancel left the task running).
    if (signal?.aborted === true || left() <= 0)
      void send('tasks/cancel', { taskId }, { signal: undefined, timeoutMs: 5000 }).catch(() => {});
    throw error;
  }
}
