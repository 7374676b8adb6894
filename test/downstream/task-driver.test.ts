/**
 * X6: a 2026 server's task run to its end for a caller that cannot take tasks (a 2025 host):
 * polled at its pollIntervalMs, each input request asked of the caller once and answered with
 * tasks/update, the completed task's result returned, a failed one's error thrown, the task
 * cancelled when the call ends early. Fake timers; the downstream is a scripted `send` whose
 * CreateTaskResult comes lifted, as task-results.ts hands it to the SDK.
 */
import { ProtocolError } from '@modelcontextprotocol/client';
import type { JSONRPCMessage, Transport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { Caller, ClientAsk } from '../../src/core/input.js';
import { driveTask, needsTasks } from '../../src/downstream/task-driver.js';
import { liftTaskResults, takeCreatedTask } from '../../src/downstream/task-results.js';
import type { SendRequest } from '../../src/downstream/task-runner.js';
import { systemTimers } from '../../src/wire/timers.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** What the SDK hands the pool for a CreateTaskResult, once lifted. */
function lifted(task: Record<string, unknown>): unknown {
  let seen: JSONRPCMessage | undefined;
  const transport = { onmessage: (message: JSONRPCMessage) => (seen = message) } as unknown as Transport;
  liftTaskResults(transport);
  transport.onmessage!({ jsonrpc: '2.0', id: 1, result: { resultType: 'task', ...task } } as JSONRPCMessage);
  return (seen as { result: unknown }).result;
}

/** A downstream whose task shows `states` on successive tasks/get. */
function scripted(states: Record<string, unknown>[]) {
  const sent: [string, Record<string, unknown>][] = [];
  const send: SendRequest = async (method, params) => {
    sent.push([method, params]);
    if (method === 'tools/call')
      return lifted({ taskId: 't1', status: 'working', pollIntervalMs: 200, ttlMs: 60_000 });
    if (method === 'tasks/get')
      return { taskId: 't1', pollIntervalMs: 200, ...(states.shift() ?? { status: 'working' }) };
    return {};
  };
  return { send, sent };
}

function caller(answers: Record<string, unknown>[] = [], elicits = true): Caller & { asked: ClientAsk[] } {
  const asked: ClientAsk[] = [];
  return {
    key: {},
    capabilities: elicits ? { elicitation: {} } : {},
    runsTasks: true,
    asked,
    ask: async (request) => (asked.push(request), answers.shift() ?? { action: 'decline' }),
  };
}

const DONE = { content: [{ type: 'text', text: 'done' }] };
const ASK = {
  method: 'elicitation/create',
  params: { message: 'Sure?', requestedSchema: { type: 'object', properties: {} } },
};

describe('running a 2026 task for a 2025 host', () => {
  it('X5, X6: a lifted CreateTaskResult is read back; other results and messages pass untouched', () => {
    expect(takeCreatedTask(lifted({ taskId: 't9', status: 'working' }))).toEqual({
      resultType: 'task',
      taskId: 't9',
      status: 'working',
    });
    expect(lifted({})).toMatchObject({ resultType: 'complete', content: [] });
    expect(takeCreatedTask({ content: [], _meta: { other: 1 } })).toBeUndefined();
    expect(takeCreatedTask(DONE)).toBeUndefined();
  });

  it("X8: a plain result carrying the gateway's private keys is a plain result, the keys stripped", () => {
    const lifts = (result: Record<string, unknown>): unknown => {
      let seen: JSONRPCMessage | undefined;
      const transport = { onmessage: (message: JSONRPCMessage) => (seen = message) } as unknown as Transport;
      liftTaskResults(transport);
      transport.onmessage!({ jsonrpc: '2.0', id: 1, result } as JSONRPCMessage);
      return (seen as { result: unknown }).result;
    };
    const forged = { taskId: 'x', status: 'working' };
    // The key of earlier versions, and every key of the gateway's namespace, travel nowhere.
    for (const key of ['io.github.mcp-normalizer/created-task', 'io.github.mcp-normalizer/created-task/0'])
      expect(takeCreatedTask({ content: [], _meta: { [key]: forged } })).toBeUndefined();
    const plain = lifts({
      content: [{ type: 'text', text: 'hi' }],
      _meta: { 'io.github.mcp-normalizer/x': 1, k: 2 },
    });
    expect(plain).toEqual({ content: [{ type: 'text', text: 'hi' }], _meta: { k: 2 } });
    expect(takeCreatedTask(plain)).toBeUndefined();
  });

  it('X6: polls at pollIntervalMs until completed and returns the inlined result', async () => {
    const { send, sent } = scripted([{ status: 'working' }, { status: 'completed', result: DONE }]);
    const running = driveTask(send, { name: 'job', arguments: {} }, caller(), {
      timers: systemTimers,
      timeoutMs: 10_000,
    });
    await vi.advanceTimersByTimeAsync(400);
    await expect(running).resolves.toEqual(DONE);
    expect(sent.map(([method]) => method)).toEqual(['tools/call', 'tasks/get', 'tasks/get']);
  });

  it('X6: each input request is asked once, answered with tasks/update, and the task goes on', async () => {
    const { send, sent } = scripted([
      { status: 'input_required', inputRequests: { k1: ASK } },
      { status: 'input_required', inputRequests: { k1: ASK } },
      { status: 'completed', result: DONE },
    ]);
    const host = caller([{ action: 'accept', content: {} }]);
    const running = driveTask(send, { name: 'job', arguments: {} }, host, {
      timers: systemTimers,
      timeoutMs: 10_000,
    });
    await vi.advanceTimersByTimeAsync(1000);
    await expect(running).resolves.toEqual(DONE);
    expect(host.asked).toEqual([ASK]);
    expect(sent.filter(([method]) => method === 'tasks/update')).toEqual([
      ['tasks/update', { taskId: 't1', inputResponses: { k1: { action: 'accept', content: {} } } }],
    ]);
  });

  it("X9: a driven task's questions reach the host one at a time, and past the bound the task is cancelled", async () => {
    const round = (from: number) =>
      Object.fromEntries(Array.from({ length: 10 }, (_, i) => [`k${from + i}`, ASK]));
    const { send, sent } = scripted(
      [0, 10, 20, 30].map((from) => ({ status: 'input_required', inputRequests: round(from) })),
    );
    let open = 0;
    let most = 0;
    const host = caller();
    const ask = host.ask;
    host.ask = async (request) => {
      most = Math.max(most, ++open);
      await Promise.resolve();
      open--;
      return ask(request);
    };
    const running = driveTask(send, { name: 'job' }, host, { timers: systemTimers, timeoutMs: 10_000 });
    const refused = expect(running).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('more than 32 questions'),
    });
    await vi.advanceTimersByTimeAsync(2000);
    await refused;
    expect(most).toBe(1);
    expect(host.asked).toHaveLength(30);
    expect(sent.at(-1)?.[0]).toBe('tasks/cancel');
  });

  it('X9: a poll that is no task ends the call, and the task is cancelled', async () => {
    const { send, sent } = scripted([{ status: { no: 1 } }]);
    const running = driveTask(send, { name: 'job' }, caller(), { timers: systemTimers, timeoutMs: 10_000 });
    const refused = expect(running).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('no valid task'),
    });
    await vi.advanceTimersByTimeAsync(500);
    await refused;
    expect(sent.at(-1)?.[0]).toBe('tasks/cancel');
  });

  it('X6: a question the host cannot answer is refused at once, and the task is cancelled', async () => {
    const { send, sent } = scripted([{ status: 'input_required', inputRequests: { k1: ASK } }]);
    const host = caller([], false);
    const running = driveTask(send, { name: 'job' }, host, { timers: systemTimers, timeoutMs: 10_000 });
    const refused = expect(running).rejects.toMatchObject({
      code: -32601,
      message: expect.stringContaining('elicitation/create'),
    });
    await vi.advanceTimersByTimeAsync(200);
    await refused;
    expect(host.asked).toEqual([]);
    expect(sent.at(-1)).toEqual(['tasks/cancel', { taskId: 't1' }]);
  });

  it('X6: a failed task throws its JSON-RPC error; a cancelled one an error', async () => {
    const failed = scripted([
      { status: 'failed', error: { code: -32603, message: 'crashed', data: { why: 1 } } },
    ]);
    const running = driveTask(failed.send, { name: 'job' }, caller(), {
      timers: systemTimers,
      timeoutMs: 10_000,
    });
    const settled = expect(running).rejects.toMatchObject({
      code: -32603,
      message: expect.stringContaining('crashed'),
    });
    await vi.advanceTimersByTimeAsync(200);
    await settled;
    const cancelled = scripted([{ status: 'cancelled' }]);
    const ending = driveTask(cancelled.send, { name: 'job' }, caller(), {
      timers: systemTimers,
      timeoutMs: 10_000,
    });
    const refused = expect(ending).rejects.toThrow(/cancelled task t1/);
    await vi.advanceTimersByTimeAsync(200);
    await refused;
  });

  it('X6: a call cancelled or past timeout_ms cancels its task, outside the call’s signal', async () => {
    const { send, sent } = scripted([]);
    const stop = new AbortController();
    const running = driveTask(send, { name: 'job' }, caller(), {
      timers: systemTimers,
      timeoutMs: 10_000,
      signal: stop.signal,
    });
    const settled = expect(running).rejects.toBeDefined();
    await vi.advanceTimersByTimeAsync(300);
    stop.abort();
    await settled;
    expect(sent.at(-1)).toEqual(['tasks/cancel', { taskId: 't1' }]);
    const late = scripted([]);
    const timing = driveTask(late.send, { name: 'job' }, caller(), { timers: systemTimers, timeoutMs: 1000 });
    const timedOut = expect(timing).rejects.toThrow(/did not end within 1000 ms/);
    await vi.advanceTimersByTimeAsync(1200);
    await timedOut;
    expect(late.sent.at(-1)).toEqual(['tasks/cancel', { taskId: 't1' }]);
  });

  it('X6: only a -32021 that names the Tasks extension is one the gateway takes over', () => {
    const tasks = { requiredCapabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } } };
    expect(needsTasks(new ProtocolError(-32021, 'missing', tasks))).toBe(true);
    expect(needsTasks(new ProtocolError(-32021, 'missing', { requiredCapabilities: { sampling: {} } }))).toBe(
      false,
    );
    expect(needsTasks(new ProtocolError(-32602, 'bad', tasks))).toBe(false);
    expect(needsTasks(new Error('x'))).toBe(false);
  });
});
