/**
 * C4: `${VAR}` and `${VAR:-default}` over the parsed tree; L2: the values that came from the
 * environment are returned as secrets.
 */
import { describe, expect, it } from 'vitest';
import {
  credentialValues,
  interpolate,
  interpolateString,
  isSecretReference,
  redactSecrets,
  retype,
} from '../../src/config/interpolate.js';

const env = { HOME: '/home/ann', TOKEN: 's3cr3t-value', EMPTY: '', PORT: '8080' };

describe('interpolateString', () => {
  it.each([
    ['C4: plain text is unchanged', 'hello', 'hello'],
    ['C4: a variable is replaced', '${HOME}/notes', '/home/ann/notes'],
    ['C4: several variables in one value', '${HOME}:${PORT}', '/home/ann:8080'],
    ['C4: a default is used when the variable is unset', '${NOPE:-fallback}', 'fallback'],
    ['C4: a default is used when the variable is empty', '${EMPTY:-fallback}', 'fallback'],
    ['C4: a set variable wins over its default', '${PORT:-1}', '8080'],
    ['C4: an empty default gives an empty string', '${NOPE:-}', ''],
    ['C4: a set but empty variable without default gives ""', 'x${EMPTY}y', 'xy'],
    ['C4: a default may contain colons and slashes', '${NOPE:-http://a:1/b}', 'http://a:1/b'],
    ['C4: $${ is a literal ${', '$${HOME}', '${HOME}'],
    ['C4: $VAR without braces is literal', '$HOME and $', '$HOME and $'],
  ])('%s', (_name, input, expected) => {
    const result = interpolateString(input, env);
    expect(result.errors).toEqual([]);
    expect(result.text).toBe(expected);
  });

  it.each([
    [
      'C4: a missing variable without default names it',
      '${API_KEY}',
      /environment variable "API_KEY" is not set/,
    ],
    ['C4: an unclosed reference', 'x${HOME', /unclosed "\$\{"/],
    ['C4: an invalid name', '${1ABC}', /invalid variable reference "\$\{1ABC\}"/],
    ['C4: an unsupported operator', '${HOME:?required}', /invalid variable reference/],
  ])('%s', (_name, input, message) => {
    const result = interpolateString(input, env);
    expect(result.errors).toHaveLength(1);
    expect(result.errors[0]?.message).toMatch(message);
  });
});

describe('interpolate', () => {
  it('C4: interpolates string values at any depth and leaves keys and other types alone', () => {
    const tree = { '${HOME}': 1, a: [true, 2, null, { b: 'x${PORT}' }], c: '${HOME}' };
    const result = interpolate(tree, env);
    expect(result.value).toEqual({ '${HOME}': 1, a: [true, 2, null, { b: 'x8080' }], c: '/home/ann' });
    expect(result.interpolatedPaths).toEqual([['a', 3, 'b'], ['c']]);
    expect(tree.c).toBe('${HOME}');
  });

  it('C4: reports every missing variable with its path', () => {
    const result = interpolate({ servers: { a: { url: '${A}' }, b: { args: ['${B}'] } } }, {});
    expect(result.errors.map((e) => [e.path, e.variable])).toEqual([
      [['servers', 'a', 'url'], 'A'],
      [['servers', 'b', 'args', 0], 'B'],
    ]);
  });

  it('L2: env values used are secrets; defaults and empty values are not', () => {
    const result = interpolate({ a: '${TOKEN}', b: '${NOPE:-default}', c: '${EMPTY}', d: '${TOKEN}' }, env);
    expect(result.secrets).toEqual(['s3cr3t-value']);
  });

  it('L2: a path, a host or a port is no secret; every value is still one for the log', () => {
    const tree = {
      servers: {
        fs: { args: ['${HOME}/notes'], env: { NOTES_DIR: '${HOME}', GH_PAT: '${PORT}' } },
        web: { url: 'http://${HOST:-localhost}:${PORT}/mcp', headers: { 'X-Tenant': '${HOME}' } },
      },
    };
    const result = interpolate(tree, env);
    expect(result.secrets).toEqual(['/home/ann']);
    expect([...result.values].sort()).toEqual(['/home/ann', '8080']);
    expect(interpolate({ secret_env: ['PORT'], a: '${PORT}' }, env).secrets).toEqual(['8080']);
  });

  it.each([
    [
      'a variable named like a credential',
      { name: 'GITHUB_TOKEN', before: '', after: '', path: ['args', 0] },
      true,
    ],
    [
      'a variable named like a credential',
      { name: 'DB_PASSWORD', before: 'x', after: '', path: ['args', 0] },
      true,
    ],
    [
      'under headers',
      { name: 'X', before: 'Bearer ', after: '', path: ['servers', 's', 'headers', 'Authorization'] },
      true,
    ],
    [
      'an env entry named like a credential',
      { name: 'X', before: '', after: '', path: ['servers', 's', 'env', 'OPENAI_API_KEY'] },
      true,
    ],
    [
      'under http.auth',
      { name: 'X', before: '', after: '', path: ['http', 'auth', 'tokens', 'ci', 'token'] },
      true,
    ],
    [
      'a URL query',
      { name: 'K', before: 'https://h/mcp?key=', after: '', path: ['servers', 's', 'url'] },
      true,
    ],
    [
      'a URL password',
      { name: 'P', before: 'https://u:', after: '@h/mcp', path: ['servers', 's', 'url'] },
      true,
    ],
    ['a URL user', { name: 'U', before: 'https://', after: ':p@h/mcp', path: ['servers', 's', 'url'] }, true],
    ['a URL host', { name: 'H', before: 'https://', after: '/mcp', path: ['servers', 's', 'url'] }, false],
    [
      'a URL host after user information',
      { name: 'H', before: 'https://u@', after: '/mcp', path: ['servers', 's', 'url'] },
      false,
    ],
    ['a path', { name: 'HOME', before: '', after: '/notes', path: ['servers', 's', 'args', 1] }, false],
    [
      'an env entry named plainly',
      { name: 'HOME', before: '', after: '', path: ['servers', 's', 'env', 'NOTES_DIR'] },
      false,
    ],
  ])('L2: %s is %s a secret', (_what, site, secret) => {
    expect(isSecretReference(site)).toBe(secret);
  });

  it('L2: the credential values of a server entry, written literally', () => {
    expect(
      credentialValues({
        headers: { Authorization: 'Bearer abc12345', 'X-Tenant': 'acme' },
        env: { API_KEY: 'k-123456', HOME: '/home/ann' },
        url: 'https://user:p%40ss@h/mcp?api_key=q-98765&page=2',
      }),
    ).toEqual(['Bearer abc12345', 'acme', 'k-123456', 'p@ss', 'q-98765']);
  });

  it('C4: a __proto__ key stays a plain key', () => {
    const tree = JSON.parse('{"__proto__": {"x": "${PORT}"}}') as unknown;
    const result = interpolate(tree, env).value as Record<string, unknown>;
    expect(Object.keys(result)).toEqual(['__proto__']);
    expect(Object.getPrototypeOf(result)).toBe(Object.prototype);
  });
});

describe('retype and redactSecrets', () => {
  it.each([
    ['C4: a number where a number is expected', '3333', 'number', 3333],
    ['C4: a boolean where a boolean is expected', 'false', 'boolean', false],
    ['C4: text stays text', 'abc', 'number', undefined],
    ['C4: a number is not a boolean', '1', 'boolean', undefined],
  ])('%s', (_name, text, expected, value) => {
    expect(retype(text, expected)).toBe(value);
  });

  it('L2: replaces every occurrence of every secret, but not values too short to matter', () => {
    expect(redactSecrets('a s3cr3t-value b s3cr3t-value', ['s3cr3t-value'])).toBe(
      'a [REDACTED] b [REDACTED]',
    );
    expect(redactSecrets('on 1', ['on', '1'])).toBe('on 1');
  });
});
