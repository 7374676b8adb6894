/**
 * X5: the gateway's book of relayed tasks (app/ext/tasks.ts) against a scripted pool and store: ids
 * of its own, each bound to its creator; expiry at the task's ttlMs; the oldest forgotten past
 * MAX_TASKS; a store record it did not write is no task; the downstream's errors as they were;
 * a completed task's result normalized.
 */
import { EventEmitter } from 'node:events';
import { pino } from 'pino';
import { describe, expect, it } from 'vitest';
import type { RateLimiter } from '../../src/app/state/rate-limiter.js';
import { createLocalStore } from '../../src/app/state/local.js';
import { KEYS, type SharedStore } from '../../src/app/state/store.js';
import { createTasks, type AnsweredTask, MAX_TASKS, MAX_TASKS_PER_CALLER } from '../../src/app/ext/tasks.js';
import type { Config } from '../../src/config/types.js';
import { failure, ok, type Result } from '../../src/core/result.js';
import type { Pool } from '../../src/downstream/pool.js';

const logger = pino({ level: 'silent' });

function relay(
  answer: (method: string, params: Record<string, unknown>) => Result,
  store?: Partial<SharedStore>,
  limiter?: RateLimiter,
  answered?: (result: Result, task: AnsweredTask) => Result,
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
    ...(limiter !== undefined ? { limiter } : {}),
    ...(answered !== undefined ? { answered } : {}),
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
    const store = createLocalStore();
    await store.put(KEYS.task('forged'), '{"server":"jobs"}');
    await store.put(KEYS.task('junk'), 'not json');
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

  it('X9: one principal’s flood forgets its own oldest tasks, never another’s', async () => {
    const released: string[] = [];
    const local = createLocalStore();
    const store = { ...local, delete: (key: string) => (released.push(key), local.delete(key)) };
    const { tasks } = relay(() => ok({ status: 'working' }), store);
    const bobs = String((await tasks.created(created('bob-1'), 'token:bob'))['taskId']);
    const first = String((await tasks.created(created('a0'), 'token:alice'))['taskId']);
    for (let i = 1; i <= MAX_TASKS_PER_CALLER + 50; i++) await tasks.created(created(`a${i}`), 'token:alice');
    await expect(tasks.get('token:bob', bobs, {})).resolves.toBeDefined();
    await expect(tasks.get('token:alice', first, {})).rejects.toMatchObject({ code: -32602 });
    expect(tasks.counts().get('jobs')).toBe(MAX_TASKS_PER_CALLER + 1);
    // Each forgotten task's store record goes with it.
    expect(released).toHaveLength(51);
    expect(released[0]).toBe(KEYS.task(first));
  });

  it('X5, issue 57: a completed task’s answer goes through the outcome step once, named as its call was; later polls get that same answer', async () => {
    const seen: [Result, AnsweredTask][] = [];
    const { tasks } = relay(
      () => ok({ status: 'completed', result: { content: [{ type: 'text', text: 'done' }] } }),
      undefined,
      undefined,
      (result, task) => (seen.push([result, task]), { ...result, instruction: 'FROM THE OUTCOME STEP' }),
    );
    const id = String((await tasks.created(created('c'), 'token:alice', 'jobs_slow'))['taskId']);
    const first = await tasks.get('token:alice', id, {});
    const again = await tasks.get('token:alice', id, {});
    expect(seen).toHaveLength(1);
    expect(seen[0]?.[1]).toMatchObject({
      server: 'jobs',
      tool: 'slow',
      exposed: 'jobs_slow',
      owner: 'token:alice',
    });
    expect(first.result).toMatchObject({ success: true, instruction: 'FROM THE OUTCOME STEP' });
    expect(again.result).toBe(first.result);
  });

  it('X9: past MAX_TASKS the largest holder’s oldest goes', async () => {
    const { tasks } = relay(() => ok({ status: 'working' }));
    const lone = String((await tasks.created(created('lone'), 'token:lone'))['taskId']);
    for (let p = 0; p < MAX_TASKS / MAX_TASKS_PER_CALLER + 1; p++)
      for (let i = 0; i < MAX_TASKS_PER_CALLER; i++)
        await tasks.created(created(`t${p}-${i}`), `token:p${p}`);
    expect(tasks.counts().get('jobs')).toBe(MAX_TASKS);
    await expect(tasks.get('token:lone', lone, {})).resolves.toBeDefined();
  });

  it.each([
    ['a status outside SEP-2663', { taskId: 'x', status: {} }],
    ['a taskId of 300 characters', { taskId: 'x'.repeat(300), status: 'working' }],
    [
      '200 questions at once',
      {
        taskId: 'x',
        status: 'input_required',
        inputRequests: Object.fromEntries(Array.from({ length: 200 }, (_, i) => [`q${i}`, {}])),
      },
    ],
  ])('X9: a created task with %s is refused, named', async (_why, task) => {
    const { tasks } = relay(() => ok({ status: 'working' }));
    await expect(
      tasks.created(
        { kind: 'task', task: { resultType: 'task', ...task }, server: 'jobs', tool: 'slow' },
        undefined,
      ),
    ).rejects.toMatchObject({ code: -32603, message: expect.stringContaining('cannot relay') as unknown });
  });

  it('X9: each task field within its bound; a result only when completed, an error only when failed', async () => {
    const polled: Record<string, unknown>[] = [
      {
        status: 'working',
        statusMessage: 'm'.repeat(30_000_000),
        ttlMs: 1e15,
        pollIntervalMs: -5,
        result: { content: [] },
        error: { code: 1, message: 'no' },
        extra: 'x'.repeat(1000),
      },
      {
        status: 'failed',
        ttlMs: -5,
        pollIntervalMs: 1e9,
        error: { code: -32000, message: 'e'.repeat(10_000), data: 'd'.repeat(100_000) },
      },
      { status: {} },
    ];
    const { tasks } = relay(() => ok(polled.shift()!));
    const id = String((await tasks.created(created('f'), undefined))['taskId']);
    const working = (await tasks.get(undefined, id, {})).task;
    expect(working).toEqual({
      taskId: id,
      status: 'working',
      statusMessage: `${'m'.repeat(4095)}…`,
      ttlMs: 86_400_000,
      pollIntervalMs: 50,
    });
    const failed = (await tasks.get(undefined, id, {})).task;
    expect(failed).toEqual({
      taskId: id,
      status: 'failed',
      ttlMs: 60_000,
      pollIntervalMs: 60_000,
      error: { code: -32000, message: `${'e'.repeat(4095)}…` },
    });
    await expect(tasks.get(undefined, id, {})).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('no valid task') as unknown,
    });
  });

  it('X9: a completed result nested 5,000 levels deep is a failure envelope, not a lost answer', async () => {
    let deep: Record<string, unknown> = {};
    for (let i = 0; i < 5000; i++) deep = { a: deep };
    const { tasks } = relay(() =>
      ok({ status: 'completed', result: { content: [], structuredContent: deep } }),
    );
    const id = String((await tasks.created(created('g'), undefined))['taskId']);
    const got = await tasks.get(undefined, id, {});
    expect(got.task).toEqual({ taskId: id, status: 'completed' });
    expect(got.result).toMatchObject({ success: false, errorType: 'downstream_error' });
  });

  it('X9, I7: a task’s polls count as calls of its tool in the caller’s rate limit', async () => {
    const counted: [string, string][] = [];
    const limiter: RateLimiter = {
      admit: (principal, tool) => {
        counted.push([principal.kind, tool]);
        return counted.length <= 2
          ? { allowed: true }
          : { allowed: false, retryAfterMs: 1500, limit: { calls: 2, windowMs: 60_000 } as never };
      },
    };
    const { tasks, sent } = relay(() => ok({ status: 'working' }), undefined, limiter);
    const id = String((await tasks.created(created('h'), 'token:alice', 'jobs_slow'))['taskId']);
    const alice = { principal: { kind: 'token', key: 'token:alice' } as never };
    await tasks.get('token:alice', id, alice);
    await tasks.get('token:alice', id, alice);
    await expect(tasks.get('token:alice', id, alice)).rejects.toMatchObject({
      code: -32029,
      data: { error_type: 'rate_limited', retry_after_s: 2 },
    });
    expect(counted).toEqual([
      ['token', 'jobs_slow'],
      ['token', 'jobs_slow'],
      ['token', 'jobs_slow'],
    ]);
    // The refused poll never reached the server.
    expect(sent).toHaveLength(2);
  });
});
