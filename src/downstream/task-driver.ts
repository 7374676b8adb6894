/**
 * X5 for a caller that cannot take tasks itself: a 2025 host, for which the Tasks extension
 * (SEP-2663) is not defined. A 2026 server that answers its call with -32021 for want of the
 * extension is called again with the extension declared, and the gateway runs the task to its
 * end: it polls `tasks/get` at the server's `pollIntervalMs` (bounded), asks the caller what the
 * task asks (`input_required`: each request once, as an input round of the call, Q3) and answers
 * with `tasks/update`, and resolves with the completed task's result, which the normalizer
 * judges like any other (R3). A failed task is its JSON-RPC error; a cancelled one an error. The
 * call's `timeout_ms` bounds the whole task; a call that ends before its task (cancelled, timed
 * out, asked what its host cannot answer) cancels it. The 2025 tasks of a 2025 server are task-runner.ts's (Q6).
 */
import { ProtocolError, ProtocolErrorCode, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Progress } from '@modelcontextprotocol/client';
import { hostCanAnswer, type Caller, type ClientAsk } from '../core/input.js';
import { isRecord } from '../core/json.js';
import { invalidTask, TASKS_EXTENSION, TERMINAL_STATUSES } from '../core/tasks.js';
import type { CallSignal } from '../core/call-signal.js';
import type { Timers } from '../core/timers.js';
import { takeCreatedTask } from './task-results.js';
import { boundedPollMs, pause, type SendRequest } from './task-runner.js';

/** Whether `error` is a server's -32021 that names the Tasks extension. */
export function needsTasks(error: unknown): boolean {
  if (!(error instanceof ProtocolError) || error.code !== -32021) return false;
  const data = error.data as { requiredCapabilities?: { extensions?: Record<string, unknown> } } | undefined;
  return data?.requiredCapabilities?.extensions?.[TASKS_EXTENSION] !== undefined;
}

/** What a driven task needs besides the call. */
export interface DriveOptions {
  readonly timers: Timers;
  readonly timeoutMs: number;
  readonly signal?: CallSignal;
  readonly onProgress?: (progress: Progress) => void;
}

/** X9: the most questions one driven task may ask its host, in all its rounds. */
export const MAX_DRIVEN_QUESTIONS = 32;

/**
 * The host's answers to the task's requests it has not answered yet: one round, its questions
 * put to the host one after another (a person answers one dialog at a time), at most
 * {@link MAX_DRIVEN_QUESTIONS} in the task's whole run.
 */
async function answers(
  requests: Record<string, unknown>,
  answered: Set<string>,
  caller: Caller,
): Promise<Record<string, unknown> | undefined> {
  const open = Object.entries(requests).filter(([key, request]) => !answered.has(key) && isRecord(request));
  if (open.length === 0) return undefined;
  // Q2: what the host cannot answer is refused at once, as a push to it would be.
  const unanswerable = open.find(
    ([, request]) => !hostCanAnswer(caller.capabilities, request as unknown as ClientAsk),
  );
  if (unanswerable !== undefined)
    throw new ProtocolError(
      ProtocolErrorCode.MethodNotFound,
      `The task asks its client for ${String((unanswerable[1] as { method?: unknown }).method)}, which the client behind mcp-normalizer does not support: the task was cancelled`,
    );
  if (answered.size + open.length > MAX_DRIVEN_QUESTIONS)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The task asked its client more than ${MAX_DRIVEN_QUESTIONS} questions: the task was cancelled`,
    );
  const replies: Record<string, unknown> = {};
  for (const [key, request] of open) {
    answered.add(key);
    replies[key] = await caller.ask(request as unknown as ClientAsk);
  }
  return replies;
}

/**
 * Calls with `send` (which declares the extension) and runs the task the server makes of the call
 * to its end; resolves with its result (or the server's plain answer, if it made no task).
 */
export async function driveTask(
  send: SendRequest,
  params: Record<string, unknown>,
  caller: Caller,
  options: DriveOptions,
): Promise<unknown> {
  const { timers, signal } = options;
  const deadline = timers.now() + options.timeoutMs;
  const left = (): number => deadline - timers.now();
  const bounds = () => ({ ...(signal !== undefined ? { signal } : {}), timeoutMs: Math.max(1, left()) });
  const created = await send('tools/call', params, bounds());
  let task = takeCreatedTask(created);
  if (task === undefined) return created;
  const why = invalidTask(task);
  if (why !== undefined)
    throw new ProtocolError(
      ProtocolErrorCode.InternalError,
      `The server answered with no valid task: ${why}`,
    );
  const taskId = String(task['taskId']);
  const answered = new Set<string>();
  try {
    for (let polls = 1; !TERMINAL_STATUSES.has(String(task['status'])); polls++) {
      const requests = task['status'] === 'input_required' ? task['inputRequests'] : undefined;
      const inputResponses = isRecord(requests) ? await answers(requests, answered, caller) : undefined;
      if (inputResponses !== undefined) await send('tasks/update', { taskId, inputResponses }, bounds());
      else await pause(timers, Math.min(boundedPollMs(task['pollIntervalMs']), Math.max(0, left())), signal);
      if (left() <= 0)
        throw new SdkError(
          SdkErrorCode.RequestTimeout,
          `Task ${taskId} did not end within ${options.timeoutMs} ms`,
          {
            timeout: options.timeoutMs,
          },
        );
      const polled = await send('tasks/get', { taskId }, bounds());
      task = isRecord(polled) ? { ...polled, taskId } : { taskId };
      // X9: a poll that is no task (a status outside SEP-2663, too many questions) ends the call.
      const invalid = invalidTask(task);
      if (invalid !== undefined)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `The server answered tasks/get for task ${taskId} with no valid task: ${invalid}`,
        );
      // P3: a status message is the task's progress (and restarts nothing: the deadline holds).
      if (typeof task['statusMessage'] === 'string')
        options.onProgress?.({ progress: polls, message: task['statusMessage'] });
    }
  } catch (error) {
    // The call ended before its task (cancelled, timed out, a question the host cannot answer, a
    // failed poll): the task must not run on for nobody. The cancel goes out on its own, never
    // under the call's signal (aborted by then, it would stop the cancel before it is sent).
    void send('tasks/cancel', { taskId }, { signal: undefined, timeoutMs: 5000 }).catch(() => {});
    throw error;
  }
  if (task['status'] === 'completed') return task['result'];
  if (task['status'] === 'failed') {
    const error = isRecord(task['error']) ? task['error'] : {};
    const code = typeof error['code'] === 'number' ? error['code'] : -32603;
    throw new ProtocolError(code, String(error['message'] ?? `Task ${taskId} failed`), error['data']);
  }
  throw new Error(`The server cancelled task ${taskId}`);
}
