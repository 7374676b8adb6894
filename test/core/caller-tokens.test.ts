/** D8: the callers' current tokens (core/caller-tokens.ts): the latest per principal, until it expires. */
import { describe, expect, it } from 'vitest';
import { CallerTokens } from '../../src/core/caller-tokens.js';

describe('caller tokens', () => {
  it.each([
    ['a token with no known end', undefined, 10_000, 'tok'],
    ['a token before its exp', 20, 19_999, 'tok'],
    ['a token at its exp', 20, 20_000, undefined],
    ['a token past its exp', 20, 25_000, undefined],
  ])('D8: %s is current: %s', (_name, expiresAt, nowMs, expected) => {
    const tokens = new CallerTokens();
    tokens.remember('iss#alice', 'tok', expiresAt);
    expect(tokens.current('iss#alice', nowMs)).toBe(expected);
  });

  it("D8: the latest token replaces the one before; one principal's is never another's", () => {
    const tokens = new CallerTokens();
    tokens.remember('iss#alice', 'a1', undefined);
    tokens.remember('iss#alice', 'a2', undefined);
    tokens.remember('iss#bob', 'b1', undefined);
    expect(tokens.current('iss#alice', 0)).toBe('a2');
    expect(tokens.current('iss#bob', 0)).toBe('b1');
    expect(tokens.current('iss#carol', 0)).toBeUndefined();
  });
});
