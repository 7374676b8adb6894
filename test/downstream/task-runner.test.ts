/**
 * Q6: a task-only tool run as a task: poll until it ends, read its result, cancel it when the
 * call ends early. Fake timers; the downstream is a scripted `send`.
 */
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { runAsTask, taskOnly, type SendRequest } from '../../src/downstream/task-runner.js';
import { systemTimers } from '../../src/wire/timers.js';

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

/** A downstream whose task reports `statuses` on successive tasks/get, then answers `result`. */
function scripted(statuses: string[], result: unknown = { content: [{ type: 'text', text: 'done' }] }) {
  const sent: [string, Record<string, unknown>][] = [];
  /** Whether each request went out under a signal that was already aborted (it would never leave). */
  const aborted: boolean[] = [];
  const send: SendRequest = async (method, params, options) => {
    sent.push([method, params]);
    aborted.push(options.signal?.aborted === true);
    if (method === 'tools/call') return { task: { taskId: 't1', status: 'working', pollInterval: 200 } };
    if (method === 'tasks/get') {
      const status = statuses.shift() ?? 'working';
      return { taskId: 't1', status, statusMessage: `now ${status}`, pollInterval: 200 };
    }
    if (method === 'tasks/result') return result;
    return {};
  };
  return { send, sent, aborted };
}

describe('running a tool as a task', () => {
  it('Q6: task-augmented call, tasks/get at the pollInterval until completed, then tasks/result; statuses become progress', async () => {
    const { send, sent } = scripted(['working', 'completed']);
    const progress: unknown[] = [];
    const running = runAsTask(
      send,
      'research',
      { topic: 'x' },
      {
        timers: systemTimers,
        timeoutMs: 10_000,
        onProgress: (p) => progress.push(p),
      },
    );
    await vi.advanceTimersByTimeAsync(400);
    await expect(running).resolves.toEqual({ content: [{ type: 'text', text: 'done' }] });
    expect(sent.map(([method]) => method)).toEqual(['tools/call', 'tasks/get', 'tasks/get', 'tasks/result']);
    expect(sent[0]?.[1]).toEqual({ name: 'research', arguments: { topic: 'x' }, task: { ttl: 10_000 } });
    expect(progress).toEqual([
      { progress: 1, message: 'now working' },
      { progress: 2, message: 'now completed' },
    ]);
  });

  it('Q6: a cancelled call cancels the task; a task that outlives timeout_ms times out and is cancelled', async () => {
    const first = scripted([]);
    const controller = new AbortController();
    const cancelled = runAsTask(
      first.send,
      'r',
      {},
      { timers: systemTimers, timeoutMs: 10_000, signal: controller.signal },
    );
    const seen = expect(cancelled).rejects.toThrow('stop');
    await vi.advanceTimersByTimeAsync(300);
    controller.abort(new Error('stop'));
    await seen;
    expect(first.sent.at(-1)).toEqual(['tasks/cancel', { taskId: 't1' }]);
    // The host's cancel aborted the call's signal: the cancel must not go out under it.
    expect(first.aborted.at(-1)).toBe(false);

    const second = scripted([]);
    const late = runAsTask(second.send, 'r', {}, { timers: systemTimers, timeoutMs: 1000 });
    const timedOut = expect(late).rejects.toMatchObject({ code: expect.anything() });
    await vi.advanceTimersByTimeAsync(1200);
    await timedOut;
    expect(second.sent.at(-1)).toEqual(['tasks/cancel', { taskId: 't1' }]);
  });

  it('Q6: a server that answers the call plainly is taken at its word; only execution.taskSupport "required" is task-only', async () => {
    const plain: SendRequest = async () => ({ content: [] });
    await expect(runAsTask(plain, 'r', {}, { timers: systemTimers, timeoutMs: 1000 })).resolves.toEqual({
      content: [],
    });
    expect(taskOnly({ execution: { taskSupport: 'required' } })).toBe(true);
    expect(taskOnly({ execution: { taskSupport: 'optional' } })).toBe(false);
    expect(taskOnly({})).toBe(false);
  });
});
