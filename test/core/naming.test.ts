import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { composeName, exposedName, fnv1a32, sanitizeName, shortHash } from '../../src/core/naming.js';

const base = { separator: '_', maxLength: 64 };

describe('naming', () => {
  it.each([
    ['server prefix + tool', { serverPrefix: 'fs', tool: 'read' }, 'fs_read'],
    [
      'global prefix first (MCP_TOOL_PREFIX-style value passed in)',
      { globalPrefix: 'acme', serverPrefix: 'fs', tool: 'read' },
      'acme_fs_read',
    ],
    ['prefix "" exposes the tool unprefixed', { serverPrefix: '', tool: 'read' }, 'read'],
    [
      'global prefix with an unprefixed server',
      { globalPrefix: 'acme', serverPrefix: '', tool: 'read' },
      'acme_read',
    ],
    ['empty global prefix means none', { globalPrefix: '', serverPrefix: 'fs', tool: 'read' }, 'fs_read'],
    ['custom separator', { serverPrefix: 'fs', tool: 'read', separator: '-' }, 'fs-read'],
  ])('T1: %s', (_label, parts, expected) => {
    expect(exposedName({ ...base, ...parts })).toBe(expected);
  });

  it.each([
    ['dots become _', 'files.read.text', 'files_read_text'],
    ['slashes and spaces become _', 'a/b c', 'a_b_c'],
    ['accented letters become one _ each', 'café', 'caf_'],
    ['an emoji (two UTF-16 units) becomes one _', 'go🚀now', 'go_now'],
    ['CJK becomes _', '読む', '__'],
    ['allowed characters stay', 'Read-File_2', 'Read-File_2'],
  ])('T2: sanitizing, %s', (_label, name, expected) => {
    expect(sanitizeName(name)).toBe(expected);
  });

  it('T2: a dotted separator is sanitized too', () => {
    expect(exposedName({ serverPrefix: 'fs', tool: 'read', separator: '.', maxLength: 64 })).toBe('fs_read');
  });

  it.each([
    ['""', '', 0x811c9dc5],
    ['"a"', 'a', 0xe40c292c],
    ['"foobar"', 'foobar', 0xbf9cf968],
  ])('T2: the hash is standard 32-bit FNV-1a (test vector %s)', (_label, text, expected) => {
    expect(fnv1a32(text)).toBe(expected);
  });

  it('T2: the short hash is six base36 characters and stable', () => {
    const hash = shortHash('some_server_some_tool');
    expect(hash).toMatch(/^[0-9a-z]{6}$/);
    expect(shortHash('some_server_some_tool')).toBe(hash);
    expect(shortHash('some_server_some_tool2')).not.toBe(hash);
  });

  it('T2: a name too long is cut and ends in _ + the hash of the full name', () => {
    const tool = `${'x'.repeat(80)}_end`;
    const name = exposedName({ ...base, serverPrefix: 'srv', tool });
    expect(name).toHaveLength(64);
    expect(name).toBe(
      `srv_${'x'.repeat(53)}_${shortHash(composeName({ ...base, serverPrefix: 'srv', tool }))}`,
    );
    expect(exposedName({ ...base, serverPrefix: 'srv', tool })).toBe(name);
  });

  it('T2: two long names equal up to the cut get different names', () => {
    const a = exposedName({ ...base, serverPrefix: 'srv', tool: `${'y'.repeat(70)}_a` });
    const b = exposedName({ ...base, serverPrefix: 'srv', tool: `${'y'.repeat(70)}_b` });
    expect(a).not.toBe(b);
    expect(a.slice(0, 57)).toBe(b.slice(0, 57));
  });

  it('T2: the hash is of the unsanitized name, so long names differing only in a sanitized character differ', () => {
    const dotted = exposedName({ ...base, serverPrefix: 'srv', tool: `a.${'z'.repeat(70)}` });
    const underscored = exposedName({ ...base, serverPrefix: 'srv', tool: `a_${'z'.repeat(70)}` });
    expect(dotted).not.toBe(underscored);
  });

  it.each([
    ['maxLength 8 keeps one character and the hash', 8, /^s_[0-9a-z]{6}$/],
    ['maxLength 5 is the hash cut to fit', 5, /^[0-9a-z]{5}$/],
    ['maxLength 1', 1, /^[0-9a-z]$/],
  ])('T2: %s', (_label, maxLength, pattern) => {
    expect(exposedName({ serverPrefix: 'srv', separator: '_', tool: 'tool_name', maxLength })).toMatch(
      pattern,
    );
  });

  it('T2: every exposed name matches ^[A-Za-z0-9_-]{1,max}$ (property)', () => {
    fc.assert(
      fc.property(
        fc.option(fc.string(), { nil: undefined }),
        fc.string(),
        fc.string({ minLength: 1 }),
        fc.string({ maxLength: 3 }),
        fc.integer({ min: 1, max: 128 }),
        (globalPrefix, serverPrefix, tool, separator, maxLength) => {
          const name = exposedName({ globalPrefix, serverPrefix, tool, separator, maxLength });
          expect(name).toMatch(/^[A-Za-z0-9_-]+$/);
          expect(name.length).toBeLessThanOrEqual(maxLength);
          expect(name.length).toBeGreaterThanOrEqual(1);
        },
      ),
      { numRuns: 500 },
    );
  });
});
