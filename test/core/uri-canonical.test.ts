/**
 * U8: one canonical form for every URI the gateway exposes or accepts (core/uri-canonical.ts),
 * as a table of spellings: each row is what a host may send and the one form every check and
 * the routing see. Issue 54's spellings are the first rows.
 */
import { describe, expect, it } from 'vitest';
import { canonicalUri, removeDotSegments } from '../../src/core/uri-canonical.js';
import { carriedMeta } from '../../src/core/meta.js';
import { namespaceUri, splitNamespacedUri } from '../../src/core/uri-namespace.js';

describe('canonical URIs (U8)', () => {
  it.each([
    // Scheme case (RFC 3986 §3.1), the kept schemes' prefixed forms (U6, X1).
    ['skill://s/secret/SKILL.md', 'skill://s/secret/SKILL.md'],
    ['SKILL://s/secret/SKILL.md', 'skill://s/secret/SKILL.md'],
    ['Skill://s/secret/key.txt', 'skill://s/secret/key.txt'],
    ['skill://S/secret/key.txt', 'skill://s/secret/key.txt'],
    ['s+skill://secret/key.txt', 'skill://s/secret/key.txt'],
    ['S+SKILL://secret/key.txt', 'skill://s/secret/key.txt'],
    ['s+Skill://Secret/key.txt', 'skill://s/secret/key.txt'],
    ['a+b+skill://x/SKILL.md', 'skill://a/b/x/SKILL.md'],
    ['p+ui://viewer/app.html', 'ui://p/viewer/app.html'],
    ['UI://P/viewer/app.html', 'ui://p/viewer/app.html'],
    // Percent-encoding (§6.2.2.2): unreserved decoded, the rest in upper case.
    ['skill://s/secret/%6Bey.txt', 'skill://s/secret/key.txt'],
    ['files+file:///a%7eb', 'files+file:///a~b'],
    ['files+file:///a%2fb', 'files+file:///a%2Fb'],
    ['FILES+FILE:///Notes/A.md', 'files+file:///Notes/A.md'],
    // Dot segments (§5.2.4) resolved outside skills; the host in lower case (§6.2.2.1).
    ['files+file:///notes/../secret.txt', 'files+file:///secret.txt'],
    ['files+file:///notes/%2e%2e/secret.txt', 'files+file:///secret.txt'],
    ['files+file:///notes/./a/.', 'files+file:///notes/a/'],
    ['docs+https://User@Example.COM:8080/a/b/../c?q=A#F', 'docs+https://User@example.com:8080/a/c?q=A#F'],
    ['mcp-normalizer://files/abc', 'mcp-normalizer://files/abc'],
    ['urn:Example:A', 'urn:Example:A'],
    ['not a uri', 'not a uri'],
  ])('U8: %s is %s', (uri, canonical) => {
    expect(canonicalUri(uri)).toBe(canonical);
    // Once canonical, always canonical: checking twice changes nothing.
    expect(canonicalUri(canonical)).toBe(canonical);
  });

  it.each([
    'skill://s/dyn/../secret/key.txt',
    'skill://s/dyn/%2e%2e/secret/key.txt',
    'skill://s/dyn/%2E%2E/secret/key.txt',
    'skill://s/dyn/./key.txt',
    'SKILL://s/dyn/../secret/key.txt',
    's+skill://dyn/../secret/key.txt',
    'skill://s/dyn/..%2Fsecret/key.txt',
    'skill://s/dyn/..%5csecret/key.txt',
    'skill://s/dyn\\..\\secret/key.txt',
    'skill://../secret/key.txt',
  ])('U8, X1: the skill URI %s is refused', (uri) => {
    expect(canonicalUri(uri)).toEqual({ refused: expect.stringMatching(/segment|encoded/) as unknown });
  });

  it.each([
    ['SKILL://s/a/SKILL.md', 's'],
    ['s+skill://a/SKILL.md', 's'],
    ['Skill://S/a/SKILL.md', 's'],
    ['S+files://x', 's'],
  ])('U8: %s routes to prefix %s in its canonical form', (uri, prefix) => {
    const canonical = canonicalUri(uri) as string;
    expect(splitNamespacedUri(canonical)?.prefix).toBe(prefix);
  });

  it.each([
    ['/a/b/c/./../../g', '/a/g'],
    ['mid/content=5/../6', 'mid/6'],
    ['/..', '/'],
    ['/a/..', '/'],
    ['', ''],
  ])('U8: removeDotSegments(%j) is %j (RFC 3986 §5.2.4)', (path, out) => {
    expect(removeDotSegments(path)).toBe(out);
  });
});

describe('ui:// references in _meta (U6, U8)', () => {
  it('U6, U8: a tool’s ui:// reference is exposed in the form the resource lists show', () => {
    const meta = carriedMeta({ ui: { resourceUri: 'UI://PDF-Viewer/%7Eapp.html' } }, 'pdf');
    const listed = canonicalUri(namespaceUri('pdf', 'UI://PDF-Viewer/%7Eapp.html'));
    // The downstream's own authority is a path segment once namespaced: its case is kept.
    expect(meta).toEqual({ ui: { resourceUri: 'ui://pdf/PDF-Viewer/~app.html' } });
    expect(listed).toBe('ui://pdf/PDF-Viewer/~app.html');
  });
});
