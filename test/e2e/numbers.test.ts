/**
 * N13 end to end: numbers a double cannot carry, written by a hand-written server over stdio,
 * Streamable HTTP with JSON answers and with SSE answers, reach a 2025 host and a 2026 host with
 * every digit, in the text block the model reads and in structuredContent.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdio } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { fixtureServer, startHttpFixture, type HttpFixture } from '../helpers/fixtures.js';
import { serveStdio, writeConfig } from './cli-process.js';

const fixtures: HttpFixture[] = [];
let config = '';

beforeAll(async () => {
  const json = await startHttpFixture('raw', ['--http']);
  const sse = await startHttpFixture('raw', ['--http', '--sse']);
  fixtures.push(json, sse);
  const { command, args } = fixtureServer('raw');
  config = writeConfig(
    [
      'servers:',
      '  stdio:',
      `    command: ${JSON.stringify(command)}`,
      `    args: ${JSON.stringify(args)}`,
      '  json:',
      `    url: ${json.url}`,
      '  sse:',
      `    url: ${sse.url}`,
    ].join('\n'),
  );
});

afterAll(() => {
  for (const fixture of fixtures) fixture.stop();
});

interface CallResult {
  content: { type: string; text?: string }[];
  structuredContent?: unknown;
}

const hosts = {
  async 2025(file: string): Promise<{ call(name: string): Promise<CallResult>; close(): Promise<void> }> {
    const client = new LegacyClient({ name: 'host-2025', version: '1' });
    await client.connect(new LegacyStdio(serveStdio(file)));
    return {
      call: async (name) => (await client.callTool({ name, arguments: {} })) as CallResult,
      close: () => client.close(),
    };
  },
  async 2026(file: string): Promise<{ call(name: string): Promise<CallResult>; close(): Promise<void> }> {
    const client = new Client(
      { name: 'host-2026', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await client.connect(new StdioClientTransport(serveStdio(file)));
    return {
      call: async (name) => (await client.callTool({ name, arguments: {} })) as CallResult,
      close: () => client.close(),
    };
  },
};

describe('every digit reaches the model', { timeout: 60_000 }, () => {
  it.each([['2025'], ['2026']] as const)(
    'N13: a %s host gets 2^64, 10^400, 1e400 and -0 exactly as written, from stdio, HTTP and SSE servers',
    async (era) => {
      const host = await hosts[era](config);
      try {
        for (const server of ['stdio', 'json', 'sse']) {
          const result = await host.call(`${server}_numbers`);
          const text = result.content[0]?.text ?? '';
          // The text block the model reads: every number as the server wrote it, as a string.
          expect(text, server).toContain('"18446744073709551616"');
          expect(text, server).toContain('"1e400"');
          expect(text, server).toContain('"-0"');
          expect(text, server).toContain('0.30000000000000004');
          expect(text, server).toContain('numbers_kept_as_text');
          expect(result.structuredContent, server).toMatchObject({
            results: { pow64: '18446744073709551616', big: '1e400', sum: 0.30000000000000004, neg: '-0' },
          });
          const textOnly = await host.call(`${server}_numbers_text`);
          expect(textOnly.structuredContent, server).toMatchObject({
            results: { pow64: '18446744073709551616', pow400: `1${'0'.repeat(400)}`, neg: '-0' },
          });
          expect(textOnly.content[0]?.text, server).toContain(`"1${'0'.repeat(400)}"`);
        }
      } finally {
        await host.close();
      }
    },
  );
});
