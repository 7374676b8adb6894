/**
 * Issue 54, X1, X5: a host that lists once over stdio sees every extension the gateway relays.
 * The SDK v2 client spawns `serve` as hosts do, from an empty state folder, in each era, and
 * asks at once, while both skills servers are still starting (one takes 1.5 s): the opening
 * answer declares Skills (and Tasks to a 2026 host), and the `SkillsClient` lists and reads,
 * verified, every skill of both servers.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { serveStdio, writeConfig } from './cli-process.js';

const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
});

function skillsEntry(name: string, extra: string[] = []): string {
  const { command, args } = fixtureServer('skills', [`--label=${name}`, ...extra]);
  return `  ${name}:\n    command: ${JSON.stringify(command)}\n    args: ${JSON.stringify(args)}`;
}

describe('extensions visible over stdio', () => {
  for (const pin of ['2025-11-25', '2026-07-28'] as const)
    it(`X1, X5: a list-once host over stdio lists and reads every skill of two servers, verified, from an empty state folder (${pin})`, async () => {
      const config = writeConfig(
        ['servers:', skillsEntry('a', ['--start-delay=1500']), skillsEntry('b')].join('\n'),
      );
      const state = mkdtempSync(join(tmpdir(), 'xdg-state-skills-'));
      const client = new Client(
        { name: 'skills-stdio-host', version: '1.0.0' },
        { versionNegotiation: pin === '2025-11-25' ? { mode: 'legacy' } : { mode: { pin } } },
      );
      await client.connect(new StdioClientTransport(serveStdio(config, [], { XDG_STATE_HOME: state })));
      clients.push(client);
      const extensions = client.getServerCapabilities()?.extensions ?? {};
      expect(Object.keys(extensions).sort()).toEqual(
        pin === '2025-11-25'
          ? ['io.modelcontextprotocol/skills']
          : ['io.modelcontextprotocol/skills', 'io.modelcontextprotocol/tasks'],
      );
      const skills = new SkillsClient(client);
      expect(skills.supported).toBe(true);
      const listing = await skills.list();
      expect(listing.skills.map((skill) => skill.uri).sort()).toEqual([
        'skill://a/a-only/SKILL.md',
        'skill://a/release-notes/SKILL.md',
        'skill://b/b-only/SKILL.md',
        'skill://b/release-notes/SKILL.md',
      ]);
      let verified = 0;
      for (const entry of listing.skills)
        for (const file of entry.resources === 'dynamic' ? [] : entry.resources) {
          const read = await skills.read(entry, file.uri);
          expect(read.verified, file.uri).toBe(true);
          verified++;
        }
      expect(verified).toBe(6);
    });
});
