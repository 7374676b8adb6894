/**
 * I7 over real HTTP: a `serve --http` with two static tokens and a limit for one of them; SDK v2
 * clients in the 2026 era (no session: each call is its own request, as replicas see them).
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { awayFromWindowEnd } from '../helpers/redis.js';
import { fixtureEntry, modernHttpClient, serveHttp, writeConfig } from './cli-process.js';

const DAY_S = 86_400;
const children: ChildProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

async function client(url: string, token: string): Promise<Client> {
  const made = await modernHttpClient(url, token);
  clients.push(made);
  return made;
}

describe('rate limits per caller, over HTTP', () => {
  it('I7: one principal gets its calls and then rate_limited with the wait; another is not limited; a tool the rule does not name is not counted', async () => {
    const file = writeConfig(
      [
        'http:',
        '  auth:',
        '    tokens:',
        '      alice: { token: alice-token-0123456789abcdef }',
        '      bob: { token: bob-token-0123456789abcdef0 }',
        "    admins: ['token:bob']",
        'rate_limits:',
        "  - principals: ['token:alice']",
        "    tools: ['e_echo']",
        '    calls: 3',
        `    per_s: ${DAY_S}`,
        'servers:',
        fixtureEntry('e', 'echo'),
        fixtureEntry('s', 'structured'),
      ].join('\n'),
    );
    const serve = await serveHttp(file);
    children.push(serve.child);
    const alice = await client(serve.url, 'alice-token-0123456789abcdef');
    const bob = await client(serve.url, 'bob-token-0123456789abcdef0');
    const echo = (who: Client) => who.callTool({ name: 'e_echo', arguments: { text: 'x' } });
    const type = (result: Awaited<ReturnType<typeof echo>>) =>
      (result.structuredContent as { meta_data?: { error_type?: string } } | undefined)?.meta_data
        ?.error_type;
    await awayFromWindowEnd(DAY_S * 1000);
    const results = [];
    for (let i = 0; i < 4; i++) results.push(await echo(alice));
    expect(results.map(type)).toEqual([undefined, undefined, undefined, 'rate_limited']);
    const refused = results[3]!.structuredContent as {
      meta_data: { error_data: Record<string, unknown>; instruction: string };
    };
    expect(refused.meta_data.error_data).toMatchObject({ calls: 3, per_s: DAY_S });
    expect(refused.meta_data.error_data['retry_after_s']).toBeGreaterThan(0);
    expect(refused.meta_data.instruction).toContain('retry_after_s');
    expect(results[3]!.isError).toBe(true);
    for (let i = 0; i < 5; i++) expect(type(await echo(bob))).toBeUndefined();
    expect(type(await alice.callTool({ name: 's_weather', arguments: {} }))).toBeUndefined();
    const metrics = await (
      await fetch(serve.url.replace(/\/mcp$/, '/metrics'), {
        headers: { authorization: 'Bearer bob-token-0123456789abcdef0' },
      })
    ).text();
    expect(metrics).toMatch(/mcp_normalizer_tool_calls_total\{[^}]*outcome="rate_limited"[^}]*\} 1\n/);
  });
});
