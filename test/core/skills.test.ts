/** Issue 47: the pure rules of skills through the gateway (core/skills.ts), as tables. */
import { createHash, createHmac } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { parse as parseYaml } from 'yaml';
import {
  decodeSkillsCursor,
  encodeSkillsCursor,
  exposeSkill,
  exposeSkillUri,
  mergeCacheHints,
  routeSkillUri,
  skillFileMismatch,
  skillFrontmatterMismatch,
  skillOfFile,
  type SkillEntry,
} from '../../src/core/skills.js';

const sha256hex = (bytes: Uint8Array): string => createHash('sha256').update(bytes).digest('hex');
const digest = (text: string): string => `sha256:${sha256hex(Buffer.from(text))}`;

describe('skills (core)', () => {
  it.each([
    ['a', 'skill://release-notes/SKILL.md', 'skill://a/release-notes/SKILL.md'],
    ['acme.fs', 'skill://org/tool/references/A.md', 'skill://acme.fs/org/tool/references/A.md'],
    ['', 'skill://release-notes/SKILL.md', 'skill://release-notes/SKILL.md'],
    ['a', 'file:///x', 'file:///x'],
  ])('X1: prefix %j exposes %s as %s, and routes it back', (prefix, uri, exposed) => {
    expect(exposeSkillUri(prefix, uri)).toBe(exposed);
    if (prefix !== '' && uri.startsWith('skill://'))
      expect(routeSkillUri(exposed, new Set([prefix]))).toEqual({ prefix, uri });
  });

  it.each([
    ['skill://c/x/SKILL.md', undefined],
    ['skill://a', undefined],
    ['skill:///x', undefined],
    ['skill://A/x/SKILL.md', { prefix: 'a', uri: 'skill://x/SKILL.md' }],
  ])('X1: %s routes to %j among prefixes a, b', (uri, routed) => {
    expect(routeSkillUri(uri, new Set(['a', 'b']))).toEqual(routed);
  });

  it('X1: an entry keeps its frontmatter, digests, sizes and other fields; only URIs change', () => {
    const entry: SkillEntry = {
      uri: 'skill://r/SKILL.md',
      frontmatter: { name: 'r', description: 'd', 'allowed-tools': 'x' },
      resources: [{ uri: 'skill://r/SKILL.md', digest: digest('x'), size: 1, extra: true }],
      _meta: { k: 1 },
    };
    expect(exposeSkill('a', entry)).toEqual({
      ...entry,
      uri: 'skill://a/r/SKILL.md',
      resources: [{ uri: 'skill://a/r/SKILL.md', digest: digest('x'), size: 1, extra: true }],
    });
    const exposed = exposeSkill('a', entry) as SkillEntry;
    expect(skillOfFile([exposed], 'skill://a/r/SKILL.md')?.uri).toBe('skill://a/r/SKILL.md');
    const dynamic = exposeSkill('a', { ...entry, resources: 'dynamic' }) as SkillEntry;
    expect(skillOfFile([dynamic], 'skill://a/r/deep/file.md')).toBe(dynamic);
    expect(skillOfFile([dynamic], 'skill://a/other/file.md')).toBeUndefined();
  });

  const file = (uri: string) => ({ uri, digest: digest('x'), size: 1 });
  it.each([
    ['SKILL://r/SKILL.md', [file('Skill://r/a.md')], 'skill://a/r/SKILL.md', ['skill://a/r/a.md']],
    ['skill://r/SKILL.md', [file('skill://r/%7Eb.md')], 'skill://a/r/SKILL.md', ['skill://a/r/~b.md']],
    ['v+notes://r/SKILL.md', [], /not a skill's SKILL.md URI/, []],
    ['skill://r/README.md', [], /not a skill's SKILL.md URI/, []],
    ['skill://r/../s/SKILL.md', [], /not a skill's SKILL.md URI/, []],
    ['skill://r/SKILL.md', [file('skill://secret/key.txt')], /not a file of its folder/, []],
    ['skill://r/SKILL.md', [file('skill://r/%2e%2e/secret/key.txt')], /not a file of its folder/, []],
    ['skill://r/SKILL.md', [file('v+notes://r/a.md')], /not a file of its folder/, []],
  ])('X7: an entry %s listing %j is exposed as %s', (uri, resources, shown, files) => {
    const out = exposeSkill('a', { uri, frontmatter: { name: 'r', description: 'd' }, resources });
    if (typeof shown === 'string') {
      expect(out).toMatchObject({ uri: shown });
      expect((out as SkillEntry).resources).toEqual(files.map((f) => ({ ...file(f) })));
    } else expect((out as { dropped: string }).dropped).toMatch(shown);
  });

  const mac = (text: string): string => createHmac('sha256', 'k').update(text).digest('base64url');
  const at0 = (server: number) => (server < 4 ? { server: `s${server}`, caller: 'alice' } : undefined);
  it.each([[{ server: 0 }], [{ server: 3, cursor: 'their-cursor' }]])('X2: cursor %j round-trips', (at) => {
    expect(decodeSkillsCursor(encodeSkillsCursor(at, at0(at.server)!, mac), at0, mac)).toEqual(at);
  });

  const given = encodeSkillsCursor({ server: 1, cursor: 'c' }, { server: 's1', caller: 'alice' }, mac);
  const body = (json: string) => Buffer.from(json).toString('base64url');
  it.each([
    ['empty', ''],
    ['no signature', 'x'],
    ['unsigned, as before', body('{"server":1}')],
    [
      'negative',
      `${body('{"server":-1,"name":"s-1"}')}.${mac(`${body('{"server":-1,"name":"s-1"}')}\nalice`)}`,
    ],
    ['forged cursor', `${body('{"server":1,"name":"s1","cursor":"x"}')}.${given.split('.')[1]}`],
    [
      'another key',
      encodeSkillsCursor({ server: 1 }, { server: 's1', caller: 'alice' }, (t) => mac(`!${t}`)),
    ],
    ['another caller', encodeSkillsCursor({ server: 1 }, { server: 's1', caller: 'bob' }, mac)],
    ['another server there', encodeSkillsCursor({ server: 1 }, { server: 's2', caller: 'alice' }, mac)],
    ['a server no longer there', encodeSkillsCursor({ server: 5 }, { server: 's5', caller: 'alice' }, mac)],
  ])('X2: %s is no cursor of ours', (_why, cursor) =>
    expect(decodeSkillsCursor(cursor, at0, mac)).toBeUndefined(),
  );

  it.each([
    [[{ ttlMs: 60_000, cacheScope: 'public' }], false, { ttlMs: 60_000, cacheScope: 'public' }],
    [[{ ttlMs: 60_000, cacheScope: 'public' }], true, { ttlMs: 60_000, cacheScope: 'private' }],
    [
      [
        { ttlMs: 60_000, cacheScope: 'public' },
        { ttlMs: 5_000, cacheScope: 'private' },
      ],
      false,
      { ttlMs: 5_000, cacheScope: 'private' },
    ],
    [[{}], false, { ttlMs: 0, cacheScope: 'private' }],
    [[], false, { ttlMs: 0, cacheScope: 'private' }],
  ])('X3: hints %j (personal %j) carry %j', (hints, personal, merged) => {
    expect(mergeCacheHints(hints, personal)).toEqual(merged);
  });

  it.each([
    ['abc', 'abc', undefined],
    ['abc', 'abd', /digest/],
    ['abc', 'abcd', /size is 4 bytes/],
  ])('X3: listed %j, read %j: %s', (listed, read, why) => {
    const file = { uri: 'skill://a/r/SKILL.md', digest: digest(listed), size: Buffer.byteLength(listed) };
    const found = skillFileMismatch(file, Buffer.from(read), sha256hex);
    if (why === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(why);
  });

  const entry: SkillEntry = {
    uri: 'skill://pdf/SKILL.md',
    frontmatter: { name: 'pdf', description: 'Fill PDF forms' },
    resources: [],
  };
  it.each([
    ['---\nname: pdf\ndescription: Fill PDF forms\n---\n\nBody.\n', undefined],
    ['---\r\nname: pdf\r\ndescription: Fill PDF forms\r\n---\r\n', undefined],
    ['---\nname: pdf\ndescription: Fill PDF forms, and more\n---\n', /description/],
    ['---\nname: pdf\ndescription: Fill PDF forms\nlicense: MIT\n---\n', /license/],
    ['---\nname: pdf\n---\n', /description/],
    ['# no frontmatter\n', /no YAML frontmatter/],
    ['---\n[a, b]\n---\n', /not a map/],
    ['---\nname: [unclosed\n---\n', /not YAML/],
  ])('X3: a SKILL.md reading %j is loaded only when its frontmatter is its entry’s (%s)', (text, why) => {
    const found = skillFrontmatterMismatch(entry, Buffer.from(text), (yaml) => parseYaml(yaml));
    if (why === undefined) expect(found).toBeUndefined();
    else expect(found).toMatch(why);
  });
});
