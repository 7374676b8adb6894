/**
 * L1: the log never costs the gateway its time. A host that reads the gateway's stderr slowly, or
 * not at all, leaves the pipe full; a synchronous log write then failed with EAGAIN and pino's
 * writer slept 100 ms per retry with the whole event loop, so every call stalled (the chaos
 * bench's 100 ms tail), and with a host that never reads, forever. Real process, real pipe.
 */
import { Client } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureEntry, serveStdio, writeConfig } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('a host that never reads stderr', { timeout: 60_000 }, () => {
  it('L1: the gateway still answers every call while its stderr pipe is full (log lines wait, calls do not)', async () => {
    const file = writeConfig(['log_level: trace', 'servers:', fixtureEntry('echo', 'echo')].join('\n'));
    const transport = new StdioClientTransport({
      ...serveStdio(file),
      // Piped and never read: after 64 KiB of log lines the pipe is full.
      stderr: 'pipe',
    });
    const client = new Client({ name: 'deaf-host', version: '1.0.0' });
    await client.connect(transport);
    cleanup.push(() => client.close());
    const text = 'x'.repeat(2_000);
    // Each call logs its arguments at trace: 300 calls write well over 64 KiB to stderr.
    for (let i = 0; i < 300; i++) {
      const result = await client.callTool({ name: 'echo_echo', arguments: { text } });
      expect(result.isError).toBe(false);
    }
  });
});
