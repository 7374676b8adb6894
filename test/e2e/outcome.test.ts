/**
 * R4, L1, O1: every answer goes through the one outcome step, the ones the server makes itself
 * included (they skipped it before): a failed input round, the shutdown refusal. Each gets the
 * configured instruction, one end line in the log and its count in /metrics. Real processes.
 */
import { StreamableHTTPClientTransport, type Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answersAs, envelope, modernHost } from '../helpers/hosts.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

const LenientResult = z.looseObject({});

async function serve(lines: string[]): Promise<HttpServe> {
  const serve = await serveHttp(
    writeConfig(
      [
        'log_level: info',
        'instructions:',
        '  timeout: CONFIGURED TIMEOUT ADVICE',
        '  downstream_unavailable: CONFIGURED UNAVAILABLE ADVICE',
        ...lines,
        'servers:',
        fixtureEntry('asking', 'asking', { protocol: 'legacy' }),
        fixtureEntry('slow', 'slow'),
      ].join('\n'),
    ),
  );
  cleanup.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

/** A 2026 host that can answer a form (it never gets to: it answers too late). */
async function modern(url: string): Promise<Client> {
  const client = modernHost(answersAs('modern'), cleanup);
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanup.push(() => client.close());
  return client;
}

/** The log's end line of the call of `tool` with `errorType`. */
function endLines(serve: HttpServe, tool: string, errorType: string): Record<string, unknown>[] {
  return serve
    .stderr()
    .split('\n')
    .filter((line) => line.startsWith('{'))
    .map((line) => JSON.parse(line) as Record<string, unknown>)
    .filter(
      (line) =>
        line['event'] === 'call_end' && line['exposedName'] === tool && line['errorType'] === errorType,
    );
}

async function count(serve: HttpServe, outcome: string): Promise<string | undefined> {
  const body = await (await fetch(serve.url.replace('/mcp', '/metrics'))).text();
  return body
    .split('\n')
    .find(
      (line) => line.startsWith('mcp_normalizer_tool_calls_total') && line.includes(`outcome="${outcome}"`),
    );
}

describe('answers the server makes itself', { timeout: 60_000 }, () => {
  it('R4/L1/O1: an expired input round answers with the configured instructions.timeout, one L1 line and its O1 count', async () => {
    const gateway = await serve(['input_required:', '  round_timeout_ms: 200']);
    const client = await modern(gateway.url);
    const params = { name: 'asking_ask', arguments: { question: 'Name?' } };
    const round = (await client.request({ method: 'tools/call', params }, LenientResult, {
      allowInputRequired: true,
    })) as { requestState?: string; inputRequests?: Record<string, unknown> };
    // The host does not answer in time: the parked call is abandoned.
    await new Promise((resolve) => setTimeout(resolve, 600));
    const late = envelope(
      await client.request(
        {
          method: 'tools/call',
          params: {
            ...params,
            inputResponses: Object.fromEntries(
              Object.keys(round.inputRequests ?? {}).map((key) => [key, { action: 'decline' }]),
            ),
            requestState: round.requestState,
          },
        } as never,
        LenientResult,
        { allowInputRequired: true },
      ),
    );
    expect(late).toMatchObject({ error_type: 'timeout', error_data: { reason: 'input_round_expired' } });
    expect(late.instruction).toBe('CONFIGURED TIMEOUT ADVICE');
    await expect.poll(() => endLines(gateway, 'asking_ask', 'timeout')).toHaveLength(1);
    expect(await count(gateway, 'timeout')).toMatch(/server="asking",tool="ask",outcome="timeout"} 1$/);
  });

  it('R4/L1/O1/P5: a call that arrives during shutdown answers with the configured instruction, one L1 line and its O1 count; the one in flight gets its answer', async () => {
    const gateway = await serve([]);
    const client = await modern(gateway.url);
    // A call in flight keeps the process serving while it drains; the next one is refused.
    const running = client.callTool({ name: 'slow_slow', arguments: { duration_ms: 1500, progress: false } });
    await new Promise((resolve) => setTimeout(resolve, 200));
    gateway.child.kill('SIGTERM');
    await expect.poll(() => gateway.stderr().includes('shutting down')).toBe(true);
    const refused = envelope(await client.callTool({ name: 'slow_slow', arguments: { duration_ms: 1 } }));
    expect(refused).toMatchObject({ error_type: 'downstream_unavailable' });
    expect(refused.instruction).toBe('CONFIGURED UNAVAILABLE ADVICE');
    // The log line is written asynchronously (L1): it may land just after the answer.
    await expect.poll(() => endLines(gateway, 'slow_slow', 'downstream_unavailable')).toHaveLength(1);
    expect(await count(gateway, 'downstream_unavailable')).toMatch(/outcome="downstream_unavailable"} 1$/);
    // P5: the call in flight still gets its answer (over HTTP it was cut off with the socket).
    // (Its steps are 100 ms sleeps: on a loaded machine some oversleep, and there are fewer.)
    expect(envelope(await running).results).toMatch(/^done after 1500 ms and \d+ steps$/);
  });
});
