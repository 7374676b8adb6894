/**
 * The stdio hot path (direct-calls.ts): which tools/call requests it answers past the SDK, and
 * the promises it keeps that a well-behaved client cannot see (no answer after a cancellation,
 * calls aborted when the session closes, each call counted). The client end is raw JSON-RPC over
 * the SDK's InMemoryTransport, so every message the server sends is seen. The answers themselves
 * are test/upstream/server.test.ts, run on both paths.
 */
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';
import { Server } from '@modelcontextprotocol/server';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { LazySignal, type CallSignal } from '../../src/core/call-signal.js';
import { failure, ok, type Result } from '../../src/core/result.js';
import type { ToolBackend, UpstreamDeps } from '../../src/upstream/server.js';
import { fakeBackend, testUpstream } from './fake-backend.js';

type Message = { id?: unknown; method?: string; result?: Record<string, unknown>; error?: { code: number } };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
  vi.restoreAllMocks();
});

/** A 2025 session on the direct path, its client end raw: `received` is every message sent to it. */
async function session(backend: ToolBackend, extra: Partial<UpstreamDeps> = {}) {
  const upstream = testUpstream(backend, extra);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  const received: Message[] = [];
  clientSide.onmessage = (message) => received.push(message as Message);
  await clientSide.start();
  await upstream.connect(serverSide, { direct: true });
  const send = (message: Record<string, unknown>) =>
    clientSide.send({ jsonrpc: '2.0', ...message } as JSONRPCMessage);
  await send({
    id: 0,
    method: 'initialize',
    params: { protocolVersion: '2025-11-25', capabilities: {}, clientInfo: { name: 'raw', version: '1' } },
  });
  await expect.poll(() => received.length).toBe(1);
  await send({ method: 'notifications/initialized' });
  cleanups.push(async () => {
    await clientSide.close();
    await upstream.close();
  });
  return { received, send, clientSide, upstream };
}

const answerTo = (received: Message[], id: number) => received.find((message) => message.id === id);

describe('direct tools/call path', () => {
  it("U1: a plain tools/call never reaches the SDK's request dispatch; one the SDK must judge still does, and gets its refusal", async () => {
    const dispatched = vi.spyOn(Server.prototype as unknown as { _onrequest: () => void }, '_onrequest');
    const { received, send } = await session(fakeBackend());
    const before = dispatched.mock.calls.length;
    await send({ id: 1, method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'hi' } } });
    await expect.poll(() => answerTo(received, 1)).toBeDefined();
    expect(answerTo(received, 1)?.result).toMatchObject({
      isError: false,
      structuredContent: { results: 'hi' },
    });
    expect(dispatched.mock.calls.length).toBe(before);

    await send({ id: 2, method: 'tools/call', params: { name: 'demo_echo', arguments: ['hi'] } });
    await expect.poll(() => answerTo(received, 2)).toBeDefined();
    expect(answerTo(received, 2)?.error?.code).toBe(-32602);
    expect(dispatched.mock.calls.length).toBe(before + 1);
  });

  it('P3, issue 57: a plain call makes no AbortController: its cancellation is a LazySignal until something asks for a real one', async () => {
    const Real = globalThis.AbortController;
    let made = 0;
    globalThis.AbortController = class extends Real {
      constructor() {
        super();
        made += 1;
      }
    };
    cleanups.push(async () => {
      globalThis.AbortController = Real;
    });
    const signals: CallSignal[] = [];
    const backend = fakeBackend((call, options) => {
      signals.push(options.signal);
      return Promise.resolve(ok(call.arguments['text'], { meta: { server: call.server, tool: call.tool } }));
    });
    const { received, send } = await session(backend);
    const before = made;
    for (const id of [1, 2, 3])
      await send({ id, method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'hi' } } });
    await expect.poll(() => [1, 2, 3].every((id) => answerTo(received, id) !== undefined)).toBe(true);
    expect(made - before).toBe(0);
    expect(signals.map((signal) => signal instanceof LazySignal)).toEqual([true, true, true]);
  });

  it('P3: a cancelled call is never answered, and the downstream call sees the abort with the reason', async () => {
    let release: (result: Result) => void = () => undefined;
    const reasons: unknown[] = [];
    const backend = fakeBackend(
      (_call, options) =>
        new Promise<Result>((resolve) => {
          release = resolve;
          options.signal.addEventListener('abort', () => reasons.push(options.signal.reason));
        }),
    );
    const { received, send } = await session(backend);
    await send({ id: 1, method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } });
    await expect.poll(() => backend.calls.length).toBe(1);
    await send({ method: 'notifications/cancelled', params: { requestId: 1, reason: 'user stop' } });
    expect(reasons).toEqual(['user stop']);
    release(ok('late'));
    await send({ id: 2, method: 'ping' });
    await expect.poll(() => answerTo(received, 2)).toBeDefined();
    await new Promise((resolve) => setImmediate(resolve));
    expect(answerTo(received, 1)).toBeUndefined();
  });

  it('P4: the session closing aborts every call in flight, after the session is forgotten', async () => {
    const signals: CallSignal[] = [];
    const backend = fakeBackend(
      (_call, options) =>
        new Promise<Result>((resolve) => {
          signals.push(options.signal);
          options.signal.addEventListener('abort', () => resolve(failure('cancelled', 'cancelled')));
        }),
    );
    const { send, clientSide, upstream } = await session(backend);
    for (const id of [1, 2]) {
      await send({ id, method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } });
    }
    await expect.poll(() => signals.length).toBe(2);
    expect(upstream.inFlight()).toBe(2);
    await clientSide.close();
    expect(signals.map((signal) => signal.aborted)).toEqual([true, true]);
    expect(String(signals[0]?.reason)).toContain('Connection closed');
    await expect.poll(() => upstream.inFlight()).toBe(0);
  });
});
