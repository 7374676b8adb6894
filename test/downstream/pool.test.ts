/**
 * The pool over in-memory servers with fake timers: queue bound (P2), timeout, progress and
 * cancellation (P3), fail-fast while down (P4), lenient results (P7), shutdown (P5), start (P1).
 */
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import type { ServerConfig } from '../../src/config/types.js';
import { isFailure, type Result } from '../../src/core/result.js';
import { LoginRequiredError } from '../../src/downstream/oauth-login.js';
import { Pool, type PoolOptions } from '../../src/downstream/pool.js';
import { memoryConfig } from '../helpers/fixtures.js';
import { captureLogger, MemoryTransports, rawServer, type Connectable } from '../helpers/memory-servers.js';

const OBJECT = { type: 'object', properties: {} };

async function settle(): Promise<void> {
  for (let i = 0; i < 3; i++) await new Promise((resolve) => setImmediate(resolve));
}

const config = memoryConfig;

/** Records what reached the downstream: handler invocations and cancellations. */
interface Probe {
  started: number;
  cancelled: number;
}

/**
 * echo; hang (never answers; notes cancellation); wait {ms} (answers after ms); ticks {n, every}
 * (progress every `every` ms, answers after n ticks). Timers are the test's fake ones.
 */
function memServer(probe: Probe): McpServer {
  const server = new McpServer({ name: 'mem', version: '1' });
  server.registerTool('echo', { inputSchema: { text: z.string() } }, ({ text }) => {
    probe.started++;
    return { content: [{ type: 'text', text }] };
  });
  server.registerTool('hang', {}, (extra) => {
    probe.started++;
    extra.signal.addEventListener('abort', () => probe.cancelled++);
    return new Promise(() => {});
  });
  server.registerTool('wait', { inputSchema: { ms: z.number() } }, async ({ ms }) => {
    probe.started++;
    await new Promise((resolve) => setTimeout(resolve, ms));
    return { content: [{ type: 'text', text: `waited ${ms}` }] };
  });
  server.registerTool(
    'ticks',
    { inputSchema: { n: z.number(), every: z.number() } },
    async ({ n, every }, extra) => {
      probe.started++;
      for (let i = 1; i <= n; i++) {
        await new Promise((resolve) => setTimeout(resolve, every));
        const progressToken = extra._meta?.progressToken;
        if (progressToken !== undefined) {
          await extra.sendNotification({
            method: 'notifications/progress',
            params: { progressToken, progress: i, total: n },
          });
        }
      }
      return { content: [{ type: 'text', text: `${n} ticks` }] };
    },
  );
  return server;
}

function setup(
  servers: ServerConfig[],
  builders: Record<string, () => Connectable>,
  options: Partial<PoolOptions> = {},
) {
  const transports = new MemoryTransports(builders);
  const { logger, lines } = captureLogger();
  const pool = new Pool({ servers, logger, transports, random: () => 0, ...options });
  return { pool, transports, lines };
}

function failed(result: Result) {
  if (!isFailure(result)) throw new Error(`expected a failure, got ${JSON.stringify(result)}`);
  return result;
}

beforeEach(() => {
  vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'Date'] });
});
afterEach(() => {
  vi.useRealTimers();
});

describe('Pool', () => {
  it('P1: start resolves once every server is ready or failed its first attempt; the others serve', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('good'), config('bad'), config('off', { enabled: false })], {
      good: () => memServer(probe),
      bad: () => {
        throw Object.assign(new Error('spawn missing-server ENOENT'), { code: 'ENOENT' });
      },
    });
    await pool.start();
    const snapshot = pool.snapshot();
    expect(snapshot.map((s) => [s.name, s.state])).toEqual([
      ['good', 'ready'],
      ['bad', 'down'],
    ]);
    expect(snapshot[1]?.lastError).toMatch(/ENOENT/);
    expect(snapshot[1]?.retryAfterMs).toBe(250);
    expect((await pool.callTool('good', 'echo', { text: 'hi' })).success).toBe(true);
    await pool.close({ graceMs: 0 });
  });

  it('D2, issue 56: a server that waits for its user’s login is no fault: no warning or error from its start, its refusal says login_required', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool, lines } = setup([config('good'), config('locked')], {
      good: () => memServer(probe),
      locked: () => {
        throw new LoginRequiredError('locked');
      },
    });
    await pool.start();
    expect(pool.snapshot()[1]).toMatchObject({ state: 'down', loginRequired: true });
    const refused = failed(await pool.callTool('locked', 'echo', { text: 'hi' }));
    expect(refused.errorData).toMatchObject({ reason: 'login_required' });
    expect(lines.filter((line) => Number(line['level']) >= 40)).toEqual([]);
    expect(lines.map((line) => line['msg'])).toEqual(
      expect.arrayContaining(['downstream waits for a login', 'downstream needs a login to start']),
    );
    await pool.close({ graceMs: 0 });
  });

  it('P1, P5: a server still starting when the pool closes is not reported as failed to start', async () => {
    const probe = { started: 0, cancelled: 0 };
    // Never answers initialize: its first attempt ends only when the pool closes.
    const silent = (): Connectable => ({
      connect: async (transport) => {
        transport.onmessage = () => undefined;
        await transport.start();
      },
    });
    const { pool, lines } = setup([config('good'), config('stuck')], {
      good: () => memServer(probe),
      stuck: silent,
    });
    const started = pool.start();
    await settle();
    expect(pool.snapshot().map((s) => [s.name, s.state])).toEqual([
      ['good', 'ready'],
      ['stuck', 'connecting'],
    ]);
    await pool.close({ graceMs: 0 });
    // The stuck attempt ends at its startup bound at the latest.
    await vi.advanceTimersByTimeAsync(120_000);
    await started;
    expect(lines.filter((line) => line['msg'] === 'downstream failed to start')).toEqual([]);
    // Without a shutdown, a server whose first attempt failed is reported (the test has teeth).
    const failing = setup([config('bad')], {
      bad: () => {
        throw new Error('spawn missing-server ENOENT');
      },
    });
    await failing.pool.start();
    expect(failing.lines.filter((line) => line['msg'] === 'downstream failed to start')).toEqual([
      expect.objectContaining({ server: 'bad', level: 50 }),
    ]);
    await failing.pool.close({ graceMs: 0 });
  });

  it('P3: a call that outlives timeout_ms fails with timeout', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { timeoutMs: 1000 })], { s: () => memServer(probe) });
    await pool.start();
    const pending = pool.callTool('s', 'hang', {});
    await vi.advanceTimersByTimeAsync(999);
    let done = false;
    void pending.then(() => (done = true));
    await settle();
    expect(done).toBe(false);
    await vi.advanceTimersByTimeAsync(1);
    const result = failed(await pending);
    expect(result.errorType).toBe('timeout');
    expect(result.meta.elapsedMs).toBe(1000);
    await pool.close({ graceMs: 0 });
  });

  it('P3: the deadline counts from arrival: a queued call starts with what is left, and one that never gets a slot fails as queued', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { timeoutMs: 1000, concurrency: 1 })], { s: () => memServer(probe) });
    await pool.start();
    const first = pool.callTool('s', 'wait', { ms: 700 });
    const second = pool.callTool('s', 'wait', { ms: 700 }); // starts at 700 with 300 ms left
    const third = pool.callTool('s', 'wait', { ms: 700 }); // never gets the slot in time
    await vi.advanceTimersByTimeAsync(999);
    expect(probe.started).toBe(2);
    await vi.advanceTimersByTimeAsync(1);
    const [a, b, c] = await Promise.all([first, second, third]);
    expect(a.success).toBe(true);
    expect(failed(b)).toMatchObject({ errorType: 'timeout', meta: { elapsedMs: 1000 } });
    expect(failed(c)).toMatchObject({
      errorType: 'timeout',
      errorData: { reason: 'queued', timeout_ms: 1000 },
      meta: { elapsedMs: 1000 },
    });
    expect(failed(c).error).toMatch(/did not start within 1000 ms/);
    expect(probe.started).toBe(2);
    await pool.close({ graceMs: 0 });
  });

  it('P3: progress restarts the timeout and reaches onProgress', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { timeoutMs: 1000 })], { s: () => memServer(probe) });
    await pool.start();
    const progress: number[] = [];
    // 5 ticks of 600 ms: 3000 ms in all, three times the timeout, but never 1000 ms without progress.
    const pending = pool.callTool(
      's',
      'ticks',
      { n: 5, every: 600 },
      { onProgress: (p) => progress.push(p.progress) },
    );
    for (let i = 0; i < 5; i++) await vi.advanceTimersByTimeAsync(600);
    const result = await pending;
    expect(result.success).toBe(true);
    // The SDK may drop the last notification when it arrives with the response: never assert on it.
    expect(progress.slice(0, 4)).toEqual([1, 2, 3, 4]);
    await pool.close({ graceMs: 0 });
  });

  it('P3: aborting the signal answers cancelled and the downstream receives notifications/cancelled', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s')], { s: () => memServer(probe) });
    await pool.start();
    const controller = new AbortController();
    const pending = pool.callTool('s', 'hang', {}, { signal: controller.signal });
    await settle();
    controller.abort();
    const result = failed(await pending);
    expect(result.errorType).toBe('cancelled');
    await settle();
    expect(probe.cancelled).toBe(1);
    await pool.close({ graceMs: 0 });
  });

  it('P3: a call aborted while waiting in the queue is cancelled without reaching the downstream', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { concurrency: 1 })], { s: () => memServer(probe) });
    await pool.start();
    void pool.callTool('s', 'hang', {});
    const controller = new AbortController();
    const queued = pool.callTool('s', 'echo', { text: 'x' }, { signal: controller.signal });
    await settle();
    controller.abort();
    expect(failed(await queued).errorType).toBe('cancelled');
    expect(probe.started).toBe(1);
    await pool.close({ graceMs: 0 });
  });

  it('P2: past concurrency + max_queue, calls fail with overloaded at once and never reach the downstream', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { concurrency: 2, maxQueue: 3 })], { s: () => memServer(probe) });
    await pool.start();
    const accepted = Array.from({ length: 5 }, () => pool.callTool('s', 'hang', {}));
    const refused = await pool.callTool('s', 'hang', {});
    expect(failed(refused).errorType).toBe('overloaded');
    expect(failed(refused).errorData).toMatchObject({ queued: 3, in_flight: 2, max_queue: 3 });
    await settle();
    expect(probe.started).toBe(2);
    expect(pool.snapshot()[0]).toMatchObject({ inFlight: 2, queued: 3 });
    void accepted;
    await pool.close({ graceMs: 0 });
  });

  it('P2: max_queue 0 runs calls while slots are free and refuses only those that would wait', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { concurrency: 2, maxQueue: 0 })], { s: () => memServer(probe) });
    await pool.start();
    const accepted = [pool.callTool('s', 'hang', {}), pool.callTool('s', 'hang', {})];
    const refused = await pool.callTool('s', 'hang', {});
    expect(failed(refused).errorData).toMatchObject({ queued: 0, in_flight: 2, max_queue: 0 });
    await settle();
    expect(probe.started).toBe(2);
    void accepted;
    await pool.close({ graceMs: 0 });
  });

  it('P4: a call to a down server fails fast with downstream_unavailable and retry_after_ms', async () => {
    const { pool } = setup([config('s')], {
      s: () => {
        throw new Error('cannot start');
      },
    });
    await pool.start();
    await vi.advanceTimersByTimeAsync(100);
    const result = failed(await pool.callTool('s', 'echo', { text: 'x' }));
    expect(result.errorType).toBe('downstream_unavailable');
    expect(result.errorData).toMatchObject({
      state: 'down',
      retry_after_ms: 150,
      last_error: 'cannot start',
    });
    await pool.close({ graceMs: 0 });
  });

  it('P4: calls in flight when the connection drops fail at once with downstream_unavailable', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool, transports } = setup([config('s')], { s: () => memServer(probe) });
    await pool.start();
    const calls = [pool.callTool('s', 'hang', {}), pool.callTool('s', 'hang', {})];
    await settle();
    await transports.drop('s');
    for (const result of await Promise.all(calls)) {
      expect(failed(result).errorType).toBe('downstream_unavailable');
      expect(failed(result).errorData).toMatchObject({ retry_after_ms: 250 });
    }
    await pool.close({ graceMs: 0 });
  });

  it('P7: results the strict SDK helper would reject still come back as Results', async () => {
    const raw = rawServer(() => ({
      pages: [
        { tools: [{ name: 't', inputSchema: OBJECT, outputSchema: { type: 'object', required: ['x'] } }] },
      ],
      call: () => ({
        content: [{ type: 'hologram' }, { type: 'text', text: '{"y":1}' }],
        structuredContent: [1],
      }),
    }));
    const { pool } = setup([config('s')], { s: () => raw });
    await pool.start();
    const result = await pool.callTool('s', 't', {});
    expect(typeof result.success).toBe('boolean');
    expect(result.meta).toMatchObject({ server: 's', tool: 't' });
    await pool.close({ graceMs: 0 });
  });

  it('R3: an unknown server answers with a failure instead of rejecting', async () => {
    const { pool } = setup([], {});
    expect(failed(await pool.callTool('nope', 'x', {})).errorType).toBe('downstream_unavailable');
  });

  it('P5: close stops taking calls, lets in-flight calls finish within the grace period, then closes', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s')], { s: () => memServer(probe) });
    await pool.start();
    const inflight = pool.callTool('s', 'wait', { ms: 1000 });
    await settle();
    let closed = false;
    const closing = pool.close({ graceMs: 5000 }).then(() => (closed = true));
    const refused = failed(await pool.callTool('s', 'echo', { text: 'late' }));
    expect(refused.errorType).toBe('downstream_unavailable');
    expect(refused.error).toMatch(/shutting down/);
    await vi.advanceTimersByTimeAsync(1000);
    expect((await inflight).success).toBe(true);
    await closing;
    expect(closed).toBe(true);
    expect(pool.snapshot()[0]?.state).toBe('closed');
  });

  it('P5: calls still running after the grace period end as downstream_unavailable; close is bounded', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s', { concurrency: 1 })], { s: () => memServer(probe) });
    await pool.start();
    const running = pool.callTool('s', 'hang', {});
    const queued = pool.callTool('s', 'echo', { text: 'never' });
    await settle();
    const closing = pool.close({ graceMs: 200 });
    await vi.advanceTimersByTimeAsync(200);
    await closing;
    expect(failed(await running).errorType).toBe('downstream_unavailable');
    expect(failed(await queued).errorType).toBe('downstream_unavailable');
    expect(probe.started).toBe(1);
  });

  it('T10: toolsChanged and stateChanged carry the server name', async () => {
    const probe = { started: 0, cancelled: 0 };
    const { pool } = setup([config('s')], { s: () => memServer(probe) });
    const events: string[] = [];
    pool.on('toolsChanged', (server) => events.push(`tools:${server}`));
    pool.on('stateChanged', (server, state) => events.push(`${state}:${server}`));
    await pool.start();
    expect(events).toEqual(['ready:s', 'tools:s']);
    await pool.close({ graceMs: 0 });
    expect(events).toEqual(['ready:s', 'tools:s', 'closed:s']);
  });
});
