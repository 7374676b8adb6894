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
 * The book is in memory, each entry kept for the task's `ttlMs` (within a minute and a day) and at
 * most {@link MAX_TASKS} of them; with `store:` it is also written to the shared store, so that a
 * replica that did not create a task still finds it (whether it reaches the task then is the
 * server's: a remote server's tasks are everybody's, a stdio child's are its replica's).
 */
import { randomUUID } from 'node:crypto';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import { isRecord } from '../core/json.js';
import { normalizeCallToolResult } from '../core/normalize.js';
import { declaresTasks, exposeTask, rememberMs, type CreatedTask } from '../core/tasks.js';
import type { Pool } from '../downstream/pool.js';
import type { TaskRequestOptions, TasksPort } from '../upstream/tasks.js';
import { routedRecord, rpcError } from './features.js';
import type { ServerSource } from './servers.js';
import type { SharedStore } from './store.js';

/** The most tasks remembered at once; the oldest goes first. */
export const MAX_TASKS = 10_000;

/** One task the gateway relays. */
interface TaskRecord {
  readonly server: string;
  /** The downstream's own tool name and task id. */
  readonly tool: string;
  readonly taskId: string;
  /** Who created it: a principal, or "" for every anonymous caller. */
  readonly owner: string;
  readonly expiresAt: number;
}

/** The app's side of the tasks: the upstream's port, and where calls leave their tasks. */
export interface TaskRelay extends TasksPort {
  /** A downstream's new task, kept for `owner`: the task as the caller sees it. */
  created(outcome: CreatedTask, owner: string | undefined): Promise<Record<string, unknown>>;
  /** O1: the tasks this replica relays now (not yet expired), by server. */
  counts(): ReadonlyMap<string, number>;
}

const notFound = (taskId: string): Error =>
  rpcError(ProtocolErrorCode.InvalidParams, `Failed to retrieve task: Task not found: ${taskId}`);

/** A record as the store keeps it, if it is one. */
function parseRecord(json: string): TaskRecord | undefined {
  try {
    const value: unknown = JSON.parse(json);
    if (!isRecord(value)) return undefined;
    const { server, tool, taskId, owner, expiresAt } = value;
    return typeof server === 'string' &&
      typeof tool === 'string' &&
      typeof taskId === 'string' &&
      typeof owner === 'string' &&
      typeof expiresAt === 'number'
      ? { server, tool, taskId, owner, expiresAt }
      : undefined;
  } catch {
    return undefined;
  }
}

/** Builds the relay of one gateway. */
export function createTasks(deps: {
  readonly config: Config;
  readonly servers: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  readonly store?: SharedStore;
  readonly now?: () => number;
}): TaskRelay {
  const { pool, logger, store } = deps;
  const now = deps.now ?? Date.now;
  const book = new Map<string, TaskRecord>();

  // Which servers declare the extension, worked out again when a server's state changes.
  let declaring: boolean | undefined;
  pool.on('stateChanged', () => (declaring = undefined));

  function keep(id: string, record: TaskRecord): void {
    book.delete(id);
    book.set(id, record);
    if (book.size > MAX_TASKS) book.delete(book.keys().next().value!);
  }

  async function find(owner: string | undefined, taskId: string): Promise<TaskRecord> {
    let record = book.get(taskId);
    if (record === undefined && store !== undefined) {
      // Unreachable, or not what this gateway wrote: the task is not found here.
      const shared = await store.claimed(`task:${taskId}`).catch(() => undefined);
      record = shared === undefined ? undefined : parseRecord(shared);
    }
    // Someone else's task is as unknown as a task that never was.
    if (record === undefined || record.expiresAt <= now() || record.owner !== (owner ?? ''))
      throw notFound(taskId);
    return record;
  }

  async function send(
    record: TaskRecord,
    method: string,
    params: Record<string, unknown>,
    options: TaskRequestOptions,
  ): Promise<Record<string, unknown>> {
    // A downstream's failure is the JSON-RPC error it was (else an internal one).
    const sent = { ...params, taskId: record.taskId };
    return routedRecord(await pool.extensionRequest(record.server, method, sent, options));
  }

  return {
    declared() {
      declaring ??= pool.snapshot().some((row) => declaresTasks({ extensions: row.extensions }));
      return declaring;
    },
    async created(outcome, owner) {
      const id = randomUUID();
      const ttl = rememberMs(outcome.task);
      const record: TaskRecord = {
        server: outcome.server,
        tool: outcome.tool,
        taskId: String(outcome.task['taskId']),
        owner: owner ?? '',
        expiresAt: now() + ttl,
      };
      keep(id, record);
      // SEP-2663: a task is not announced before any replica could find it.
      if (store !== undefined)
        await store
          .claim(`task:${id}`, JSON.stringify(record), ttl)
          .catch((error: unknown) =>
            logger.warn({ err: error, server: outcome.server }, 'task not shared: the store is unreachable'),
          );
      logger.debug({ server: outcome.server, tool: outcome.tool, taskId: id }, 'task created');
      return exposeTask(outcome.task, id);
    },
    async get(owner, taskId, options) {
      const record = await find(owner, taskId);
      const raw = await send(record, 'tasks/get', {}, options);
      const task = exposeTask(raw, taskId);
      if (task['status'] !== 'completed' || !isRecord(task['result'])) return { task };
      const { result, ...rest } = task;
      const server = deps.servers.get(record.server);
      const normalized = normalizeCallToolResult(result, {
        server: record.server,
        tool: record.tool,
        elapsedMs: 0,
        maxInlineBytes: deps.config.output.maxInlineBytes,
        // A server a reload removed meanwhile: the default (its request failed before this anyway).
        inbandErrors: server?.inbandErrors ?? true,
      });
      return { task: rest, result: normalized };
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
