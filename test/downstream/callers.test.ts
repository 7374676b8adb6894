/**
 * Who answers a downstream's requests (Q1, Q2): the owner rule, the caller lane, and the
 * capabilities each era of downstream is told.
 */
import { describe, expect, it } from 'vitest';
import type { Caller, HostCapabilities } from '../../src/core/input.js';
import { hostCanAnswer } from '../../src/core/input.js';
import {
  advertisedCapabilities,
  answerAsk,
  callerCapabilities,
  CallerLane,
  CallerRoute,
} from '../../src/downstream/callers.js';

function caller(key: object, capabilities: HostCapabilities | undefined = { elicitation: {} }): Caller {
  return { key, capabilities, ask: async (ask) => ({ answeredBy: key, method: ask.method }) };
}

describe('the owner of a pushed request', () => {
  it('Q1: the one upstream client with calls in flight owns it, two clients make it refused', async () => {
    const route = new CallerRoute();
    const alice = {};
    const bob = {};
    const ask = { method: 'elicitation/create', params: { message: 'x' } };
    await expect(answerAsk(route, ask)).rejects.toThrow(/no call of an upstream client/);
    const leaveA1 = route.enter(caller(alice));
    const leaveA2 = route.enter(caller(alice));
    await expect(answerAsk(route, ask)).resolves.toMatchObject({ answeredBy: alice });
    const leaveB = route.enter(caller(bob));
    await expect(answerAsk(route, ask)).rejects.toThrow(/calls of 2 upstream clients.*isolate_callers/);
    leaveA1();
    leaveA2();
    await expect(answerAsk(route, ask)).resolves.toMatchObject({ answeredBy: bob });
    leaveB();
  });

  it('Q2: a request the owner cannot answer is refused with -32601, and its _meta is not passed on', async () => {
    const route = new CallerRoute();
    const seen: unknown[] = [];
    route.enter({
      key: {},
      capabilities: { elicitation: { form: {} } },
      ask: async (ask) => {
        seen.push(ask.params);
        return {};
      },
    });
    await expect(
      answerAsk(route, { method: 'elicitation/create', params: { mode: 'url', url: 'https://x.test' } }),
    ).rejects.toMatchObject({ code: -32601, message: expect.stringContaining('URL mode') });
    await expect(answerAsk(route, { method: 'sampling/createMessage', params: {} })).rejects.toMatchObject({
      code: -32601,
    });
    await answerAsk(route, {
      method: 'elicitation/create',
      params: { message: 'm', _meta: { progressToken: 1 } },
    });
    expect(seen).toEqual([{ message: 'm' }]);
  });
});

describe('what a host can answer', () => {
  const rows: [string, HostCapabilities | undefined, string, Record<string, unknown>, boolean][] = [
    ['no capabilities', undefined, 'elicitation/create', {}, false],
    ['2025 empty elicitation = form', { elicitation: {} }, 'elicitation/create', {}, true],
    ['2025 empty elicitation, URL mode', { elicitation: {} }, 'elicitation/create', { mode: 'url' }, false],
    ['form only, form', { elicitation: { form: {} } }, 'elicitation/create', { mode: 'form' }, true],
    ['url only, form', { elicitation: { url: {} } }, 'elicitation/create', {}, false],
    ['url only, url', { elicitation: { url: {} } }, 'elicitation/create', { mode: 'url' }, true],
    ['sampling', { sampling: {} }, 'sampling/createMessage', {}, true],
    ['roots missing', { sampling: {} }, 'roots/list', {}, false],
    ['an unknown method', { sampling: {}, roots: {}, elicitation: {} }, 'tasks/get', {}, false],
  ];
  it.each(rows)('Q2: %s', (_label, capabilities, method, params, expected) => {
    expect(hostCanAnswer(capabilities, { method, params })).toBe(expected);
  });
});

describe('capabilities told to a downstream', () => {
  it('P8/Q2: a 2025 server is told what client_features allow; a 2026 one what the caller has, narrowed to them', () => {
    expect(advertisedCapabilities([])).toEqual({});
    expect(advertisedCapabilities(['elicitation', 'sampling', 'roots'])).toEqual({
      elicitation: { form: {}, url: {} },
      sampling: {},
      roots: {},
    });
    const host = caller({}, { elicitation: { form: {} }, roots: {} });
    expect(callerCapabilities(['elicitation', 'sampling'], host)).toEqual({ elicitation: { form: {} } });
    expect(callerCapabilities(['elicitation', 'sampling', 'roots'], host)).toEqual({
      elicitation: { form: {} },
      roots: {},
    });
    expect(callerCapabilities(['elicitation', 'sampling'], undefined)).toEqual({});
  });
});

describe('the caller lane (isolate_callers)', () => {
  it('Q1: calls of one client at a time; the lane passes to the oldest waiter with all its calls', async () => {
    const lane = new CallerLane();
    const [a, b, c] = [{}, {}, {}];
    const order: string[] = [];
    await lane.acquire(a);
    await lane.acquire(a);
    const b1 = lane.acquire(b).then(() => order.push('b1'));
    const c1 = lane.acquire(c).then(() => order.push('c1'));
    const b2 = lane.acquire(b).then(() => order.push('b2'));
    // A waiter exists: a new call of the holder waits its turn too (no starving).
    expect(lane.isFree(a)).toBe(false);
    const a3 = lane.acquire(a).then(() => order.push('a3'));
    lane.release();
    await Promise.resolve();
    expect(order).toEqual([]);
    lane.release();
    await Promise.all([b1, b2]);
    expect(order).toEqual(['b1', 'b2']);
    lane.release();
    lane.release();
    await c1;
    lane.release();
    await a3;
    expect(order).toEqual(['b1', 'b2', 'c1', 'a3']);
  });

  it('Q1: a call that gives up waiting leaves the lane', async () => {
    const lane = new CallerLane();
    const [a, b, c] = [{}, {}, {}];
    await lane.acquire(a);
    const controller = new AbortController();
    const waiting = lane.acquire(b, controller.signal);
    const next = lane.acquire(c);
    controller.abort(new Error('deadline'));
    await expect(waiting).rejects.toThrow('deadline');
    lane.release();
    await next;
    expect(lane.isFree(c)).toBe(true);
    expect(lane.isFree(a)).toBe(false);
  });
});
