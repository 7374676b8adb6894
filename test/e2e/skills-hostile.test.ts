/**
 * Issue 54: skills that cannot be walked around, through `serve --http`, with a hostile skills
 * server behind the gateway (fixtures/servers/hostile-skills.ts: it lists URIs outside its
 * namespace, and reads any file it knows, its path resolved) beside a well-behaved one. The SDK
 * v2 client pinned to each era tries every spelling of a hidden skill's URI (U8): none reads a
 * byte of it, nor of an unlisted file, nor gets its entry.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { skillsHost } from '../helpers/hosts.js';
import { fixtureServer, type FixtureName } from '../helpers/fixtures.js';
import { serveHttp, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef0';

function entry(name: string, fixture: FixtureName, args: string[] = []): string {
  const { command, args: all } = fixtureServer(fixture, args);
  return `  ${name}:\n    command: ${JSON.stringify(command)}\n    args: ${JSON.stringify(all)}`;
}

async function connect(url: string, pin: '2025-11-25' | '2026-07-28', token?: string) {
  const host = await skillsHost(url, pin, token);
  clients.push(host.client);
  return host;
}

async function serve() {
  const served = await serveHttp(
    writeConfig(
      [
        'http:',
        '  auth:',
        '    tokens:',
        `      alice: { token: ${ALICE} }`,
        `      bob: { token: ${BOB} }`,
        'access:',
        "  - principals: ['token:alice']",
        "    allow: ['*']",
        "    resources: ['*', '!skill://h/secret/*']",
        "  - principals: ['token:bob']",
        "    allow: ['*']",
        "    resources: ['*']",
        'servers:',
        entry('h', 'hostile-skills'),
        entry('v', 'skills', ['--label=v']),
      ].join('\n'),
    ),
  );
  children.push(served.child);
  return served;
}

/** Every spelling of the hidden skill's files and entry a host might try. */
const HIDDEN_READS = [
  'skill://h/secret/key.txt',
  'SKILL://h/secret/key.txt',
  'Skill://h/secret/key.txt',
  'skill://H/secret/key.txt',
  'h+skill://secret/key.txt',
  'H+SKILL://secret/key.txt',
  'h+Skill://Secret/key.txt',
  'skill://h/secret/%6Bey.txt',
  'skill://h/secret/unlisted.txt',
  'h+skill://secret/unlisted.txt',
  'skill://h/dyn/../secret/key.txt',
  'skill://h/dyn/%2e%2e/secret/key.txt',
  'skill://h/dyn/%2E%2E/secret/key.txt',
  'skill://h/dyn/..%2Fsecret/key.txt',
  'skill://h/dyn/./../secret/key.txt',
  'skill://h/lure/../secret/key.txt',
  'h+skill://dyn/../secret/key.txt',
];
const HIDDEN_GETS = [
  'skill://h/secret/SKILL.md',
  'SKILL://h/secret/SKILL.md',
  'skill://H/secret/SKILL.md',
  'h+skill://secret/SKILL.md',
  'skill://h/dyn/../secret/SKILL.md',
];
const SECRETS = /SECRET-KEY-0451|UNLISTED-0451/;

describe('skills that cannot be walked around (issue 54)', () => {
  for (const pin of ['2025-11-25', '2026-07-28'] as const)
    it(`U8, X4, X7: no spelling reads a hidden skill, an unlisted file or another server's (${pin})`, async () => {
      const served = await serve();
      const alice = await connect(served.url, pin, ALICE);
      for (const uri of HIDDEN_READS) {
        const read = alice.client.readResource({ uri }).then(
          (answer) => JSON.stringify(answer),
          (error: unknown) => `refused: ${String(error)}`,
        );
        const answer = await read;
        expect(answer, uri).toMatch(/^refused: /);
        expect(answer, uri).not.toMatch(SECRETS);
      }
      for (const uri of HIDDEN_GETS) await expect(alice.skills.get(uri), uri).rejects.toThrow();
      // X7: the hostile listing, as the caller sees it: its own namespace only.
      const listing = (await alice.skills.list()).skills.map((skill) => skill.uri).sort();
      expect(listing).toEqual([
        'skill://h/dyn/SKILL.md',
        'skill://h/v/x/SKILL.md',
        'skill://v/release-notes/SKILL.md',
        'skill://v/v-only/SKILL.md',
      ]);
      // A URI of the hostile listing reads from the hostile server, never from "v".
      const x = await alice.client.readResource({ uri: 'skill://h/v/x/SKILL.md' });
      expect(JSON.stringify(x)).toContain('# x');
      expect(JSON.stringify(x)).not.toContain('release-notes');
      // A listed file of a dynamic skill still reads.
      expect(JSON.stringify(await alice.client.readResource({ uri: 'skill://h/dyn/notes.md' }))).toContain(
        'dynamic notes',
      );
    });

  it('X3, X7: a caller the rules let see the secret skill reads its listed files verified, and no unlisted one by any spelling', async () => {
    const served = await serve();
    const bob = await connect(served.url, '2026-07-28', BOB);
    const [secret] = (await bob.skills.list()).skills.filter((skill) => skill.uri.includes('/secret/'));
    expect((await bob.skills.read(secret!, 'key.txt')).verified).toBe(true);
    for (const uri of [
      'skill://h/secret/unlisted.txt',
      'h+skill://secret/unlisted.txt',
      'SKILL://H/secret/unlisted.txt',
    ])
      await expect(bob.client.readResource({ uri }), uri).rejects.toThrow(/not a file of the skill/);
  });

  it('X2: a skills/list cursor the gateway did not give, or gave another caller, is refused', async () => {
    const served = await serve();
    const alice = await connect(served.url, '2026-07-28', ALICE);
    const bob = await connect(served.url, '2026-07-28', BOB);
    const Page = z.object({ skills: z.array(z.unknown()), nextCursor: z.string().optional() });
    const first = await alice.client.request({ method: 'skills/list', params: {} }, Page);
    expect(first.nextCursor).toBeDefined();
    const forged = Buffer.from(JSON.stringify({ server: 1, cursor: 'theirs' })).toString('base64url');
    for (const cursor of [forged, `${forged}.x`, 'junk'])
      await expect(alice.client.request({ method: 'skills/list', params: { cursor } }, Page)).rejects.toThrow(
        /Invalid cursor/,
      );
    await expect(
      bob.client.request({ method: 'skills/list', params: { cursor: first.nextCursor } }, Page),
    ).rejects.toThrow(/Invalid cursor/);
    const second = await alice.client.request(
      { method: 'skills/list', params: { cursor: first.nextCursor } },
      Page,
    );
    expect(second.skills.length).toBeGreaterThan(0);
  });

  it('X8: a plain result carrying the gateway’s old private key is answered as any result, normalized', async () => {
    const served = await serve();
    for (const pin of ['2025-11-25', '2026-07-28'] as const) {
      const { client } = await connect(served.url, pin, BOB);
      const result = await client.callTool({ name: 'h_forge', arguments: {} });
      expect(result).not.toHaveProperty('resultType', 'task');
      expect(JSON.stringify(result)).toContain('plain');
      expect(JSON.stringify(result)).not.toContain('forged');
    }
  });
});
