/**
 * L2 for every output: one scrubber for the secrets interpolated into the config, finding them
 * in the forms they take on the way out.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubDeep, secretScrubber } from '../../src/core/secrets.js';

const SECRET = 'tok"en/with space';
const scrub = secretScrubber([SECRET, 'abc']) as (text: string) => string;

describe('secretScrubber', () => {
  it.each([
    ['as it is', `Bearer ${SECRET}`],
    ['JSON-escaped', JSON.stringify({ auth: SECRET })],
    ['JSON-escaped twice (an error quoting a JSON body)', JSON.stringify(JSON.stringify({ auth: SECRET }))],
    ['URL-encoded', `https://x.test/?token=${encodeURIComponent(SECRET)}`],
  ])('L2: finds a secret %s', (_label, text) => {
    const out = scrub(text);
    expect(out).toContain(REDACTED);
    expect(out).not.toContain('with space');
    expect(out).not.toContain('with%20space');
  });

  it('L2: leaves secrets shorter than 4 characters alone, and is undefined when nothing is left', () => {
    expect(scrub('abc')).toBe('abc');
    expect(secretScrubber(['ab', ''])).toBeUndefined();
  });
});

describe('scrubDeep', () => {
  it('L2: scrubs every string, keys included, and returns the same object when nothing changed', () => {
    const clean = { a: ['x', { b: 1 }] };
    expect(scrubDeep(clean, scrub)).toBe(clean);
    const dirty = { error: `no access for ${SECRET}`, list: ['ok', SECRET], [SECRET]: true, n: 1 };
    expect(scrubDeep(dirty, scrub)).toEqual({
      error: `no access for ${REDACTED}`,
      list: ['ok', REDACTED],
      [REDACTED]: true,
      n: 1,
    });
  });

  it('L2: a "__proto__" key stays a key, and a cycle ends the walk', () => {
    const hostile = JSON.parse(`{"__proto__": {"polluted": "${'x'}"}, "v": "${'abcd'}"}`) as Record<
      string,
      unknown
    >;
    const out = scrubDeep(hostile, secretScrubber(['abcd']) as (text: string) => string);
    expect(Object.getPrototypeOf(out)).toBe(Object.prototype);
    expect(Object.keys(out)).toContain('__proto__');
    expect(({} as Record<string, unknown>)['polluted']).toBeUndefined();
    const cyclic: Record<string, unknown> = { s: SECRET };
    cyclic['self'] = cyclic;
    expect((scrubDeep(cyclic, scrub) as Record<string, unknown>)['s']).toBe(REDACTED);
  });
});
