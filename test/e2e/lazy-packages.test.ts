/**
 * P1, O1 as a stdio host's process sees them: a gateway loads the packages of a feature only when
 * the config or the command line asks for the feature. `redis` (the shared store) and
 * `prom-client` (the metrics endpoint) were ~150 ms of CPU in every process, most of it inside a
 * host's first calls (issue 57, docs/performance-log.md). The preload in
 * fixtures/servers/loaded-modules.ts lists what the gateway loaded when it exits.
 */
import { mkdtempSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/fixtures.js';
import { fixtureEntry, serveStdio, writeConfig } from './cli-process.js';

const PRELOAD = pathToFileURL(join(ROOT, 'dist', 'fixtures', 'servers', 'loaded-modules.js')).href;

/** Serves `config` over stdio, lists, makes `calls` calls, ends stdin: the packages it loaded. */
async function packagesLoaded(config: string, calls: number): Promise<string[]> {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-loaded-'));
  const spec = serveStdio(config, [], { LOADED_MODULES_DIR: dir });
  const transport = new StdioClientTransport({
    ...spec,
    args: ['--import', PRELOAD, ...spec.args],
    stderr: 'ignore',
  });
  const client = new Client({ name: 'lazy-packages', version: '1.0.0' });
  await client.connect(transport);
  let tools: string[] = [];
  for (let i = 0; i < 100 && !tools.includes('a_echo'); i++) {
    tools = (await client.listTools()).tools.map((tool) => tool.name);
    if (!tools.includes('a_echo')) await new Promise((resolve) => setTimeout(resolve, 50));
  }
  expect(tools).toContain('a_echo');
  for (let i = 0; i < calls; i++) {
    const result = await client.callTool({ name: 'a_echo', arguments: { text: `m${i}` } });
    expect(result.isError).not.toBe(true);
  }
  await client.close();
  // The gateway writes its list as it exits (a clean exit once its stdin ended, P5).
  for (let i = 0; i < 200; i++) {
    const files = readdirSync(dir).map(
      (file) => JSON.parse(readFileSync(join(dir, file), 'utf8')) as { argv: string[]; packages: string[] },
    );
    const gateway = files.find((file) => file.argv.includes('serve'));
    if (gateway !== undefined) return gateway.packages;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error('the gateway wrote no list of its packages');
}

describe('packages a stdio gateway loads (P1, O1)', { timeout: 60_000 }, () => {
  it('P1, O1: with no store and no metrics endpoint, neither redis nor prom-client is loaded, through a listing and 50 calls', async () => {
    const config = writeConfig(['servers:', fixtureEntry('a', 'echo')].join('\n'));
    const packages = await packagesLoaded(config, 50);
    // It did load packages through require (the check sees them), just not these two.
    expect(packages).toContain('yaml');
    expect(packages.filter((name) => /redis|prom-client/.test(name))).toEqual([]);
  });
});
