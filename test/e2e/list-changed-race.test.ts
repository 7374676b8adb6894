/**
 * T10 under a crash (issue 13's black-box race): eight servers, one of which crashes once and
 * comes back listing one more tool. Whenever the restart lands (inside the first connection
 * round or after it), a 2025 stdio client either lists the new tool at once or is told with
 * notifications/tools/list_changed, and its next list has it. Real processes.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { fixtureEntry, serveStdio, writeConfig } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

describe('a server that crashes and comes back with one more tool', { timeout: 60_000 }, () => {
  it.each([30, 300])(
    'T10: crash after %i ms among eight servers: the new tool is in the first list, or a list_changed follows and the next list has it',
    async (crashAfter) => {
      const marker = join(mkdtempSync(join(tmpdir(), 'mcpn-comeback-')), 'started');
      const lines = ['log_level: warn', 'servers:'];
      for (let i = 0; i < 7; i++) lines.push(fixtureEntry(`echo${i}`, 'echo'));
      const comeback = fixtureServer('comeback', [marker, String(crashAfter)]);
      lines.push(
        '  comeback:',
        `    command: ${JSON.stringify(comeback.command)}`,
        `    args: ${JSON.stringify(comeback.args)}`,
      );
      const transport = new StdioClientTransport({
        ...serveStdio(writeConfig(lines.join('\n'))),
        stderr: 'ignore',
      });
      const client = new Client({ name: 'race-host', version: '1.0.0' });
      let listed = false;
      let toldAfterList = 0;
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        if (listed) toldAfterList += 1;
      });
      await client.connect(transport);
      cleanup.push(() => client.close());
      const names = async (): Promise<string[]> => (await client.listTools()).tools.map((tool) => tool.name);
      const first = await names();
      listed = true;
      if (first.includes('comeback_two')) return;
      await expect.poll(() => toldAfterList, { timeout: 20_000 }).toBeGreaterThan(0);
      expect(await names()).toContain('comeback_two');
    },
  );
});
