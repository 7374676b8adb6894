/** Issue 47: the pure rules of skills through the gateway (core/skills.ts), as tables. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import {
  decodeSkillsCursor,
  encodeSkillsCursor,
  exposeSkill,
  exposeSkillUri,
  mergeCacheHints,
  routeSkillUri,
  skillFileMismatch,
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
    expect(skillOfFile([exposeSkill('a', entry)], 'skill://a/r/SKILL.md')?.uri).toBe('skill://a/r/SKILL.md');
    const dynamic = exposeSkill('a', { ...entry, resources: 'dynamic' });
    expect(skillOfFile([dynamic], 'skill://a/r/deep/file.md')).toBe(dynamic);
    expect(skillOfFile([dynamic], 'skill://a/other/file.md')).toBeUndefined();
  });

  it.each([[{ server: 0 }], [{ server: 3, cursor: 'their-cursor' }]])('X2: cursor %j round-trips', (at) => {
    expect(decodeSkillsCursor(encodeSkillsCursor(at))).toEqual(at);
  });

  it.each([
    '',
    'x',
    Buffer.from('{"server":-1}').toString('base64url'),
    Buffer.from('{"server":1.5}').toString('base64url'),
  ])('X2: %j is no cursor of ours', (cursor) => expect(decodeSkillsCursor(cursor)).toBeUndefined());

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
});
