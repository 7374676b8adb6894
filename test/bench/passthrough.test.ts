/**
 * The bench's yardsticks, in memory: the passthrough with `--passthrough-progress` forwards a
 * call as P3 sends ours (a progress token, progress relayed under the host's token), and `--hops`
 * reports the downstream's own time beside the target it served.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { CallToolRequestSchema, type Progress } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { hopsTable } from '../../bench/hops.js';
import { makePassthroughServer, type PassthroughOptions } from '../../bench/passthrough-server.js';

const closers: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const close of closers.splice(0)) await close();
});

/** A host → passthrough → downstream chain; the downstream reports one progress and records `_meta`. */
async function chain(options: PassthroughOptions) {
  const seen: unknown[] = [];
  const downstream = new Server({ name: 'down', version: '1' }, { capabilities: { tools: {} } });
  downstream.setRequestHandler(CallToolRequestSchema, async (request, extra) => {
    seen.push(request.params._meta);
    const token = request.params._meta?.progressToken;
    if (token !== undefined)
      await extra.sendNotification({
        method: 'notifications/progress',
        params: { progressToken: token, progress: 1 },
      });
    return { content: [{ type: 'text', text: 'done' }] };
  });
  const [downEnd, downClientEnd] = InMemoryTransport.createLinkedPair();
  await downstream.connect(downEnd);
  const client = new Client({ name: 'passthrough', version: '1' });
  const ready = client.connect(downClientEnd);
  const passthrough = makePassthroughServer(client, ready, options);
  const [upEnd, hostEnd] = InMemoryTransport.createLinkedPair();
  await passthrough.connect(upEnd);
  const host = new Client({ name: 'host', version: '1' });
  await host.connect(hostEnd);
  closers.push(
    () => host.close(),
    () => client.close(),
  );
  return { host, seen };
}

describe('the bench passthrough', () => {
  it('P3: without --passthrough-progress a call goes to the downstream as the host sent it', async () => {
    const { host, seen } = await chain({});
    await host.callTool({ name: 'echo', arguments: {} });
    expect(seen).toEqual([undefined]);
  });

  it("P3: with --passthrough-progress a call carries a token, and the downstream's progress reaches a host that asked", async () => {
    const { host, seen } = await chain({ progress: true });
    await host.callTool({ name: 'echo', arguments: {} });
    const heard: Progress[] = [];
    await host.callTool({ name: 'echo', arguments: {} }, undefined, {
      onprogress: (update) => heard.push(update),
    });
    expect(seen).toHaveLength(2);
    for (const meta of seen) expect(meta).toEqual({ progressToken: expect.any(Number) });
    expect(heard).toEqual([{ progress: 1 }]);
  });
});

describe('--hops', () => {
  it("the downstream's own time (its request read to its answer written) is reported beside its target", () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-hops-'));
    closers.push(async () => rmSync(dir, { recursive: true, force: true }));
    // Two sequential calls through target 100; its downstream 101 took 30 and 50 µs on them.
    const us = (n: number): string => String(n * 1000);
    const call = (at: number): string[] => [
      'in',
      us(at),
      'cout',
      us(at + 10),
      us(at + 11),
      'cin',
      us(at + 100),
      'out',
      us(at + 120),
      us(at + 121),
    ];
    writeFileSync(
      join(dir, 'hops-100.json'),
      JSON.stringify({ target: 'main.js', events: [...call(0), ...call(1000), 'in', us(2000)] }),
    );
    const downstream = ['in', us(20), 'out', us(50), us(51), 'in', us(1020), 'out', us(1070), us(1071)];
    writeFileSync(
      join(dir, 'hops-101.json'),
      JSON.stringify({ target: 'echo.js', parent: 100, events: downstream }),
    );
    const rows = hopsTable(dir).split('\n');
    expect(rows).toHaveLength(3);
    expect(rows[0]).toMatch(/\| the downstream's own time \|$/);
    expect(rows[2]).toMatch(/^\| mcp-normalizer \| 2 \| /);
    expect(rows[2]).toMatch(/\| 40\.0 \|$/);
  });
});
