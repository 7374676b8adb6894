/**
 * T10 under a crash (issue 13's black-box race): eight servers, one of which crashes once and
 * comes back listing one more tool. Whenever the restart lands (inside the first connection
 * round or after it), a 2025 stdio client that re-lists when it is told of a change ends up
 * listing the new tool: no change is left unannounced. Real processes.
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
    'T10: crash after %i ms among eight servers: a host that re-lists on list_changed ends up with the new tool',
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
      // A host that re-lists on every list_changed (P1: lists answer with what is ready, and each
      // change after a listing is announced once, until the next listing, T10).
      let latest: string[] = [];
      const relist = async (): Promise<void> => {
        latest = (await client.listTools()).tools.map((tool) => tool.name);
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => void relist());
      await client.connect(transport);
      cleanup.push(() => client.close());
      await relist();
      await expect.poll(() => latest, { timeout: 20_000 }).toContain('comeback_two');
    },
  );
});
