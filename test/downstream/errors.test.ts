import { describe, expect, it } from 'vitest';
import { describeError, isUnreachable } from '../../src/downstream/errors.js';

const sys = (code: string, message = 'boom') => Object.assign(new Error(message), { code });

describe('downstream error reading', () => {
  it.each([
    ['connection refused', sys('ECONNREFUSED'), true],
    [
      'fetch failed with a socket cause',
      new TypeError('fetch failed', { cause: sys('UND_ERR_SOCKET') }),
      true,
    ],
    ['fetch failed without a cause', new TypeError('fetch failed'), true],
    ['a nested cause', new Error('outer', { cause: new Error('mid', { cause: sys('ECONNRESET') }) }), true],
    ['a JSON-RPC error from a live server', Object.assign(new Error('bad'), { code: -32602 }), false],
    ['a timeout', Object.assign(new Error('Request timed out'), { code: -32001 }), false],
    ['a spawn error (handled by the restart path)', sys('ENOENT'), false],
    ['not an error', 'ECONNREFUSED', false],
  ])('P4: isUnreachable(%s) is %s', (_d, error, expected) => {
    expect(isUnreachable(error)).toBe(expected);
  });

  it.each([
    ['adds a code the message lacks', sys('EACCES', 'permission denied'), 'EACCES: permission denied'],
    ['keeps a message that names its code', sys('ENOENT', 'spawn x ENOENT'), 'spawn x ENOENT'],
    ['a thrown string', 'plain', 'plain'],
  ])('P1: describeError %s', (_d, error, expected) => {
    expect(describeError(error)).toBe(expected);
  });
});
