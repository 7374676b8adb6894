/** Issue 55: untrusted records are bounded in size and depth before they are parsed (core/bounded-json.ts). */
import { describe, expect, it } from 'vitest';
import { jsonTextDeeperThan, parseBoundedJson, RECORD_BOUNDS } from '../../src/core/bounded-json.js';

const nest = (depth: number): string => `${'['.repeat(depth)}${']'.repeat(depth)}`;

describe('bounded JSON', () => {
  it.each([
    ['an object', '{"a":[1,{"b":2}]}', { a: [1, { b: 2 }] }],
    ['64 levels', nest(64), JSON.parse(nest(64)) as unknown],
    ['65 levels', nest(65), undefined],
    ['5,000 levels of objects', `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`, undefined],
    [
      'brackets inside strings do not count',
      `{"s":"${'['.repeat(100)}\\"${'{'.repeat(100)}"}`,
      { s: `${'['.repeat(100)}"${'{'.repeat(100)}` },
    ],
    ['not JSON', 'not json', undefined],
    ['nothing', undefined, undefined],
    ['too large', `"${'x'.repeat(RECORD_BOUNDS.maxChars)}"`, undefined],
  ])('K5: %s', (_what, text, value) => {
    expect(parseBoundedJson(text, RECORD_BOUNDS)).toEqual(value);
  });

  it('K5: the depth is counted without recursion, whatever the depth', () => {
    expect(jsonTextDeeperThan(nest(1_000_000), 256)).toBe(true);
    expect(jsonTextDeeperThan(nest(256), 256)).toBe(false);
  });
});
