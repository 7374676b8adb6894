/**
 * O3, with real processes: `serve --http` re-reads its config on SIGHUP while 200 calls are in
 * flight across three servers, one server's settings change and one server is added; and a
 * broken edit changes nothing.
 */
import { writeFileSync } from 'node:fs';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import type { HttpServe } from './cli-process.js';
import { fixtureEntry, serveHttp, writeConfig } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function body(extra: string[] = [], bEnv = '1'): string {
  return [
    'log_level: info',
    'servers:',
    fixtureEntry('a', 'slow'),
    fixtureEntry('b', 'slow', { env: { GENERATION: bEnv } }),
    fixtureEntry('c', 'slow'),
    ...extra,
    '',
  ].join('\n');
}

async function start(
  file: string,
  args: readonly string[] = [],
): Promise<{ serve: HttpServe; client: LegacyClient; changes: () => number }> {
  const serve = await serveHttp(file, {}, 20_000, args);
  cleanup.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  const client = new LegacyClient({ name: 'reload-test', version: '1.0.0' });
  let changes = 0;
  client.setNotificationHandler(ToolListChangedNotificationSchema, () => void changes++);
  await client.connect(new LegacyHttpTransport(new URL(serve.url)));
  cleanup.push(() => client.close());
  return { serve, client, changes: () => changes };
}

const errorType = (result: unknown): string | undefined =>
  (result as { structuredContent?: { meta_data?: { error_type?: string } } }).structuredContent?.meta_data
    ?.error_type;

describe('reloading the config of a running gateway', { timeout: 90_000 }, () => {
  it('O3: SIGHUP with 200 calls in flight: unchanged servers lose none, the changed one finishes or fails downstream_unavailable, the added one is listed and list_changed is sent', async () => {
    const file = writeConfig(body());
    const { serve, client, changes } = await start(file);
    // A host that listed hears of the change (T10).
    await client.listTools();
    const servers = ['a', 'b', 'c'] as const;
    const calls = Array.from({ length: 200 }, (_, i) => {
      const server = servers[i % 3]!;
      return client
        .callTool({ name: `${server}_slow`, arguments: { duration_ms: 300, progress: false } })
        .then((result) => ({ server, error: errorType(result) }));
    });
    writeFileSync(file, body([fixtureEntry('d', 'echo')], '2'));
    serve.child.kill('SIGHUP');
    const outcomes = await Promise.all(calls);
    for (const server of ['a', 'c']) {
      expect(outcomes.filter((o) => o.server === server && o.error !== undefined)).toEqual([]);
    }
    // The changed server's calls finish, or fail as unavailable (never as an unknown tool while
    // it is replaced).
    const b = outcomes.filter((o) => o.server === 'b');
    expect(b.filter((o) => o.error !== undefined && o.error !== 'downstream_unavailable')).toEqual([]);
    await vi.waitFor(
      async () => expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('d_echo'),
      { timeout: 30_000, interval: 200 },
    );
    expect(changes()).toBeGreaterThan(0);
    expect(errorType(await client.callTool({ name: 'd_echo', arguments: { text: 'new' } }))).toBeUndefined();
    expect(
      errorType(await client.callTool({ name: 'b_echo', arguments: { text: 'again' } })),
    ).toBeUndefined();
    expect(serve.stderr()).toContain('config reloaded');
  });

  it('O3: a broken edit changes nothing, and says where the problem is', async () => {
    const file = writeConfig(body());
    const { serve, client } = await start(file);
    const before = (await client.listTools()).tools.map((tool) => tool.name);
    writeFileSync(file, `${body()}  e:\n    commnd: node\n`);
    serve.child.kill('SIGHUP');
    await vi.waitFor(() => expect(serve.stderr()).toContain('config not reloaded'), { timeout: 20_000 });
    expect(serve.stderr()).toMatch(/config not reloaded: [^"]*config\.yaml:\d+:\d+/);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toEqual(before);
    expect(
      errorType(await client.callTool({ name: 'a_echo', arguments: { text: 'still' } })),
    ).toBeUndefined();
    expect(serve.child.exitCode).toBeNull();
  });

  it('O3: serve --watch applies an edit of the file without a signal', async () => {
    const file = writeConfig(body());
    const { client } = await start(file, ['--watch']);
    writeFileSync(file, body([fixtureEntry('d', 'echo')]));
    await vi.waitFor(
      async () => expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('d_echo'),
      { timeout: 30_000, interval: 200 },
    );
  });

  it('O3: a setting that cannot change live is logged as needing a restart, and the rest applies', async () => {
    const file = writeConfig(body());
    const { serve, client } = await start(file);
    writeFileSync(file, `output:\n  format: result\n${body([fixtureEntry('d', 'echo')])}`);
    serve.child.kill('SIGHUP');
    await vi.waitFor(() => expect(serve.stderr()).toContain('need a restart'), { timeout: 20_000 });
    expect(serve.stderr()).toMatch(/"keys":\["output"\]/);
    expect((await client.listTools()).tools.map((tool) => tool.name)).toContain('d_echo');
  });
});
