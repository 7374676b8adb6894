import { describe, expect, it } from 'vitest';
import { DEFAULT_BACKOFF, nextDelay } from '../../src/downstream/backoff.js';

describe('P4: restart backoff (capped exponential, equal jitter)', () => {
  it.each([
    // description, attempt, random, options, expected
    ['first restart, least jitter: half the initial cap', 0, 0, {}, 250],
    ['first restart, most jitter: the initial cap', 0, 1, {}, 500],
    ['first restart, middle', 0, 0.5, {}, 375],
    ['second restart doubles the cap', 1, 0, {}, 500],
    ['third restart', 2, 0.5, {}, 1500],
    ['the cap stops growth at maxMs', 10, 1, {}, 30_000],
    ['a huge attempt stays capped (no overflow)', 5000, 0.5, {}, 22_500],
    ['custom curve', 3, 0, { initialMs: 100, factor: 3, maxMs: 1e6 }, 1350],
    ['negative attempt counts as the first', -4, 0, {}, 250],
    ['fractional attempt is floored', 1.9, 0, {}, 500],
    ['random above 1 is clamped', 0, 7, {}, 500],
    ['random below 0 is clamped', 0, -3, {}, 250],
    ['NaN random is treated as 0', 0, Number.NaN, {}, 250],
  ] as const)('P4: %s', (_description, attempt, random, options, expected) => {
    expect(nextDelay(attempt, () => random, options)).toBe(expected);
  });

  it('P4: every delay lies in [cap/2, cap] for any attempt and random value', () => {
    for (let attempt = 0; attempt < 40; attempt++) {
      const cap = Math.min(DEFAULT_BACKOFF.maxMs, DEFAULT_BACKOFF.initialMs * 2 ** attempt);
      for (const r of [0, 0.1, 0.37, 0.5, 0.99, 0.999999]) {
        const delay = nextDelay(attempt, () => r);
        expect(delay).toBeGreaterThanOrEqual(Math.floor(cap / 2));
        expect(delay).toBeLessThanOrEqual(cap);
      }
    }
  });
});
