/**
 * Input rounds (Q3) in process: parked calls, relayed rounds, the round cap, expiry and the
 * signed state. The SDK runs `verify` before a handler; here the test does, as it would.
 */
import type { CallToolResult } from '@modelcontextprotocol/server';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { CallSignal } from '../../src/core/call-signal.js';
import type { FailureResult } from '../../src/core/result.js';
import {
  createInputRounds,
  type RoundRequest,
  type RoundState,
  type StartCall,
} from '../../src/upstream/input-rounds.js';
import { captureLogger } from '../helpers/memory-servers.js';

const KEY = 'k'.repeat(32);
const render = (result: FailureResult): CallToolResult => ({
  content: [],
  isError: true,
  structuredContent: { error_type: result.errorType, reason: result.errorData?.['reason'] },
});

function rounds(roundTimeoutMs = 1000, maxRounds = 3) {
  return createInputRounds({ key: KEY, roundTimeoutMs, maxRounds, logger: captureLogger().logger });
}

function request(
  name: string,
  state?: RoundState,
  responses?: Record<string, unknown>,
  who: { callerId?: string; arguments?: Record<string, unknown> } = {},
): RoundRequest {
  return {
    name,
    state,
    responses,
    callerKey: {},
    callerId: who.callerId ?? 'session-a',
    arguments: who.arguments ?? { q: 1 },
    capabilities: { elicitation: {} },
    signal: new AbortController().signal,
    onProgress: undefined,
    detach: false,
  };
}

type Answer = Awaited<ReturnType<ReturnType<typeof rounds>['handle']>>;

/** Our state out of an input_required answer, verified as the SDK would. */
async function stateOf(r: ReturnType<typeof rounds>, answer: Answer): Promise<RoundState> {
  expect(answer).toMatchObject({ resultType: 'input_required' });
  return r.verify((answer as { requestState: string }).requestState, {} as never);
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('input rounds', () => {
  it('Q3: a pushed request parks the call; the retry answers it and gets the call result', async () => {
    const r = rounds();
    const start: StartCall = async ({ caller }) => {
      const answer = await caller.ask({ method: 'elicitation/create', params: { message: 'Name?' } });
      return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
    };
    const first = await r.handle(request('t'), start, render);
    expect(first).toMatchObject({
      inputRequests: { ask_1: { method: 'elicitation/create', params: { message: 'Name?' } } },
    });
    expect(r.parked()).toBe(1);
    const state = await stateOf(r, first);
    expect(state).toMatchObject({ k: 'park', n: 't', r: 1 });
    const done = await r.handle(
      request('t', state, { ask_1: { action: 'accept', content: { a: 1 } } }),
      start,
      render,
    );
    expect(done).toEqual({ content: [{ type: 'text', text: '{"action":"accept","content":{"a":1}}' }] });
    expect(r.parked()).toBe(0);
  });

  it('Q3: a 2026 round is relayed with the downstream state wrapped in ours, and the retry carries both back', async () => {
    const r = rounds();
    const replies: unknown[] = [];
    const start: StartCall = async ({ reply }) => {
      replies.push(reply);
      if (reply === undefined)
        return {
          kind: 'input_required',
          inputRequests: { q: { method: 'roots/list' } },
          requestState: 'ds-1',
          server: 's',
          tool: 't',
        };
      return { content: [{ type: 'text', text: 'done' }] };
    };
    const first = await r.handle(request('x'), start, render);
    expect(first).toMatchObject({ inputRequests: { q: { method: 'roots/list' } } });
    const state = await stateOf(r, first);
    expect(state).toEqual({
      k: 'relay',
      n: 'x',
      s: 'ds-1',
      r: 1,
      c: expect.any(String),
      a: expect.any(String),
    });
    expect(r.parked()).toBe(0);
    await r.handle(request('x', state, { q: { roots: [] } }), start, render);
    expect(replies).toEqual([undefined, { inputResponses: { q: { roots: [] } }, requestState: 'ds-1' }]);
  });

  it('Q3: a call that keeps asking is stopped after max_rounds', async () => {
    const r = rounds(1000, 2);
    const start: StartCall = async ({ caller }) => {
      for (;;) await caller.ask({ method: 'elicitation/create', params: {} });
    };
    let answer = await r.handle(request('t'), start, render);
    for (let round = 0; round < 2; round++) {
      const state = await stateOf(r, answer);
      answer = await r.handle(
        request('t', state, { [`ask_${round + 1}`]: { action: 'decline' } }),
        start,
        render,
      );
    }
    expect((answer as CallToolResult).structuredContent).toEqual({
      error_type: 'downstream_error',
      reason: 'input_rounds_exceeded',
    });
    expect(r.parked()).toBe(0);
  });

  it('Q3: a parked call whose host does not answer in time is abandoned (its push fails); its retry gets timeout', async () => {
    const r = rounds(1000);
    let pushFailed: unknown;
    const start: StartCall = async ({ caller }) => {
      try {
        await caller.ask({ method: 'elicitation/create', params: {} });
      } catch (error) {
        pushFailed = error;
      }
      return { content: [] };
    };
    const state = await stateOf(r, await r.handle(request('t'), start, render));
    await vi.advanceTimersByTimeAsync(1001);
    expect(String(pushFailed)).toContain('round_timeout_ms');
    expect(r.parked()).toBe(0);
    const late = await r.handle(request('t', state, { ask_1: { action: 'accept' } }), start, render);
    expect((late as CallToolResult).structuredContent).toEqual({
      error_type: 'timeout',
      reason: 'input_round_expired',
    });
  });

  it('Q3: a state minted for another tool is invalid_arguments; one this process never parked is input_round_unknown', async () => {
    const r = rounds();
    const other = rounds();
    const start: StartCall = async ({ caller }) => {
      await caller.ask({ method: 'elicitation/create', params: {} });
      return { content: [] };
    };
    const state = await stateOf(r, await r.handle(request('t'), start, render));
    const wrongTool = await r.handle(request('u', state, {}), start, render);
    expect((wrongTool as CallToolResult).structuredContent).toEqual({
      error_type: 'invalid_arguments',
      reason: 'input_state_mismatch',
    });
    // Same key, another process (a replica): the state verifies, the call is not there.
    const elsewhere = await other.handle(
      request(
        't',
        await other.verify(
          ((await r.handle(request('t'), start, render)) as { requestState: string }).requestState,
          {} as never,
        ),
        {},
      ),
      start,
      render,
    );
    expect((elsewhere as CallToolResult).structuredContent).toEqual({
      error_type: 'downstream_unavailable',
      reason: 'input_round_unknown',
    });
    await expect(
      r.verify(
        `${((await r.handle(request('t'), start, render)) as { requestState: string }).requestState}x`,
        {} as never,
      ),
    ).rejects.toThrow();
  });

  it.each([
    ['another caller', { callerId: 'session-b' }, 'was issued to another caller'],
    ['other arguments', { arguments: { q: 2 } }, 'was issued for other arguments of "t"'],
  ])(
    'Q3: a state is bound to its caller and arguments: a retry from %s is input_state_mismatch, the call stays parked',
    async (_d, who, says) => {
      const r = rounds();
      const start: StartCall = async ({ caller }) => {
        const answer = await caller.ask({ method: 'elicitation/create', params: {} });
        return { content: [{ type: 'text', text: JSON.stringify(answer) }] };
      };
      const state = await stateOf(r, await r.handle(request('t'), start, render));
      const reply = { ask_1: { action: 'accept', content: {} } };
      const refused = await r.handle(request('t', state, reply, who), start, (result) => {
        expect(result.error).toContain(says);
        return render(result);
      });
      expect((refused as CallToolResult).structuredContent).toEqual({
        error_type: 'invalid_arguments',
        reason: 'input_state_mismatch',
      });
      expect(r.parked()).toBe(1);
      // Key order does not matter; the rightful caller's retry still gets the result.
      const done = await r.handle(request('t', state, reply, { arguments: { q: 1 } }), start, render);
      expect(done).toEqual({ content: [{ type: 'text', text: '{"action":"accept","content":{}}' }] });
    },
  );

  it("Q3: a 2026 request's call runs under its own controller: the first answer ends nothing, a later request's cancellation cancels it", async () => {
    const r = rounds();
    let downstream: CallSignal | undefined;
    const start: StartCall = async ({ caller, signal }) => {
      downstream = signal;
      await caller.ask({ method: 'elicitation/create', params: {} }).catch(() => undefined);
      return { content: [] };
    };
    const first = new AbortController();
    const answer = await r.handle({ ...request('t'), signal: first.signal, detach: true }, start, render);
    first.abort(new Error('the response stream closed'));
    expect(downstream).not.toBe(first.signal);
    expect(downstream?.aborted).toBe(false);
    const retry = new AbortController();
    const resumed = r.handle(
      { ...request('t', await stateOf(r, answer), {}), signal: retry.signal, detach: true },
      async () => ({ content: [] }),
      render,
    );
    retry.abort(new Error('stop'));
    await resumed;
    expect(downstream?.aborted).toBe(true);
  });
});
