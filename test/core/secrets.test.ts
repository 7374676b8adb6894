/**
 * L2 for every output: one scrubber for the secrets interpolated into the config, finding them
 * in the forms they take on the way out.
 */
import { describe, expect, it } from 'vitest';
import { REDACTED, scrubDeep, secretForms, secretScrubber } from '../../src/core/secrets.js';

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

  // Every character a URL, a header or a body treats specially, and one that is not ASCII.
  const HOSTILE = `k@y/p+ss é&?=#"'<>\\%~!*()$,;:[]{}|^\`end`;
  const hostile = secretScrubber([HOSTILE]) as (text: string) => string;
  const url = (set: (url: URL) => void): string => {
    const at = new URL('https://echo.test/base');
    set(at);
    return at.href;
  };
  it.each([
    ['as it is', `token ${HOSTILE} here`],
    ['JSON-escaped', JSON.stringify({ token: HOSTILE })],
    ['JSON-escaped twice', JSON.stringify(JSON.stringify({ token: HOSTILE }))],
    [
      'JSON-escaped with \\uXXXX (Python json.dumps)',
      JSON.stringify(HOSTILE).replace(
        /[^\x20-\x7e]/g,
        (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`,
      ),
    ],
    ['encodeURIComponent', `?t=${encodeURIComponent(HOSTILE)}`],
    ['encodeURI', encodeURI(`https://echo.test/${HOSTILE}`)],
    ['in a WHATWG URL query', url((at) => at.searchParams.set('t', HOSTILE))],
    ['in a WHATWG URL search string', url((at) => (at.search = `t=${HOSTILE}`))],
    ['in a WHATWG URL path', url((at) => (at.pathname = `/a/${HOSTILE}`))],
    ['in a WHATWG URL fragment', url((at) => (at.hash = HOSTILE))],
    ['as a URL password', url((at) => ((at.username = 'u'), (at.password = HOSTILE)))],
    ['as a URL user', url((at) => (at.username = HOSTILE))],
    ['in a form body', new URLSearchParams({ client_secret: HOSTILE }).toString()],
    [
      'percent-encoded in lower case',
      encodeURIComponent(HOSTILE).replace(/%[0-9A-F]{2}/g, (h) => h.toLowerCase()),
    ],
    [
      'HTML-escaped',
      `<p>${HOSTILE.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;').replace(/"/g, '&quot;').replace(/'/g, '&#39;')}</p>`,
    ],
    ...['', 'u', 'us', 'use'].flatMap((user) => [
      [`in a Basic header after "${user}:"`, `Basic ${Buffer.from(`${user}:${HOSTILE}`).toString('base64')}`],
      [`base64url after "${user}:"`, Buffer.from(`${user}:${HOSTILE}`).toString('base64url')],
    ]),
  ])('L2: finds a secret %s', (_label, text) => {
    const out = hostile(text);
    expect(out).toContain(REDACTED);
    // No run of the secret's own characters (in any of its forms) is left.
    for (const form of secretForms(HOSTILE)) expect(out).not.toContain(form);
    expect(out).not.toContain('p+ss');
    expect(out).not.toContain('k%40y');
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
