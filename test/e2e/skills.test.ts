/**
 * Issue 47: skills (SEP-2640) through `serve --http`. Two SDK v2 servers built with the SDK's
 * `SkillsExtension`, each publishing a skill named `release-notes` (fixtures/servers/skills.ts),
 * behind the gateway; the SDK v2 `SkillsClient` pinned to each era lists, gets and reads them,
 * verifying every file (size and digest) as a host does.
 */
import type { ChildProcess } from 'node:child_process';
import type { Client } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { skillsHost } from '../helpers/hosts.js';
import { fixtureServer } from '../helpers/fixtures.js';
import { runCli, serveHttp, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const clients: Client[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
});

const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef0';

function skillsEntry(name: string, extra: string[] = []): string {
  const { command, args } = fixtureServer('skills', [`--label=${name}`, ...extra]);
  return `  ${name}:\n    command: ${JSON.stringify(command)}\n    args: ${JSON.stringify(args)}`;
}

async function connect(url: string, pin: '2025-11-25' | '2026-07-28', token?: string) {
  const host = await skillsHost(url, pin, token);
  clients.push(host.client);
  return host;
}

async function serve(lines: string[]) {
  const served = await serveHttp(writeConfig(lines.join('\n')));
  children.push(served.child);
  return served;
}

describe('skills through the gateway', () => {
  for (const pin of ['2025-11-25', '2026-07-28'] as const)
    it(`X1, X2: two servers' skills of one name list apart, get, and read back verified (${pin}); their tools as before`, async () => {
      const served = await serve(['servers:', skillsEntry('a'), skillsEntry('b')]);
      const { client, skills } = await connect(served.url, pin);
      expect(skills.supported).toBe(true);
      const listing = await skills.list();
      expect(listing.invalid).toEqual([]);
      expect(listing.skills.map((skill) => skill.uri).sort()).toEqual([
        'skill://a/a-only/SKILL.md',
        'skill://a/release-notes/SKILL.md',
        'skill://b/b-only/SKILL.md',
        'skill://b/release-notes/SKILL.md',
      ]);
      if (pin === '2026-07-28') expect(typeof listing.ttlMs).toBe('number');
      for (const entry of listing.skills) {
        const label = entry.uri.split('/')[2];
        expect((await skills.get(entry.uri)).skill).toEqual(entry);
        for (const file of entry.resources === 'dynamic' ? [] : entry.resources) {
          const read = await skills.read(entry, file.uri);
          expect(read.verified).toBe(true);
          expect(read.bytes.length).toBe(file.size);
          expect(read.text).toContain(` ${label}`);
        }
      }
      expect((await client.listTools()).tools.map((tool) => tool.name).sort()).toEqual(['a_echo', 'b_echo']);
      const echoed = await client.callTool({ name: 'b_echo', arguments: { text: 'hi' } });
      expect(JSON.stringify(echoed)).toContain('hi');
    });

  it('X2: skills/list pages span servers with the gateway’s own cursor; a cursor it did not give is refused', async () => {
    const served = await serve(['servers:', skillsEntry('a'), skillsEntry('b')]);
    const { client } = await connect(served.url, '2026-07-28');
    const Page = z.object({
      skills: z.array(z.object({ uri: z.string() })),
      nextCursor: z.string().optional(),
    });
    const list = (params: Record<string, unknown>) => client.request({ method: 'skills/list', params }, Page);
    const first = await list({});
    expect(first.skills.map((skill) => skill.uri.split('/')[2])).toEqual(['a', 'a']);
    expect(first.nextCursor).toBeDefined();
    const second = await list({ cursor: first.nextCursor });
    expect(second.skills.map((skill) => skill.uri.split('/')[2])).toEqual(['b', 'b']);
    expect(second.nextCursor).toBeUndefined();
    await expect(list({ cursor: 'nonsense' })).rejects.toThrow(/Invalid cursor/);
  });

  it('X3: a skill file whose bytes are not the ones its entry lists is an error, not passed on, and so is a file its entry does not list', async () => {
    const served = await serve(['servers:', skillsEntry('a', ['--tamper'])]);
    const { client, skills } = await connect(served.url, '2026-07-28');
    const [entry] = (await skills.list()).skills.filter((skill) =>
      skill.uri.endsWith('release-notes/SKILL.md'),
    );
    expect((await skills.read(entry!)).verified).toBe(true);
    await expect(
      client.readResource({ uri: 'skill://a/release-notes/references/UNLISTED.md' }),
    ).rejects.toThrow(/is not a file of the skill/);
    await expect(skills.read(entry!, 'references/GUIDE.md')).rejects.toThrow(
      /was not passed on: its SHA-256 digest/,
    );
  });

  it('X4: two principals with different rules see different skills; a hidden skill is refused on skills/get and its files on reads', async () => {
    const served = await serve([
      'http:',
      '  auth:',
      '    tokens:',
      `      alice: { token: ${ALICE} }`,
      `      bob: { token: ${BOB} }`,
      'access:',
      "  - principals: ['token:alice']",
      "    allow: ['*']",
      "    resources: ['skill://a/*']",
      "  - principals: ['token:bob']",
      "    allow: ['*']",
      "    resources: ['skill://*', '!skill://a/release-notes/*']",
      'servers:',
      skillsEntry('a'),
      skillsEntry('b'),
    ]);
    const alice = await connect(served.url, '2026-07-28', ALICE);
    const bob = await connect(served.url, '2026-07-28', BOB);
    expect((await alice.skills.list()).skills.map((skill) => skill.uri).sort()).toEqual([
      'skill://a/a-only/SKILL.md',
      'skill://a/release-notes/SKILL.md',
    ]);
    const bobs = (await bob.skills.list()).skills;
    expect(bobs.map((skill) => skill.uri).sort()).toEqual([
      'skill://a/a-only/SKILL.md',
      'skill://b/b-only/SKILL.md',
      'skill://b/release-notes/SKILL.md',
    ]);
    await expect(bob.skills.get('skill://a/release-notes/SKILL.md')).rejects.toThrow();
    await expect(
      bob.client.readResource({ uri: 'skill://a/release-notes/references/GUIDE.md' }),
    ).rejects.toThrow();
    await expect(alice.client.readResource({ uri: 'skill://b/b-only/SKILL.md' })).rejects.toThrow();
    const [aliceEntry] = (await alice.skills.list()).skills.filter((skill) =>
      skill.uri.includes('release-notes'),
    );
    expect((await alice.skills.read(aliceEntry!, 'references/GUIDE.md')).verified).toBe(true);
  });

  it('X1, X3: `skills` lists every skill; `skills --verify` and `check` read every file through the gateway and fail on one that does not match', async () => {
    const good = writeConfig(['servers:', skillsEntry('a'), skillsEntry('b')].join('\n'));
    const listed = await runCli(['skills', '--config', good]);
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('skill://b/release-notes/SKILL.md');
    expect(listed.stdout).toMatch(/SERVER\s+SKILL\s+FILES\s+DESCRIPTION/);
    const checked = await runCli(['check', '--config', good]);
    expect(checked.code, checked.stdout + checked.stderr).toBe(0);
    expect(checked.stdout).toContain('Skills: 4 skills, 6 of 6 files match their entries');
    const bad = writeConfig(['servers:', skillsEntry('a', ['--tamper'])].join('\n'));
    const verified = await runCli(['skills', '--verify', '--config', bad]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toContain('error: skill://a/release-notes/references/GUIDE.md');
    expect(verified.stderr).toContain('2 of 3 files of 2 skills match their entries');
    const failed = await runCli(['check', '--config', bad]);
    expect(failed.code).toBe(1);
    expect(failed.stdout).toContain('FAILED: 1 problem.');
  });

  it('X3: `skills --verify` loads a skill as a host does: a SKILL.md whose frontmatter is not its entry’s fails, and its other files are not read', async () => {
    const config = writeConfig(['servers:', skillsEntry('a', ['--tamper-listing'])].join('\n'));
    const verified = await runCli(['skills', '--verify', '--config', config]);
    expect(verified.code).toBe(1);
    expect(verified.stderr).toMatch(
      /error: skill:\/\/a\/release-notes\/SKILL\.md: .*its frontmatter's description is not the one its entry lists/,
    );
    expect(verified.stderr).toContain(
      "error: skill://a/release-notes/references/GUIDE.md: not read, its skill's SKILL.md failed its check",
    );
    expect(verified.stderr).toContain('1 of 3 files of 2 skills match their entries');
  });

  it('X1: a skill folder reads through the gateway (resources/directory/read), its children exposed; a file is no folder (-32602)', async () => {
    const { command, args } = fixtureServer('conformance-skills');
    const served = await serve([
      'servers:',
      '  s:',
      `    command: ${JSON.stringify(command)}`,
      `    args: ${JSON.stringify(args)}`,
    ]);
    const { skills } = await connect(served.url, '2026-07-28');
    expect(skills.directoryRead).toBe(true);
    const root = await skills.readDirectory('skill://s/release-notes');
    expect(root.resources.map((child) => [child.uri, child.mimeType]).sort()).toEqual([
      ['skill://s/release-notes/SKILL.md', 'text/markdown'],
      ['skill://s/release-notes/references', 'inode/directory'],
    ]);
    const deeper = await skills.readDirectory('skill://s/release-notes/references');
    expect(deeper.resources.map((child) => child.uri)).toEqual([
      'skill://s/release-notes/references/GUIDE.md',
    ]);
    await expect(skills.readDirectory('skill://s/release-notes/SKILL.md')).rejects.toThrow(
      /-32602|Invalid params|not a directory/i,
    );
  });

  it('X1: the status page’s data lists every server’s skills (server, name, description, files)', async () => {
    const served = await serve(['servers:', skillsEntry('a'), skillsEntry('b')]);
    const data = async () =>
      (
        (await (await fetch(new URL('/status/data', served.url))).json()) as {
          skills: Record<string, unknown>[];
        }
      ).skills;
    await expect.poll(async () => (await data()).length).toBe(4);
    expect(await data()).toContainEqual({
      server: 'b',
      uri: 'skill://b/release-notes/SKILL.md',
      name: 'release-notes',
      description: 'Writes release notes the b way.',
      files: 2,
    });
  });
});
