/**
 * O1's counters are recorded off the answer's path (app/metrics.ts): what a call, a request or a
 * forwarded notification counts is in prom-client within 100 ms, and in any scrape at once,
 * however soon after the call it comes.
 */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { createMetrics } from '../../src/app/metrics.js';
import { failure, ok } from '../../src/core/result.js';
import type { Pool } from '../../src/downstream/pool.js';

function metrics() {
  return createMetrics({
    pool: { snapshot: () => [] } as unknown as Pool,
    catalogSize: () => 0,
    sessions: () => 0,
  });
}

const line = (body: string, prefix: string): string | undefined =>
  body.split('\n').find((entry) => entry.startsWith(prefix));

afterEach(() => {
  vi.useRealTimers();
});

describe('metrics', () => {
  it('O1: counts recorded during a call are in a scrape made before any I/O turn', async () => {
    const m = metrics();
    m.callEnded('s', 'echo', ok('x', { meta: { server: 's', tool: 'echo', elapsedMs: 30 } }));
    m.callEnded(
      's',
      'echo',
      failure('tool_error', 'no', { meta: { server: 's', tool: 'echo', elapsedMs: 5 } }),
    );
    m.request('legacy', 'tools/call');
    m.request('modern', 'made/up');
    m.forwarded('progress');
    const { body } = await m.scrape();
    expect(line(body, 'mcp_normalizer_tool_calls_total{server="s",tool="echo",outcome="ok"}')).toMatch(/ 1$/);
    expect(
      line(body, 'mcp_normalizer_tool_calls_total{server="s",tool="echo",outcome="tool_error"}'),
    ).toMatch(/ 1$/);
    expect(line(body, 'mcp_normalizer_tool_call_duration_seconds_count{server="s",outcome="ok"}')).toMatch(
      / 1$/,
    );
    expect(line(body, 'mcp_normalizer_tool_call_duration_seconds_sum{server="s",outcome="ok"}')).toMatch(
      / 0\.03$/,
    );
    expect(line(body, 'mcp_normalizer_upstream_requests_total{era="legacy",method="tools/call"}')).toMatch(
      / 1$/,
    );
    expect(line(body, 'mcp_normalizer_upstream_requests_total{era="modern",method="other"}')).toMatch(/ 1$/);
    expect(line(body, 'mcp_normalizer_notifications_forwarded_total{kind="progress"}')).toMatch(/ 1$/);
  });

  it('O1, P1: with an endpoint, prom-client loads a second after the start is over, not at the first counts, and the counts made before it are all there', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    const m = metrics();
    expect(vi.getTimerCount()).toBe(0);
    m.served();
    expect(vi.getTimerCount()).toBe(1);
    m.request('legacy', 'initialize');
    m.callEnded('s', 'echo', ok('x', { meta: { server: 's', tool: 'echo', elapsedMs: 5 } }));
    // The host's first requests do not bring the load forward: the counts wait for it.
    vi.advanceTimersByTime(5000);
    expect(vi.getTimerCount()).toBe(1);
    // The start is over: prom-client is asked for a second later, and nothing is left on a timer.
    m.startOver();
    vi.advanceTimersByTime(999);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
    const { body } = await m.scrape();
    expect(line(body, 'mcp_normalizer_upstream_requests_total{era="legacy",method="initialize"}')).toMatch(
      / 1$/,
    );
    expect(line(body, 'mcp_normalizer_tool_calls_total{server="s",tool="echo",outcome="ok"}')).toMatch(/ 1$/);
    expect(body).toMatch(/^process_cpu_seconds_total /m);
  });

  it('O1, P1: with a server still starting, prom-client loads 10 s after the endpoint opened', () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    const m = metrics();
    m.served();
    m.request('legacy', 'initialize');
    vi.advanceTimersByTime(9999);
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(1);
    expect(vi.getTimerCount()).toBe(0);
  });

  it('O1, P1: with no endpoint that scrapes (stdio alone), prom-client is not loaded after the start; an in-process scrape still finds every count', async () => {
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    const m = metrics();
    m.startOver();
    for (let i = 0; i < 3000; i++) {
      m.callEnded('s', 'echo', ok('x', { meta: { server: 's', tool: 'echo', elapsedMs: 1 } }));
    }
    // The counts wait, with no timer: nothing asks for prom-client, however long the process runs.
    expect(vi.getTimerCount()).toBe(0);
    vi.advanceTimersByTime(60_000);
    expect(vi.getTimerCount()).toBe(0);
    vi.useRealTimers();
    const { body } = await m.scrape();
    expect(line(body, 'mcp_normalizer_tool_calls_total{server="s",tool="echo",outcome="ok"}')).toMatch(
      / 3000$/,
    );
  });

  it('O1: counts recorded off the path are applied once, by the next flush or the next scrape, never twice', async () => {
    const m = metrics();
    m.request('legacy', 'tools/list');
    await new Promise((resolve) => setTimeout(resolve, 150));
    m.request('legacy', 'tools/list');
    const first = await m.scrape();
    const second = await m.scrape();
    for (const { body } of [first, second]) {
      expect(line(body, 'mcp_normalizer_upstream_requests_total{era="legacy",method="tools/list"}')).toMatch(
        / 2$/,
      );
    }
  });

  it('O1: any number of counts waits on one timer of 100 ms, and a scrape takes them at once', async () => {
    const m = metrics();
    // prom-client loaded (its own timer gone): what is left is the counts' one timer.
    await m.scrape();
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout', 'setImmediate', 'clearImmediate'] });
    for (let i = 0; i < 50; i++) {
      m.callEnded('s', 'echo', ok('x', { meta: { server: 's', tool: 'echo', elapsedMs: i } }));
    }
    expect(vi.getTimerCount()).toBe(1);
    vi.advanceTimersByTime(100);
    expect(vi.getTimerCount()).toBe(0);
    m.request('legacy', 'tools/call');
    expect(vi.getTimerCount()).toBe(1);
    const { body } = await m.scrape();
    expect(line(body, 'mcp_normalizer_tool_calls_total{server="s",tool="echo",outcome="ok"}')).toMatch(
      / 50$/,
    );
    expect(line(body, 'mcp_normalizer_tool_call_duration_seconds_count{server="s",outcome="ok"}')).toMatch(
      / 50$/,
    );
    expect(line(body, 'mcp_normalizer_upstream_requests_total{era="legacy",method="tools/call"}')).toMatch(
      / 1$/,
    );
  });
});
