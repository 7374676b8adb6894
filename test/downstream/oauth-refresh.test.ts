/** D2: when the gateway refreshes a stored login before sending it (a table over the clock). */
import { describe, expect, it } from 'vitest';
import { expiresSoon } from '../../src/downstream/oauth-login.js';

const SAVED = 1_800_000_000_000;
const login = (expiresIn?: number, savedAt: number | null = SAVED) => ({
  url: 'https://a.example/mcp',
  tokens: {
    access_token: 'a',
    token_type: 'Bearer',
    ...(expiresIn !== undefined ? { expires_in: expiresIn } : {}),
  },
  ...(savedAt !== null ? { savedAt } : {}),
});

describe('refresh before expiry', () => {
  it.each([
    ['an hour-long token, fresh', login(3600), SAVED + 1000, false],
    ['an hour-long token, 61 s before expiry', login(3600), SAVED + 3_539_000, false],
    ['an hour-long token, 59 s before expiry (a minute at most)', login(3600), SAVED + 3_541_000, true],
    ['an hour-long token, expired', login(3600), SAVED + 3_601_000, true],
    ['a 3 s token, 1 s in', login(3), SAVED + 1000, false],
    ['a 3 s token, past three quarters', login(3), SAVED + 2300, true],
    ['a token that says no lifetime', login(undefined), SAVED + 10 ** 9, false],
    ['a login saved before savedAt was kept', login(3600, null), SAVED + 10 ** 9, false],
  ])('D2: %s', (_name, stored, now, soon) => {
    expect(expiresSoon(stored, now)).toBe(soon);
  });
});
