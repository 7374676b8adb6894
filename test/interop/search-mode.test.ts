/**
 * Search mode end to end (S1–S4): `mcp-normalizer serve` as a child in front of server-everything
 * and server-memory (real, from npm) and the 2026 fixture, all with `expose: search`; hosts of
 * both eras (SDK v1 client, SDK v2 client pinned to 2026-07-28) list the pair, search, and call
 * through `call_tool`, including a call that needs input rounds (Q3).
 */
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureEntry, serveStdio, writeConfig } from '../e2e/cli-process.js';
import { ALL, answersAs, envelope, legacyHost, modernHost } from '../helpers/hosts.js';
import { REAL_PACKAGES, START_TIMEOUT_MS, stdioServer } from './real-servers.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

function config(): string {
  // One-shot hosts: a list (and a search) waits for the real servers to start (P1).
  const lines = ['log_level: warn', 'expose: search', 'list_wait_ms: 60000', 'servers:'];
  for (const [name, spec] of Object.entries({
    everything: stdioServer(REAL_PACKAGES.everything, ['stdio']),
    memory: stdioServer(REAL_PACKAGES.memory),
  })) {
    lines.push(
      `  ${name}:`,
      `    command: ${JSON.stringify(spec.command)}`,
      `    args: ${JSON.stringify(spec.args)}`,
    );
  }
  lines.push(fixtureEntry('modern', 'modern'));
  return writeConfig(lines.join('\n'));
}

/** The envelope without the call's own wall time, which differs between two calls. */
function comparable(result: unknown): unknown {
  const { structuredContent } = result as { structuredContent: { meta_data?: Record<string, unknown> } };
  const { elapsed_ms: _elapsed, ...meta } = structuredContent.meta_data ?? {};
  return { ...structuredContent, meta_data: meta };
}

describe('search mode in front of real servers, to hosts of both eras', { timeout: 120_000 }, () => {
  it('S1, S2, S4: a 2025 host and a 2026 host list the pair, find a tool and call it through call_tool as directly', async () => {
    const file = config();
    const legacy = legacyHost(ALL, answersAs('legacy'), cleanup);
    await legacy.connect(new LegacyStdioTransport({ ...serveStdio(file), stderr: 'pipe' }), {
      timeout: START_TIMEOUT_MS,
    });
    const modern = modernHost(answersAs('modern'), cleanup);
    await modern.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'pipe' }));
    for (const client of [legacy, modern]) {
      const { tools } = await client.listTools();
      expect(tools.map((tool) => tool.name)).toEqual(['search_tools', 'call_tool']);
      expect(JSON.stringify(tools).length).toBeLessThan(2048);
      const found = envelope(
        await client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers' } }),
      );
      const names = (found.results as { tools: { name: string }[] }).tools.map((tool) => tool.name);
      expect(names).toContain('everything_get-sum');
      const through = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'everything_get-sum', arguments: { a: 2, b: 3 } },
      });
      const direct = await client.callTool({ name: 'everything_get-sum', arguments: { a: 2, b: 3 } });
      expect(comparable(through)).toEqual(comparable(direct));
      expect(envelope(through).results).toEqual(envelope(direct).results);
      const unknown = envelope(
        await client.callTool({ name: 'call_tool', arguments: { name: 'everything_get-summ' } }),
      );
      expect(unknown.error_type).toBe('unknown_tool');
      expect(unknown.error_data?.['suggestions']).toContain('everything_get-sum');
    }
  });

  it('S4, Q3: a call through call_tool that needs input rounds is answered by the host behind it, in either era', async () => {
    const file = config();
    const modern = modernHost(answersAs('modern'), cleanup);
    await modern.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'pipe' }));
    const legacy = legacyHost(ALL, answersAs('legacy'), cleanup);
    await legacy.connect(new LegacyStdioTransport({ ...serveStdio(file), stderr: 'pipe' }), {
      timeout: START_TIMEOUT_MS,
    });
    for (const [host, client] of [
      ['modern', modern],
      ['legacy', legacy],
    ] as const) {
      const result = await client.callTool({
        name: 'call_tool',
        arguments: { name: 'modern_ask', arguments: { question: 'Name?' } },
      });
      expect(envelope(result).results).toEqual({
        question: 'Name?',
        answer: `${host} answers Name?`,
        confirmed: true,
      });
    }
  });
});
