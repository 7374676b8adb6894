/**
 * End to end over stdio: an SDK client spawns `mcp-normalizer serve` (the built bin) exactly as a
 * host would, on the demo config and on test configs with the counter, dynamic and slow fixtures.
 */
import { CallToolResultSchema, ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { StdioSession } from './cli-process.js';
import { connectStdio, DEFAULT_CONFIG, fixtureEntry, writeConfig } from './cli-process.js';

type Envelope = { results?: unknown; meta_data: Record<string, unknown> };

function envelope(result: CallToolResult): Envelope {
  return result.structuredContent as Envelope;
}

async function call(
  session: StdioSession,
  name: string,
  args: Record<string, unknown> = {},
): Promise<CallToolResult> {
  return session.client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    CallToolResultSchema,
  );
}

async function counterCalls(session: StdioSession): Promise<number> {
  const result = await call(session, 'counter_count');
  return (envelope(result).results as { calls: number }).calls;
}

describe('e2e over stdio on config/default.yaml', () => {
  let session: StdioSession;
  beforeAll(async () => {
    session = await connectStdio(DEFAULT_CONFIG);
  });
  afterAll(async () => {
    await session?.client.close();
  });

  it('U1/U4: serves the demo servers as one prefixed tool list', async () => {
    const { tools } = await session.client.listTools();
    const names = tools.map((tool) => tool.name);
    for (const prefix of ['structured_', 'text_', 'files_', 'inband_', 'errors_', 'annotated_', 'slow_']) {
      expect(names.some((name) => name.startsWith(prefix))).toBe(true);
    }
  });

  it('T6/T7: the destructive demo tool shows the explicit gate; the lean default advertises no outputSchema', async () => {
    const { tools } = await session.client.listTools();
    const gated = tools.find((tool) => tool.name === 'annotated_delete_file');
    expect(gated?.description).toMatch(/^REQUIRES EXPLICIT USER INSTRUCTION/);
    expect(gated?.inputSchema.required).toContain('explicit_action');
    expect(gated?.annotations?.destructiveHint).toBe(true);
    expect(gated?.outputSchema).toBeUndefined();
  });

  it('F1: a plain-text demo tool answers with the results envelope', async () => {
    const result = await call(session, 'text_prose');
    expect(result.isError).toBe(false);
    expect(envelope(result)).toMatchObject({
      results: 'The build finished in 42 seconds with no warnings.',
      meta_data: { server: 'text', tool: 'prose', source: 'text' },
    });
  });
});

describe('e2e over stdio: refused calls reach no downstream', () => {
  let session: StdioSession;
  beforeAll(async () => {
    const config = writeConfig(
      [
        'servers:',
        fixtureEntry('counter', 'counter'),
        fixtureEntry('dynamic', 'dynamic'),
        fixtureEntry('slow', 'slow'),
      ].join('\n'),
    );
    session = await connectStdio(config);
  });
  afterAll(async () => {
    await session?.client.close();
  });

  it('T7: a destructive tool called without explicit_action fails with consent_required and the downstream never sees it', async () => {
    const before = await counterCalls(session);
    const refused = await call(session, 'counter_delete_all');
    expect(refused.isError).toBe(true);
    expect(envelope(refused).meta_data['error_type']).toBe('consent_required');
    expect(await counterCalls(session)).toBe(before);
    const allowed = await call(session, 'counter_delete_all', { explicit_action: 'COUNTER_DELETE_ALL' });
    expect(allowed.isError).toBe(false);
    expect(await counterCalls(session)).toBe(before + 1);
  });

  it('T8: bad arguments fail with invalid_arguments listing each issue, and reach no downstream', async () => {
    const before = await counterCalls(session);
    const result = await call(session, 'counter_add', { a: 'one' });
    expect(result.isError).toBe(true);
    const meta = envelope(result).meta_data;
    expect(meta['error_type']).toBe('invalid_arguments');
    expect((meta['error_data'] as { issues: unknown[] }).issues.length).toBeGreaterThanOrEqual(2);
    expect(await counterCalls(session)).toBe(before);
  });

  it('T9: an unknown name is an unknown_tool isError result with close names, and reaches no downstream', async () => {
    const before = await counterCalls(session);
    const result = await call(session, 'counter_ad', { a: 1, b: 2 });
    expect(result.isError).toBe(true);
    const meta = envelope(result).meta_data;
    expect(meta['error_type']).toBe('unknown_tool');
    expect((meta['error_data'] as { suggestions: string[] }).suggestions).toContain('counter_add');
    expect(await counterCalls(session)).toBe(before);
  });

  it('T10: the client receives notifications/tools/list_changed when the dynamic server adds a tool', async () => {
    let changed = 0;
    session.client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
      changed += 1;
    });
    // A host hears of changes of a list it was answered.
    await session.client.listTools();
    const added = await call(session, 'dynamic_add_tool', { name: 'fresh' });
    expect(added.isError).toBe(false);
    await expect.poll(() => changed, { timeout: 10_000 }).toBeGreaterThan(0);
    const { tools } = await session.client.listTools();
    expect(tools.map((tool) => tool.name)).toContain('dynamic_fresh');
    const result = await call(session, 'dynamic_fresh', { text: 'new' });
    expect(envelope(result).results).toBe('new');
  });

  it("P3: downstream progress reaches the upstream client with the client's own token", async () => {
    const seen: { progress: number }[] = [];
    const result = await session.client.request(
      {
        method: 'tools/call',
        params: { name: 'slow_slow', arguments: { duration_ms: 400, interval_ms: 50 } },
      },
      CallToolResultSchema,
      { onprogress: (progress) => seen.push(progress) },
    );
    expect(result.isError).toBe(false);
    // Never assert on the last notification: the SDK client may drop it when it races the response.
    expect(seen.length).toBeGreaterThan(0);
    expect(seen[0]?.progress).toBe(1);
  });

  it('P3: an upstream cancellation cancels the downstream call (the pool ends it as cancelled)', async () => {
    const controller = new AbortController();
    const pending = session.client.request(
      {
        method: 'tools/call',
        params: { name: 'slow_slow', arguments: { duration_ms: 5000, interval_ms: 50 } },
      },
      CallToolResultSchema,
      { signal: controller.signal, onprogress: () => controller.abort('stop') },
    );
    await expect(pending).rejects.toThrow();
    await expect.poll(() => session.stderr(), { timeout: 10_000 }).toMatch(/"errorType":"cancelled"/);
  });
});
