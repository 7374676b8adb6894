/**
 * Tasks through the gateway (SEP-2663; issue 47, contract X5). A 2026-07-28 server that declares
 * the extension may answer a call of a caller that declared it too with a task: the gateway keeps
 * the task under an id of its own (random, so it cannot be guessed), bound to the server, the
 * downstream's id, the tool and the caller that created it (its principal; every anonymous caller
 * is one), and relays `tasks/get`, `tasks/update` and `tasks/cancel` for that caller only: to
 * anyone else the task does not exist (-32602), as an unknown one. A completed task's result is
 * the call's result, judged by the normalizer like any other (R3) and rendered in the caller's
 * envelope upstream.
 *
 * The book is in memory, each entry kept for the task's `ttlMs` (within a minute and a day), at
 * most {@link MAX_TASKS_PER_CALLER} for one principal (its oldest goes first: one caller's flood
 * forgets its own tasks, never another's) and {@link MAX_TASKS} in all (then the oldest of the
 * principal holding the most goes); with `store:` it is also written to the shared store, so that a
 * replica that did not create a task still finds it (whether it reaches the task then is the
 * server's: a remote server's tasks are everybody's, a stdio child's are its replica's).
 */
import { randomUUID } from 'node:crypto';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Config } from '../../config/types.js';
import { normalizeCallToolResult } from '../../core/normalize.js';
import { deeperThan, isRecord } from '../../core/json.js';
import { failure, type Result } from '../../core/result.js';
import { exposeTask, invalidTask, rememberMs, TASK_BOUNDS, type CreatedTask } from '../../core/tasks.js';
import type { Pool } from '../../downstream/pool.js';
import type { TaskRequestOptions, TasksPort } from '../../upstream/ext/tasks.js';
import { routedRecord, rpcError } from '../routed.js';
import type { ServerSource } from '../servers.js';
import type { RateLimiter } from '../state/rate-limiter.js';
import { KEYS, type SharedStore } from '../state/store.js';
import type { LimitVerdict } from '../../core/rate-limits.js';
import { parseBoundedJson, RECORD_BOUNDS } from '../../core/bounded-json.js';

/** The most tasks remembered at once. */
export const MAX_TASKS = 10_000;
/** X9: the most tasks remembered at once for one principal (every anonymous caller is one). */
export const MAX_TASKS_PER_CALLER = 1_000;

/** X5: what the outcome step of a completed task's answer is told (its call's names and caller). */
export type AnsweredTask = Pick<TaskRecord, 'server' | 'tool' | 'owner' | 'exposed'>;

/** One task the gateway relays. */
interface TaskRecord {
  readonly server: string;
  /** The downstream's own tool name and task id. */
  readonly tool: string;
  readonly taskId: string;
  /** Who created it: a principal, or "" for every anonymous caller. */
  readonly owner: string;
  readonly expiresAt: number;
  /** When the call became a task (epoch ms; absent in records of earlier versions). */
  readonly startedAt?: number;
  /** The tool's exposed name, which the caller's rate limits count (absent: earlier versions). */
  readonly exposed?: string;
}

/** The app's side of the tasks: the upstream's port, and where calls leave their tasks. */
export interface TaskRelay extends TasksPort {
  /** A downstream's new task of tool `exposed`, kept for `owner`: the task as the caller sees it. */
  created(
    outcome: CreatedTask,
    owner: string | undefined,
    exposed?: string,
  ): Promise<Record<string, unknown>>;
  /** O1: the tasks this replica relays now (not yet expired), by server. */
  counts(): ReadonlyMap<string, number>;
}

/** X9: a task's request past the caller's rate limit (a server error code, as -32021 is one). */
const RATE_LIMITED = -32029;

const notFound = (taskId: string): Error =>
  rpcError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found: ${taskId}`);

/** A record as the store keeps it, if it is one. */
function parseRecord(json: string): TaskRecord | undefined {
  const value = parseBoundedJson(json, RECORD_BOUNDS);
  if (!isRecord(value)) return undefined;
  const { server, tool, taskId, owner, expiresAt, startedAt, exposed } = value;
  return typeof server === 'string' &&
    typeof tool === 'string' &&
    typeof taskId === 'string' &&
    taskId.length <= TASK_BOUNDS.idChars &&
    typeof owner === 'string' &&
    typeof expiresAt === 'number'
    ? {
        server,
        tool,
        taskId,
        owner,
        expiresAt,
        ...(typeof startedAt === 'number' ? { startedAt } : {}),
        ...(typeof exposed === 'string' ? { exposed } : {}),
      }
    : undefined;
}

/** Builds the relay of one gateway. */
export function createTasks(deps: {
  readonly config: Config;
  readonly servers: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly store?: SharedStore | undefined;
  /** I7, X9: the callers' rate limits, which count each poll as a call of the task's tool. */
  readonly limiter?: RateLimiter;
  /**
   * X5: a completed task's result through the outcome step (R4, L1, O1, O4: its instruction, its
   * end line, its count, its row on the status page), as its call's answer would have gone.
   * @default as it is
   */
  readonly answered?: (result: Result, task: AnsweredTask) => Result;
  readonly now?: () => number;
}): TaskRelay {
  const { pool, logger, store } = deps;
  const now = deps.now ?? Date.now;
  const book = new Map<string, TaskRecord>();
  /** X5: each completed task's answer as it went through the outcome step, once per replica. */
  const answers = new Map<string, Result>();
  /** Completed task `id`'s first answer through the outcome step, kept (get() serves it after). */
  function answerOf(id: string, record: TaskRecord, result: Result): Result {
    const answer = deps.answered?.(result, record) ?? result;
    // Bounded as the book is (forget() removes one; the oldest goes past MAX_TASKS), a task
    // another replica holds included.
    if (answers.size >= MAX_TASKS) answers.delete(answers.keys().next().value as string);
    answers.set(id, answer);
    return answer;
  }

  /** The ids of each principal's tasks, oldest first. */
  const byOwner = new Map<string, Set<string>>();

  function forget(id: string): void {
    const record = book.get(id);
    if (record === undefined) return;
    book.delete(id);
    answers.delete(id);
    const mine = byOwner.get(record.owner);
    mine?.delete(id);
    if (mine?.size === 0) byOwner.delete(record.owner);
    // Its store record goes with it: no replica finds a task this one forgot for its bound.
    void store?.delete(KEYS.task(id)).catch(() => {});
  }

  function keep(id: string, record: TaskRecord): void {
    for (const [old, kept] of book)
      if (kept.expiresAt <= now()) forget(old);
      else break;
    const mine = byOwner.get(record.owner) ?? new Set<string>();
    byOwner.set(record.owner, mine);
    book.set(id, record);
    mine.add(id);
    // X9: the caller's own oldest goes first; past the whole bound, the largest holder's oldest.
    if (mine.size > MAX_TASKS_PER_CALLER) forget(mine.values().next().value!);
    if (book.size > MAX_TASKS) {
      const largest = [...byOwner.values()].reduce((a, b) => (b.size > a.size ? b : a));
      forget(largest.values().next().value!);
    }
  }

  async function find(owner: string | undefined, taskId: string): Promise<TaskRecord> {
    let record = book.get(taskId);
    if (record === undefined && store !== undefined) {
      // Unreachable, or not what this gateway wrote: the task is not found here.
      const shared = await store.get(KEYS.task(taskId)).catch(() => undefined);
      record = shared === undefined ? undefined : parseRecord(shared);
    }
    // Someone else's task is as unknown as a task that never was.
    if (record === undefined || record.expiresAt <= now() || record.owner !== (owner ?? ''))
      throw notFound(taskId);
    return record;
  }

  /** I7, X9: a poll, an answer or a cancel counts as a call of the task's tool for its caller. */
  async function admit(record: TaskRecord, options: TaskRequestOptions): Promise<void> {
    if (deps.limiter === undefined || options.principal === undefined || record.exposed === undefined) return;
    let verdict: LimitVerdict;
    try {
      verdict = await deps.limiter.admit(options.principal, record.exposed);
    } catch (error) {
      throw rpcError(
        ProtocolErrorCode.InternalError,
        `The shared store is unreachable, and "${record.exposed}" is rate-limited: this request cannot be counted (${error instanceof Error ? error.message : String(error)})`,
        { error_type: 'downstream_unavailable', reason: 'store_unavailable' },
      );
    }
    if (verdict.allowed) return;
    const retryAfterS = Math.max(1, Math.ceil(verdict.retryAfterMs / 1000));
    const { calls, windowMs } = verdict.limit;
    throw rpcError(
      RATE_LIMITED,
      `Rate limit: at most ${calls} calls per ${windowMs / 1000} s to "${record.exposed}" for this caller, its task's requests included; try again in ${retryAfterS} s`,
      { error_type: 'rate_limited', calls, per_s: windowMs / 1000, retry_after_s: retryAfterS },
    );
  }

  async function send(
    record: TaskRecord,
    method: string,
    params: Record<string, unknown>,
    options: TaskRequestOptions,
  ): Promise<Record<string, unknown>> {
    await admit(record, options);
    // A downstream's failure is the JSON-RPC error it was (else an internal one).
    const sent = { ...params, taskId: record.taskId };
    return routedRecord(await pool.extensionRequest(record.server, method, sent, options));
  }

  return {
    async created(outcome, owner, exposed) {
      const invalid = invalidTask(outcome.task);
      if (invalid !== undefined) {
        logger.warn(
          { server: outcome.server, tool: outcome.tool, why: invalid },
          'task refused: not a valid task',
        );
        throw rpcError(
          ProtocolErrorCode.InternalError,
          `Server "${outcome.server}" answered with a task the gateway cannot relay: ${invalid}`,
          { error_type: 'downstream_error', server: outcome.server },
        );
      }
      const id = randomUUID();
      const ttl = rememberMs(outcome.task);
      const record: TaskRecord = {
        server: outcome.server,
        tool: outcome.tool,
        taskId: String(outcome.task['taskId']),
        owner: owner ?? '',
        expiresAt: now() + ttl,
        startedAt: now(),
        ...(exposed !== undefined ? { exposed } : {}),
      };
      keep(id, record);
      // SEP-2663: a task is not announced before any replica could find it.
      if (store !== undefined)
        await store
          .put(KEYS.task(id), JSON.stringify(record), { ttlMs: ttl })
          .catch((error: unknown) =>
            logger.warn({ err: error, server: outcome.server }, 'task not shared: the store is unreachable'),
          );
      logger.debug({ server: outcome.server, tool: outcome.tool, taskId: id }, 'task created');
      return exposeTask(outcome.task, id);
    },
    async get(owner, taskId, options) {
      const record = await find(owner, taskId);
      const raw: Record<string, unknown> = {
        ...(await send(record, 'tasks/get', {}, options)),
        taskId: record.taskId,
      };
      // X9: a completed result too deep to judge is a failure in the envelope, not a lost answer.
      const { result: rawResult, ...fields } = raw;
      const invalid = invalidTask(fields);
      if (invalid !== undefined)
        throw rpcError(
          ProtocolErrorCode.InternalError,
          `Server "${record.server}" answered tasks/get with no valid task: ${invalid}`,
          { error_type: 'downstream_error', server: record.server },
        );
      const { result: _shown, ...rest } = exposeTask(raw, taskId);
      if (rest['status'] !== 'completed' || !isRecord(rawResult)) return { task: rest };
      const kept = answers.get(taskId);
      if (kept !== undefined) return { task: rest, result: kept };
      if (deeperThan(rawResult, TASK_BOUNDS.depth))
        return {
          task: rest,
          result: answerOf(
            taskId,
            record,
            failure(
              'downstream_error',
              `The result of task ${taskId} nests deeper than ${TASK_BOUNDS.depth} levels and was not passed on`,
              { meta: { server: record.server, tool: record.tool } },
            ),
          ),
        };
      const server = deps.servers.get(record.server);
      const normalized = normalizeCallToolResult(rawResult, {
        server: record.server,
        tool: record.tool,
        // The task's whole run, as far as the gateway saw it (a record of an earlier version: unknown).
        elapsedMs: record.startedAt === undefined ? 0 : Math.max(0, now() - record.startedAt),
        maxInlineBytes: deps.config.output.maxInlineBytes,
        // A server a reload removed meanwhile: the default (its request failed before this anyway).
        inbandErrors: server?.inbandErrors ?? true,
      });
      return { task: rest, result: answerOf(taskId, record, normalized) };
    },
    counts() {
      const counts = new Map<string, number>();
      const at = now();
      for (const record of book.values())
        if (record.expiresAt > at) counts.set(record.server, (counts.get(record.server) ?? 0) + 1);
      return counts;
    },
    async update(owner, taskId, inputResponses, options) {
      await send(await find(owner, taskId), 'tasks/update', { inputResponses }, options);
    },
    async cancel(owner, taskId, options) {
      await send(await find(owner, taskId), 'tasks/cancel', {}, options);
    },
  };
}
