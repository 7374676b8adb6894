import { describe, expect, it } from 'vitest';
import { jsonDiff, jsonEqual } from '../../src/core/compare.js';

function nested(depth: number): unknown {
  let value: unknown = 1;
  for (let i = 0; i < depth; i++) value = { a: [value] };
  return value;
}

describe('jsonEqual', () => {
  it.each([
    ['key order is irrelevant', { a: 1, b: { c: [1, 2] } }, { b: { c: [1, 2] }, a: 1 }, true],
    ['array order matters', [1, 2], [2, 1], false],
    ['an extra key differs', { a: 1 }, { a: 1, b: 2 }, false],
    ['a missing key vs another key', { a: 1, b: undefined }, { a: 1, c: undefined }, false],
    ['array vs object', [], {}, false],
    ['null vs object', null, {}, false],
    ['1 vs "1"', 1, '1', false],
    ['equal scalars', 'x', 'x', true],
    ['different lengths', [1], [1, 1], false],
  ])('N2: %s', (_label, a, b, expected) => {
    expect(jsonEqual(a, b)).toBe(expected);
    expect(jsonEqual(b, a)).toBe(expected);
  });

  it('N2: a deeply nested payload does not overflow the stack', () => {
    expect(jsonEqual(nested(20000), nested(20000))).toBe(true);
  });
});

describe('jsonDiff', () => {
  it.each([
    ['a nested scalar', { a: { b: 1 } }, { a: { b: 2 } }, '$.a.b: 1 ≠ 2'],
    ['a missing key', { a: 1, b: true }, { a: 1 }, '$.b: true ≠ (missing)'],
    ['an array element', { list: [1, 2] }, { list: [1, 3, 4] }, '$.list[1]: 2 ≠ 3; $.list[2]: (missing) ≠ 4'],
    ['a key that is not an identifier', { 'a-b': 1 }, { 'a-b': 2 }, '$["a-b"]: 1 ≠ 2'],
    ['type change', { a: [1] }, { a: { 0: 1 } }, '$.a: [1] ≠ {"0":1}'],
    ['equal values', { a: 1 }, { a: 1 }, ''],
  ])('N2: short diff for %s', (_label, a, b, expected) => {
    expect(jsonDiff(a, b)).toBe(expected);
  });

  it('N2: reports the first few paths and says there is more', () => {
    const diff = jsonDiff({ a: 1, b: 1, c: 1, d: 1 }, { a: 2, b: 2, c: 2, d: 2 }, { maxPaths: 2 });
    expect(diff).toBe('$.a: 1 ≠ 2; $.b: 1 ≠ 2; …');
  });

  it('N2: equal trailing keys after the limit do not add an ellipsis', () => {
    expect(jsonDiff({ a: 1, b: 1, z: 0 }, { a: 2, b: 2, z: 0 }, { maxPaths: 2 })).toBe(
      '$.a: 1 ≠ 2; $.b: 1 ≠ 2',
    );
  });

  it('N2: the diff is bounded in length, long values are cut', () => {
    const diff = jsonDiff({ a: 'x'.repeat(1000) }, { a: 'y'.repeat(1000) }, { maxLength: 60 });
    expect(diff.length).toBeLessThanOrEqual(60);
    expect(diff.startsWith('$.a: "xxx')).toBe(true);
  });
});
