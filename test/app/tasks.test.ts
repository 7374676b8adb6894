/**
 * X5: the gateway's book of relayed tasks (app/tasks.ts) against a scripted pool and store: ids
 * of its own, each bound to its creator; expiry at the task's ttlMs; the oldest forgotten past
 * MAX_TASKS; a store record it did not write is no task; the downstream's errors as they were;
 * a completed task's result normalized.
 */
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { SharedStore } from '../../src/app/store.js';
import { createTasks, MAX_TASKS } from '../../src/app/tasks.js';
import type { Config } from '../../src/config/types.js';
import { failure, ok, type Result } from '../../src/core/result.js';
import type { Pool } from '../../src/downstream/pool.js';

const logger = pino({ level: 'silent' });

function relay(
  answer: (method: string, params: Record<string, unknown>) => Result,
  store?: Partial<SharedStore>,
) {
  let clock = 1_000_000;
  const sent: [string, Record<string, unknown>][] = [];
  const pool = Object.assign(new EventEmitter(), {
    snapshot: () => [{ name: 'jobs', extensions: { 'io.modelcontextprotocol/tasks': {} } }],
    extensionRequest: async (_server: string, method: string, params: Record<string, unknown>) => {
      sent.push([method, params]);
      return answer(method, params);
    },
  }) as unknown as Pool;
  const tasks = createTasks({
    config: { output: { maxInlineBytes: 65536 } } as Config,
    servers: { get: () => undefined, list: () => [] } as never,
    pool,
    logger,
    now: () => clock,
    ...(store !== undefined ? { store: store as SharedStore } : {}),
  });
  return { tasks, sent, tick: (ms: number) => (clock += ms) };
}

const created = (taskId: string, ttlMs: number | null = 60_000) => ({
  kind: 'task' as const,
  task: { resultType: 'task', taskId, status: 'working', ttlMs },
  server: 'jobs',
  tool: 'slow',
});

describe('the book of relayed tasks', () => {
  it('X5: a task is shown under a new id, found by its creator only, and relayed under the server’s own id', async () => {
    const { tasks, sent } = relay(() => ok({ taskId: 'down-1', status: 'working', resultType: 'complete' }));
    expect(tasks.declared()).toBe(true);
    const shown = await tasks.created(created('down-1'), 'token:alice');
    expect(shown['taskId']).not.toBe('down-1');
    expect(shown).not.toHaveProperty('resultType');
    const id = String(shown['taskId']);
    expect((await tasks.get('token:alice', id, {})).task).toEqual({ taskId: id, status: 'working' });
    expect(sent).toEqual([['tasks/get', { taskId: 'down-1' }]]);
    await expect(tasks.get('token:bob', id, {})).rejects.toMatchObject({ code: -32602 });
    await expect(tasks.get(undefined, id, {})).rejects.toMatchObject({ code: -32602 });
  });

  it('X5: a task is forgotten after its ttlMs (at least a minute), and past MAX_TASKS the oldest goes', async () => {
    const { tasks, tick } = relay(() => ok({ status: 'working' }));
    const short = String((await tasks.created(created('a', 10), undefined))['taskId']);
    tick(59_000);
    await expect(tasks.get(undefined, short, {})).resolves.toBeDefined();
    expect(tasks.counts()).toEqual(new Map([['jobs', 1]]));
    tick(1_001);
    await expect(tasks.get(undefined, short, {})).rejects.toMatchObject({ code: -32602 });
    expect(tasks.counts()).toEqual(new Map());
    const first = String((await tasks.created(created('b', null), undefined))['taskId']);
    for (let i = 0; i < MAX_TASKS; i++) await tasks.created(created(`c${i}`), undefined);
    await expect(tasks.get(undefined, first, {})).rejects.toMatchObject({ code: -32602 });
  });

  it('X5: a store record this gateway did not write is no task; one it wrote is found by another book', async () => {
    const kept = new Map<string, string>([
      ['task:forged', '{"server":"jobs"}'],
      ['task:junk', 'not json'],
    ]);
    const store = {
      claim: async (key: string, value: string) => (kept.set(key, value), true),
      claimed: async (key: string) => kept.get(key),
    };
    const one = relay(() => ok({ status: 'working' }), store);
    const other = relay(() => ok({ status: 'working' }), store);
    for (const id of ['forged', 'junk'])
      await expect(other.tasks.get(undefined, id, {})).rejects.toMatchObject({ code: -32602 });
    const id = String((await one.tasks.created(created('d'), 'token:alice'))['taskId']);
    await expect(other.tasks.get('token:alice', id, {})).resolves.toBeDefined();
    expect(other.sent).toEqual([['tasks/get', { taskId: 'd' }]]);
  });

  it('X5: the server’s error is the request’s; a completed task’s result comes normalized', async () => {
    const { tasks } = relay((method) =>
      method === 'tasks/cancel'
        ? failure('downstream_error', 'Task not found', { errorCode: '-32602', meta: { server: 'jobs' } })
        : ok({
            status: 'completed',
            result: { content: [{ type: 'text', text: '{"n": 12345678901234567890}' }] },
          }),
    );
    const id = String((await tasks.created(created('e'), undefined))['taskId']);
    await expect(tasks.cancel(undefined, id, {})).rejects.toMatchObject({
      code: -32602,
      message: 'Task not found',
    });
    const got = await tasks.get(undefined, id, {});
    expect(got.task).toEqual({ taskId: id, status: 'completed' });
    expect(got.result).toMatchObject({
      success: true,
      meta: { server: 'jobs', tool: 'slow', source: 'text_json' },
    });
    expect(JSON.stringify(got.result)).toContain('12345678901234567890');
  });
});
