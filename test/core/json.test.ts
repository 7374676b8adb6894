import { describe, expect, it } from 'vitest';
import {
  UNSERIALIZABLE,
  looksLikeJson,
  parsedJsonBytesBound,
  safeStringify,
  stringJsonBytesBound,
  tryParseJson,
  utf8ByteLength,
  portableUtf8ByteLength,
  utf8ExceedsLimit,
} from '../../src/core/json.js';

const cyclic: Record<string, unknown> = { a: 1 };
cyclic['self'] = cyclic;
const shared = { x: 1 };
const throwing = {
  toJSON() {
    throw new Error('nope');
  },
};

describe('safeStringify', () => {
  it.each([
    ['a plain object', { a: [1, 'b'] }, '{"a":[1,"b"]}'],
    ['a cycle is marked, not thrown', cyclic, '{"a":1,"self":"[Circular]"}'],
    ['a BigInt becomes a string', { n: 10n }, '{"n":"10"}'],
    [
      'a shared (non-cyclic) reference is written twice',
      { p: shared, q: shared },
      '{"p":{"x":1},"q":{"x":1}}',
    ],
    ['a throwing toJSON gives the sentinel', throwing, UNSERIALIZABLE],
    ['undefined gives null', undefined, 'null'],
  ])('N10: never throws, %s', (_label, value, expected) => {
    expect(safeStringify(value)).toBe(expected);
  });
});

describe('utf8ByteLength', () => {
  const encoder = new TextEncoder();
  it.each([
    ['ascii', 'hello'],
    ['two-byte', 'héllo'],
    ['three-byte', '€uro'],
    ['surrogate pair', 'a😀b'],
    ['lone high surrogate', 'a\ud800b'],
    ['lone low surrogate', 'a\udc00'],
    ['empty', ''],
  ])('N9: counts like TextEncoder, %s (native and portable)', (_label, text) => {
    expect(utf8ByteLength(text)).toBe(encoder.encode(text).length);
    expect(portableUtf8ByteLength(text)).toBe(encoder.encode(text).length);
  });

  it.each([
    ['length over the limit', 'abcdef', 5, true],
    ['3 × length within the limit', 'ab', 6, false],
    ['exact count needed, over', '€€€', 8, true],
    ['exact count needed, within', '€€€', 9, false],
  ])('N9: utf8ExceedsLimit, %s', (_label, text, limit, expected) => {
    expect(utf8ExceedsLimit(text, limit)).toBe(expected);
  });
});

describe('tryParseJson', () => {
  it.each([
    ['an object', '{"a":1}', { ok: true, value: { a: 1 }, inexact: [] }],
    ['an array with leading whitespace', ' \n [1,2]', { ok: true, value: [1, 2], inexact: [] }],
    ['a JSON string', '"hi"', { ok: true, value: 'hi', inexact: [] }],
    ['a negative number', '-3.5', { ok: true, value: -3.5, inexact: [] }],
    ['true', 'true', { ok: true, value: true, inexact: [] }],
    ['null', 'null', { ok: true, value: null, inexact: [] }],
    ['prose starting with t', 'the answer', { ok: false }],
    ['a number followed by prose', '3 apples', { ok: false }],
    ['prose', 'Done.', { ok: false }],
    ['an empty string', '', { ok: false }],
    ['whitespace only', '  ', { ok: false }],
    ['broken JSON', '{"a":', { ok: false }],
    [
      'N13: 2^64 keeps its digits as a string',
      '{"n":18446744073709551616}',
      { ok: true, value: { n: '18446744073709551616' }, inexact: ['18446744073709551616'] },
    ],
  ])('N3: %s', (_label, text, expected) => {
    expect(tryParseJson(text)).toEqual(expected);
  });

  it.each([['Hello'], ['<html>'], ['# Title'], ['Error: x']])(
    'N3: prose %s is rejected without parsing',
    (text) => {
      expect(looksLikeJson(text)).toBe(false);
    },
  );
});

describe('size bounds', () => {
  it.each([
    ['pretty-printed object', JSON.stringify({ a: [1, 2, { b: 'c' }], d: 'é' }, null, 2)],
    ['exponent numbers that grow', '[1e20,1e9,1E5,-1e20]'],
    ['escapes that shrink', '"\\u00e9\\/"'],
    ['a lone surrogate escape', '"\\ud800"'],
    ['a raw lone surrogate', '"\ud800\ud800"'],
  ])('N9: parsedJsonBytesBound holds for %s', (_label, text) => {
    const actual = utf8ByteLength(JSON.stringify(JSON.parse(text)));
    expect(actual).toBeLessThanOrEqual(parsedJsonBytesBound(text.length));
  });

  it.each([
    ['control characters', '\u0001\u0002\n'],
    ['non-ascii', 'é€😀'],
    ['plain', 'abc'],
  ])('N9: stringJsonBytesBound holds for %s', (_label, text) => {
    expect(utf8ByteLength(JSON.stringify(text))).toBeLessThanOrEqual(stringJsonBytesBound(text));
  });
});
