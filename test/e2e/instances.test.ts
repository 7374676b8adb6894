/**
 * P10 end to end: `serve --http` in front of a stateful server with `instances: per_session`,
 * two real 2025 sessions (SDK 1.x clients): each sees only its own state, `/healthz` counts the
 * copies, and a session's DELETE stops its copy (its process is gone).
 */
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { alive, fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function gateway(extra: Record<string, unknown>): Promise<HttpServe> {
  const file = writeConfig(['servers:', fixtureEntry('git', 'stateful', extra)].join('\n'));
  const serve = await serveHttp(file);
  cleanup.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

async function session(url: string): Promise<{ client: LegacyClient; transport: LegacyHttpTransport }> {
  const client = new LegacyClient({ name: 'e2e-session', version: '1.0.0' });
  const transport = new LegacyHttpTransport(new URL(url));
  await client.connect(transport);
  cleanup.push(() => client.close());
  return { client, transport };
}

/** The status tool's answer through the `results` envelope. */
async function status(client: LegacyClient): Promise<{ dir: string; pid: number }> {
  const result = await client.callTool({ name: 'git_status', arguments: {} });
  return (result.structuredContent as { results: { dir: string; pid: number } }).results;
}

async function health(serve: HttpServe): Promise<{ instances?: number; in_flight: number }> {
  const body = (await (await fetch(serve.healthUrl)).json()) as {
    servers: { instances?: number; in_flight: number }[];
  };
  return body.servers[0] as { instances?: number; in_flight: number };
}

/** Resolves once `probe()` is true, polling every 20 ms; rejects after `ms`. */
async function until(probe: () => boolean | Promise<boolean>, ms = 10_000): Promise<void> {
  const end = Date.now() + ms;
  while (!(await probe())) {
    if (Date.now() > end) throw new Error('condition not met in time');
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

describe('per-session instances', () => {
  it('P10: two 2025 sessions each see only their own state; a DELETE stops the session’s copy', async () => {
    const serve = await gateway({ instances: 'per_session' });
    const a = await session(serve.url);
    const b = await session(serve.url);
    await a.client.callTool({ name: 'git_set_dir', arguments: { dir: '/repo/a' } });
    await b.client.callTool({ name: 'git_set_dir', arguments: { dir: '/repo/b' } });
    const seenA = await status(a.client);
    const seenB = await status(b.client);
    expect(seenA.dir).toBe('/repo/a');
    expect(seenB.dir).toBe('/repo/b');
    expect(seenA.pid).not.toBe(seenB.pid);
    expect((await health(serve)).instances).toBe(2);

    await a.transport.terminateSession();
    await until(async () => (await health(serve)).instances === 1);
    await until(() => !alive(seenA.pid));
    expect(alive(seenB.pid)).toBe(true);
    expect((await status(b.client)).dir).toBe('/repo/b');
  });

  it('P10: with the default instances: shared, every session sees the one copy', async () => {
    const serve = await gateway({});
    const a = await session(serve.url);
    const b = await session(serve.url);
    await a.client.callTool({ name: 'git_set_dir', arguments: { dir: '/repo/a' } });
    const seenB = await status(b.client);
    expect(seenB.dir).toBe('/repo/a');
    expect((await health(serve)).instances).toBeUndefined();
  });
});
