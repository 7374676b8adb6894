/**
 * N13: numbers a double cannot carry keep the digits the server wrote, as strings; every other
 * number stays a number.
 */
import { describe, expect, it } from 'vitest';
import {
  isExactNumber,
  keepInexactNumbers,
  mayHoldInexactNumber,
  parseJsonExact,
} from '../../src/core/exact-json.js';

describe('isExactNumber', () => {
  it.each([
    ['2^64', '18446744073709551616', false],
    ['2^53 + 1', '9007199254740993', false],
    ['2^53', '9007199254740992', true],
    ['0.1 + 0.2 as JavaScript writes it', '0.30000000000000004', true],
    ['a trailing zero (the same number)', '19.90', true],
    ['an exponent', '1.5e-7', true],
    ['1e21 (written back as 1e+21, the same number)', '1e21', true],
    ['10^400 in digits', `1${'0'.repeat(400)}`, false],
    ['1e400 (Infinity)', '1e400', false],
    ['1e-400 (underflows to 0)', '1e-400', false],
    ['negative zero', '-0', false],
    ['negative zero with a fraction', '-0.0', false],
    ['zero', '0', true],
    ['a plain integer', '-42', true],
  ])('N13: %s', (_label, token, exact) => {
    expect(isExactNumber(token)).toBe(exact);
  });
});

describe('mayHoldInexactNumber', () => {
  it.each([
    ['2^64 as a value', '{"n":18446744073709551616}', true],
    ['a bare number', '1e400', true],
    ['a bare number after whitespace', ' \n-0', true],
    ['an exponent in a list', '[1,2.5e400]', true],
    ['an exponent after a space', '{"n": 1.5e-7}', true],
    ['negative zero', '{"z":-0}', true],
    ['negative zero with a fraction', '[-0.00]', true],
    ['16 digits after a comma', '[1,1234567890123456]', true],
    ['a word ending in -0 inside a string', '{"name":"record-0"}', false],
    ['digits and an e inside a word', '{"h":"ab3e4f"}', false],
    ['short numbers only', '{"a":[1,2.5,-3],"b":"x"}', false],
    ['16 digits inside a word', '{"id":"a1234567890123456"}', false],
    ['16 digits at a string start', '{"id":"1234567890123456"}', false],
    // A false positive costs a scan, never a wrong value (parseJsonExact below).
    ['16 digits after a space inside a string', '{"s":"a 1234567890123456"}', true],
  ])('N13: %s', (_label, text, maybe) => {
    expect(mayHoldInexactNumber(text)).toBe(maybe);
  });
});

describe('parseJsonExact', () => {
  it.each([
    ['2^64', '18446744073709551616', '18446744073709551616'],
    ['1e400', '[1e400]', ['1e400']],
    ['-0 inside an object', '{"z":-0,"x":1.5}', { z: '-0', x: 1.5 }],
    ['0.1+0.2 stays a number', '0.30000000000000004', 0.30000000000000004],
    [
      'digits inside a string are left alone',
      '{"id":"18446744073709551616"}',
      { id: '18446744073709551616' },
    ],
    ['a date is no number', '{"d":"2026-07-28","n":-0.5}', { d: '2026-07-28', n: -0.5 }],
    ['an escaped quote before a number', '["a\\"b", 12345678901234567890]', ['a"b', '12345678901234567890']],
  ])('N13: %s', (_label, text, value) => {
    const parsed = parseJsonExact(text);
    expect(parsed).toMatchObject({ ok: true });
    expect(parsed.ok && parsed.value).toEqual(value);
  });

  it('N13: not JSON is not JSON', () => {
    expect(parseJsonExact('{"a":')).toEqual({ ok: false });
  });

  it('N13: text with no inexact number is not rewritten', () => {
    expect(keepInexactNumbers('{"a":[1,2.5,-3e2],"b":"x"}')).toBeUndefined();
  });
});
