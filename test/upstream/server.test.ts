/**
 * The upstream server through a real SDK Client over InMemoryTransport, on a scripted backend:
 * what a client receives for tools/list and tools/call, progress, cancellation, T10, and the
 * R3 safety net.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { failure, ok } from '../../src/core/result.js';
import type { Result } from '../../src/core/result.js';
import type { ToolBackend, UpstreamServer } from '../../src/upstream/server.js';
import { ECHO_TOOL, fakeBackend, wireUpstream } from './fake-backend.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Which path a session's plain tools/call takes: the SDK's, or the stdio direct path (U1). */
let direct = false;

function wire(backend: ToolBackend): Promise<{ client: Client; upstream: UpstreamServer }> {
  return wireUpstream(backend, cleanups, {}, { direct });
}

function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

function envelope(result: CallToolResult): Record<string, Record<string, unknown>> {
  return result.structuredContent as Record<string, Record<string, unknown>>;
}

// Every promise below holds on both paths: the direct path answers calls as the SDK does.
describe.each([
  ['the SDK path', false],
  ['the direct path', true],
])('upstream server, tools/call through %s', (_path, directPath) => {
  beforeEach(() => {
    direct = directPath;
  });

  it('U1/T6: announces tools with listChanged and serves the raw downstream inputSchema verbatim', async () => {
    const { client } = await wire(fakeBackend());
    expect(client.getServerCapabilities()?.tools?.listChanged).toBe(true);
    expect(client.getServerVersion()?.name).toBe('mcp-normalizer');
    const { tools } = await client.listTools();
    expect(tools).toEqual([ECHO_TOOL]);
  });

  it('R2/F1: a successful call is rendered once, as the envelope in structuredContent and as text', async () => {
    const backend = fakeBackend();
    const { client } = await wire(backend);
    const result = await call(client, 'demo_echo', { text: 'hi' });
    expect(result.isError).toBe(false);
    expect(envelope(result)['results']).toBe('hi');
    expect(envelope(result)['meta_data']).toMatchObject({ server: 'demo', tool: 'echo', source: 'text' });
    const [first] = result.content;
    expect(first?.type === 'text' ? JSON.parse(first.text) : undefined).toEqual(result.structuredContent);
    expect(backend.calls.map((c) => [c.server, c.tool, c.arguments])).toEqual([
      ['demo', 'echo', { text: 'hi' }],
    ]);
  });

  it('T9: an unknown name is an isError unknown_tool result (not a protocol error) and reaches no downstream', async () => {
    const backend = fakeBackend();
    const { client } = await wire(backend);
    const result = await call(client, 'demo_ecko', {});
    expect(result.isError).toBe(true);
    expect(envelope(result)['meta_data']).toMatchObject({
      is_error: true,
      error_type: 'unknown_tool',
      error_data: { suggestions: ['demo_echo'] },
    });
    expect(backend.calls).toHaveLength(0);
  });

  it('T8: arguments refused by prepareCall fail with invalid_arguments and reach no downstream', async () => {
    const backend = fakeBackend();
    const { client } = await wire(backend);
    const result = await call(client, 'demo_echo', { text: '' });
    expect(result.isError).toBe(true);
    expect(envelope(result)['meta_data']?.['error_type']).toBe('invalid_arguments');
    expect(backend.calls).toHaveLength(0);
  });

  it('R3: a backend that throws still answers, with a rendered normalization_error', async () => {
    const backend = fakeBackend(() => {
      throw new Error('boom');
    });
    const { client } = await wire(backend);
    const result = await call(client, 'demo_echo', { text: 'x' });
    expect(result.isError).toBe(true);
    expect(envelope(result)['meta_data']?.['error_type']).toBe('normalization_error');
    expect(JSON.stringify(result)).not.toContain('boom');
  });

  it("R3/R4: the outermost net answers through the backend's outcome step (instruction, log line, count)", async () => {
    const answered: { name: string; errorType: string }[] = [];
    const backend = {
      ...fakeBackend(() => {
        throw new Error('boom');
      }),
      answer: <R extends Result>(name: string, result: R): R => {
        answered.push({ name, errorType: result.success ? 'ok' : result.errorType });
        return { ...result, instruction: 'FROM THE OUTCOME STEP' };
      },
    };
    const { client } = await wire(backend);
    const result = await call(client, 'demo_echo', { text: 'x' });
    expect(answered).toEqual([{ name: 'demo_echo', errorType: 'normalization_error' }]);
    expect(envelope(result)['meta_data']).toMatchObject({
      error_type: 'normalization_error',
      instruction: 'FROM THE OUTCOME STEP',
    });
  });

  it('R4: a downstream failure keeps its instruction in the envelope', async () => {
    const backend = fakeBackend(() =>
      Promise.resolve(failure('timeout', 'No answer within 10 ms', { instruction: 'Retry at most once.' })),
    );
    const { client } = await wire(backend);
    const result = await call(client, 'demo_echo', { text: 'x' });
    expect(envelope(result)['meta_data']).toMatchObject({
      error_type: 'timeout',
      instruction: 'Retry at most once.',
    });
  });

  it("P3: downstream progress is forwarded with the upstream's own progress token", async () => {
    const backend = fakeBackend(async (_call, options) => {
      options.onProgress?.({ progress: 1, total: 3, message: 'one' });
      options.onProgress?.({ progress: 2, total: 3, message: 'two' });
      await new Promise((resolve) => setImmediate(resolve));
      return ok('done');
    });
    const { client } = await wire(backend);
    const seen: unknown[] = [];
    const result = await client.request(
      { method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } },
      CallToolResultSchema,
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(result.isError).toBe(false);
    // Never assert on the LAST notification: the SDK client may drop it when it races the response.
    expect(seen[0]).toEqual({ progress: 1, total: 3, message: 'one' });
    expect(backend.calls[0]?.progress).toBe(true);
  });

  it('P3: without a progress token no progress callback is given to the downstream call', async () => {
    const backend = fakeBackend();
    const { client } = await wire(backend);
    await call(client, 'demo_echo', { text: 'x' });
    expect(backend.calls[0]?.progress).toBe(false);
  });

  it('P3: an upstream cancellation aborts the signal the downstream call was given', async () => {
    let release: (result: Result) => void = () => undefined;
    const backend = fakeBackend(
      (_call, options) =>
        new Promise<Result>((resolve) => {
          release = resolve;
          options.signal.addEventListener('abort', () => resolve(failure('cancelled', 'cancelled')));
        }),
    );
    const { client } = await wire(backend);
    const controller = new AbortController();
    const pending = client.request(
      { method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } },
      CallToolResultSchema,
      { signal: controller.signal },
    );
    await expect.poll(() => backend.calls.length).toBe(1);
    controller.abort('user pressed stop');
    await expect(pending).rejects.toThrow();
    await expect.poll(() => backend.calls[0]?.signal.aborted).toBe(true);
    release(ok('late'));
  });

  it('T10: notifyToolsChanged sends notifications/tools/list_changed to a client that listed, and the next list is fresh', async () => {
    const backend = fakeBackend();
    const { client, upstream } = await wire(backend);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    await client.listTools();
    backend.tools.push({ ...ECHO_TOOL, name: 'demo_shout' });
    upstream.notifyToolsChanged();
    await expect.poll(() => changed).toBe(1);
    const { tools } = await client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['demo_echo', 'demo_shout']);
  });

  it('T10: a client that has not listed yet is told of no change; one that listed is told once until it lists again', async () => {
    const backend = fakeBackend();
    const { client, upstream } = await wire(backend);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    upstream.notifyToolsChanged();
    upstream.notifyPromptsChanged();
    upstream.notifyResourcesChanged();
    await client.ping();
    expect(changed).toBe(0);
    await client.listTools();
    upstream.notifyToolsChanged();
    upstream.notifyToolsChanged();
    await client.ping();
    await expect.poll(() => changed).toBe(1);
    await client.listTools();
    upstream.notifyToolsChanged();
    await expect.poll(() => changed).toBe(2);
  });

  it('T10/P1: a change while a list waits is in its answer, not a list_changed ahead of it; the next change is told', async () => {
    const backend = fakeBackend();
    let open: () => void = () => undefined;
    const waited = new Promise<void>((resolve) => (open = resolve));
    // P1's wait for servers still starting: the list is read once it ends.
    backend.listTools = () => waited.then(() => backend.tools);
    const { client, upstream } = await wire(backend);
    let changed = 0;
    client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    const listing = client.listTools();
    await client.ping();
    backend.tools.push({ ...ECHO_TOOL, name: 'demo_shout' });
    upstream.notifyToolsChanged();
    await client.ping();
    open();
    expect((await listing).tools.map((tool) => tool.name)).toEqual(['demo_echo', 'demo_shout']);
    await client.ping();
    expect(changed).toBe(0);
    upstream.notifyToolsChanged();
    await expect.poll(() => changed).toBe(1);
  });

  it('P5: after stopAccepting new calls fail fast and drain waits for the calls in flight', async () => {
    let release: () => void = () => undefined;
    const backend = fakeBackend(
      () => new Promise<Result>((resolve) => (release = () => resolve(ok('slow')))),
    );
    const { client, upstream } = await wire(backend);
    const slow = call(client, 'demo_echo', { text: 'x' });
    await expect.poll(() => upstream.inFlight()).toBe(1);
    upstream.stopAccepting();
    const refused = await call(client, 'demo_echo', { text: 'y' });
    expect(envelope(refused)['meta_data']?.['error_type']).toBe('downstream_unavailable');
    expect(backend.calls).toHaveLength(1);
    const drained = upstream.drain(5000);
    release();
    await expect(drained).resolves.toBe(true);
    expect(envelope(await slow)['results']).toBe('slow');
  });

  it('P5: drain gives up after the grace period when a call does not finish', async () => {
    const backend = fakeBackend(() => new Promise<Result>(() => undefined));
    const { client, upstream } = await wire(backend);
    void call(client, 'demo_echo', { text: 'x' }).catch(() => undefined);
    await expect.poll(() => upstream.inFlight()).toBe(1);
    vi.useFakeTimers();
    try {
      const drained = upstream.drain(5000);
      await vi.advanceTimersByTimeAsync(5000);
      await expect(drained).resolves.toBe(false);
    } finally {
      vi.useRealTimers();
    }
  });
});
