/**
 * Issue 55, K2: a list-once host that leaves at once, before a slow server has listed, no longer
 * leaves that server forgotten: `serve` starts `remember` in the background, which waits for the
 * server's first listing and saves it, and the next start lists it from memory while the server
 * is still stuck. The host's own exit is not delayed: the run is detached, and nobody waits for it.
 */
import { existsSync, mkdtempSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { runCli, serveStdio, writeConfig } from './cli-process.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

async function listOnce(file: string): Promise<string[]> {
  const client = new Client({ name: 'lists-once', version: '1.0.0' });
  clients.push(client);
  await client.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'ignore' }));
  const names = (await client.listTools()).tools.map((tool) => tool.name);
  await client.close();
  return names;
}

describe('a host that leaves at once', () => {
  it('K2: the slow server it left before is remembered in the background, and the next start lists it from memory', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-remember-'));
    const gate = join(dir, 'gate');
    const state = join(dir, 'state');
    const fast = fixtureServer('echo');
    const slow = fixtureServer('echo', [`--start-after=${gate}`]);
    const file = writeConfig(
      [
        `state_dir: ${JSON.stringify(state)}`,
        // Long enough for the fast server to be up under load (chaos beside the suite took 3 s+);
        // the gated one is waited for this long on the first start.
        'list_wait_ms: 6000',
        'servers:',
        `  fast:\n    command: ${JSON.stringify(fast.command)}\n    args: ${JSON.stringify(fast.args)}`,
        `  slow:\n    command: ${JSON.stringify(slow.command)}\n    args: ${JSON.stringify(slow.args)}`,
      ].join('\n'),
    );
    expect(await listOnce(file)).toEqual(['fast_echo']);
    // The background run waits for the slow server; it lists once its gate opens.
    await expect.poll(() => existsSync(join(state, 'remembering.lock')), { timeout: 5000 }).toBe(true);
    writeFileSync(gate, '');
    await expect
      .poll(() => readdirSync(join(state, 'catalogs')).filter((name) => name.startsWith('slow.')).length, {
        timeout: 20_000,
        interval: 100,
      })
      .toBe(1);
    await expect.poll(() => existsSync(join(state, 'remembering.lock')), { timeout: 15_000 }).toBe(false);
    // Stuck again: the next start lists it from memory at once.
    rmSync(gate);
    expect((await listOnce(file)).sort()).toEqual(['fast_echo', 'slow_echo']);
    const usage = await runCli(['remember', '--within-ms', 'x', '--config', file]);
    expect(usage.code).toBe(2);
  });
});
