/**
 * The downstream hot path (request-tap.ts): requests to a 2025 server past the SDK's Protocol
 * keep every promise the SDK's requests make (P3, P4, P7), and leave every other message to it.
 * The far end is scripted by hand over the SDK's InMemoryTransport; fake timers drive timeouts.
 */
import { getEventListeners } from 'node:events';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { ProtocolError, SdkError, SdkErrorCode } from '@modelcontextprotocol/client';
import type { Transport } from '@modelcontextprotocol/client';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { LazySignal } from '../../src/core/call-signal.js';
import { FIRST_ID, RequestTap } from '../../src/downstream/request-tap.js';

type Message = Record<string, unknown> & { id?: number; method?: string; params?: Record<string, unknown> };

/** A tap on one end of a linked pair; `sdk` records what the SDK's own handlers would see. */
async function setup() {
  const [near, far] = InMemoryTransport.createLinkedPair();
  const sdk = { messages: [] as Message[], closed: 0 };
  const received: Message[] = [];
  far.onmessage = (message) => received.push(message as Message);
  near.onmessage = (message) => sdk.messages.push(message as Message);
  near.onclose = () => sdk.closed++;
  await near.start();
  await far.start();
  const tap = new RequestTap(near as unknown as Transport);
  const reply = (message: Record<string, unknown>) =>
    far.send({ jsonrpc: '2.0', ...message } as JSONRPCMessage);
  return { tap, near, far, sdk, received, reply };
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});

afterEach(() => {
  vi.useRealTimers();
});

describe('RequestTap', () => {
  it('P7: a request goes out under an id of its own range with its progress token; its result comes back as sent, a stray resultType dropped', async () => {
    const { tap, received, reply, sdk } = await setup();
    const call = tap.request(
      'tools/call',
      { name: 'echo', arguments: { a: 1 }, _meta: { trace: 't' } },
      { timeoutMs: 1000 },
    );
    const [request] = received;
    expect(request).toEqual({
      jsonrpc: '2.0',
      id: FIRST_ID,
      method: 'tools/call',
      params: { name: 'echo', arguments: { a: 1 }, _meta: { trace: 't', progressToken: FIRST_ID } },
    });
    await reply({
      id: FIRST_ID,
      result: { content: [{ type: 'hologram' }], resultType: 'complete', extra: 1 },
    });
    await expect(call).resolves.toEqual({ content: [{ type: 'hologram' }], extra: 1 });
    expect(sdk.messages).toEqual([]);
    expect(tap.pending).toBe(0);
  });

  it("P7: everything else reaches the SDK untouched: its own ids, notifications, the server's requests, late answers", async () => {
    const { tap, reply, sdk } = await setup();
    const others = [
      { id: 0, result: { tools: [] } },
      { method: 'notifications/tools/list_changed' },
      { id: 7, method: 'elicitation/create', params: { message: 'm' } },
      { method: 'notifications/progress', params: { progressToken: 3, progress: 1 } },
      { id: FIRST_ID + 5, result: {} },
    ];
    for (const message of others) await reply(message);
    expect(sdk.messages).toEqual(others.map((message) => ({ jsonrpc: '2.0', ...message })));
    expect(tap.pending).toBe(0);
  });

  it('P7: a JSON-RPC error rejects with the SDK ProtocolError, code, message and data kept', async () => {
    const { tap, reply } = await setup();
    const call = tap.request('tools/call', { name: 'x' }, { timeoutMs: 1000 });
    await reply({ id: FIRST_ID, error: { code: -32602, message: 'bad', data: { why: 1 } } });
    const error = await call.catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ProtocolError);
    expect(error).toMatchObject({ code: -32602, data: { why: 1 } });
    expect((error as Error).message).toContain('bad');
  });

  it('P3: progress reaches the listener without its token and restarts the clock; silence then times out and cancels downstream', async () => {
    const { tap, received, reply } = await setup();
    const updates: unknown[] = [];
    const call = tap.request(
      'tools/call',
      { name: 'slow' },
      { timeoutMs: 1000, onProgress: (p) => updates.push(p) },
    );
    const outcome = expect(call).rejects.toMatchObject({ code: SdkErrorCode.RequestTimeout });
    await vi.advanceTimersByTimeAsync(900);
    await reply({
      method: 'notifications/progress',
      params: { progressToken: FIRST_ID, progress: 1, total: 2 },
    });
    await vi.advanceTimersByTimeAsync(900);
    expect(tap.pending).toBe(1);
    expect(updates).toEqual([{ progress: 1, total: 2 }]);
    await vi.advanceTimersByTimeAsync(100);
    await outcome;
    expect(received.at(-1)).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: FIRST_ID, reason: expect.stringContaining('Request timed out') },
    });
  });

  it("P3: the caller's abort cancels downstream with its reason and rejects with it; an answered call's listener and timer go within 100 ms", async () => {
    const { tap, received, reply } = await setup();
    const caller = new AbortController();
    const call = tap.request('tools/call', { name: 'slow' }, { timeoutMs: 1000, signal: caller.signal });
    expect(getEventListeners(caller.signal, 'abort')).toHaveLength(1);
    caller.abort('user stop');
    await expect(call).rejects.toMatchObject({
      code: SdkErrorCode.RequestTimeout,
      message: expect.stringContaining('user stop'),
    });
    expect(received.at(-1)).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: FIRST_ID, reason: 'user stop' },
    });

    const second = new AbortController();
    const answered = tap.request('tools/call', { name: 'fast' }, { timeoutMs: 1000, signal: second.signal });
    await reply({ id: FIRST_ID + 1, result: { content: [] } });
    await answered;
    // Stopped after the answer has gone on its way, together with any others answered meanwhile.
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(100);
    expect(getEventListeners(second.signal, 'abort')).toHaveLength(0);
    expect(vi.getTimerCount()).toBe(0);
    // An abort reason that is already an SdkError is kept as it is.
    const third = new AbortController();
    const reason = new SdkError(SdkErrorCode.ConnectionClosed, 'gone');
    third.abort(reason);
    await expect(
      tap.request('tools/call', { name: 'x' }, { timeoutMs: 1000, signal: third.signal }),
    ).rejects.toBe(reason);
  });

  it("P3, issue 57: a LazySignal's listener goes as the answer comes (a field, nothing kept for the sweep); its abort cancels as an AbortSignal's does", async () => {
    const { tap, received, reply } = await setup();
    const cancel = new LazySignal();
    const removed = vi.spyOn(cancel, 'removeEventListener');
    const call = tap.request('tools/call', { name: 'slow' }, { timeoutMs: 1000, signal: cancel });
    cancel.abort('user stop');
    await expect(call).rejects.toMatchObject({ message: expect.stringContaining('user stop') });
    expect(received.at(-1)).toMatchObject({
      method: 'notifications/cancelled',
      params: { requestId: FIRST_ID, reason: 'user stop' },
    });

    const next = new LazySignal();
    const forgotten = vi.spyOn(next, 'removeEventListener');
    const answered = tap.request('tools/call', { name: 'fast' }, { timeoutMs: 1000, signal: next });
    await reply({ id: FIRST_ID + 1, result: { content: [] } });
    await answered;
    expect(forgotten).toHaveBeenCalledTimes(1);
    expect(removed).toHaveBeenCalledTimes(1);
    // The sweep still comes, for the deadline timer, and then nothing is left.
    await vi.advanceTimersByTimeAsync(100);
    expect(vi.getTimerCount()).toBe(0);
    next.abort('too late');
    expect(received.filter((message) => message.method === 'notifications/cancelled')).toHaveLength(1);
  });

  it('P3: requests share one deadline timer; each times out at its own deadline, a shorter one after a longer one included', async () => {
    const { tap, received } = await setup();
    const long = tap.request('tools/call', { name: 'long' }, { timeoutMs: 1000 });
    const alike = tap.request('tools/call', { name: 'alike' }, { timeoutMs: 1000 });
    expect(vi.getTimerCount()).toBe(1);
    const short = tap.request('tools/call', { name: 'short' }, { timeoutMs: 100 });
    const ended: string[] = [];
    for (const [name, call] of [
      ['long', long],
      ['alike', alike],
      ['short', short],
    ] as const)
      call.catch((error: { code?: unknown }) => ended.push(`${name}:${String(error.code)}`));
    await vi.advanceTimersByTimeAsync(99);
    expect(ended).toEqual([]);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended).toEqual([`short:${SdkErrorCode.RequestTimeout}`]);
    expect(tap.pending).toBe(2);
    await vi.advanceTimersByTimeAsync(899);
    expect(ended).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(ended.sort()).toEqual([
      `alike:${SdkErrorCode.RequestTimeout}`,
      `long:${SdkErrorCode.RequestTimeout}`,
      `short:${SdkErrorCode.RequestTimeout}`,
    ]);
    expect(received.filter((m) => m.method === 'notifications/cancelled')).toHaveLength(3);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('P3/R3: a result that is not an object is left to the SDK (it reports it) and the call ends in its timeout, never a hang', async () => {
    const { tap, reply, sdk } = await setup();
    const call = tap.request('tools/call', { name: 'x' }, { timeoutMs: 1000 });
    const outcome = expect(call).rejects.toMatchObject({ code: SdkErrorCode.RequestTimeout });
    await reply({ id: FIRST_ID, result: 'a string' });
    expect(sdk.messages).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1000);
    await outcome;
  });

  it('P4: the transport closing fails every pending request at once and still tells the SDK, leaving no timer; later requests fail at once', async () => {
    const { tap, far, sdk, reply } = await setup();
    const answered = tap.request('tools/call', { name: 't0' }, { timeoutMs: 60_000 });
    await reply({ id: FIRST_ID, result: { content: [] } });
    await answered;
    const calls = [1, 2].map((n) => tap.request('tools/call', { name: `t${n}` }, { timeoutMs: 60_000 }));
    await far.close();
    for (const call of calls)
      await expect(call).rejects.toMatchObject({ code: SdkErrorCode.ConnectionClosed });
    expect(sdk.closed).toBe(1);
    expect(tap.pending).toBe(0);
    // The answered call's timer did not wait for the sweep either.
    expect(vi.getTimerCount()).toBe(0);
    await expect(tap.request('tools/call', { name: 'x' }, { timeoutMs: 1000 })).rejects.toMatchObject({
      code: SdkErrorCode.ConnectionClosed,
    });
  });
});
