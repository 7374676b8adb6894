/**
 * The token store (downstream/token-store.ts, D2): one file of logins by server and principal,
 * readable only by its owner, replaced whole on every write, read again when another process
 * changed it, and a broken file named in one line.
 */
import {
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  statSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { TokenStore } from '../../src/downstream/token-store.js';

const URL_A = 'https://a.example/mcp';
const tokens = (access: string) => ({ access_token: access, token_type: 'Bearer' });
const fresh = () => join(mkdtempSync(join(tmpdir(), 'tokens-')), 'state', 'tokens.json');

describe('TokenStore', () => {
  it('D2: a login is kept per server and principal, for its URL only; the file is 0600 in a 0700 folder', () => {
    const path = fresh();
    const store = new TokenStore(path);
    expect(store.read('a', URL_A)).toBeUndefined();
    store.write('a', URL_A, { tokens: tokens('t-local'), savedAt: 1 });
    store.write('a', URL_A, { tokens: tokens('t-alice') }, 'alice');
    expect(store.read('a', URL_A)?.tokens?.access_token).toBe('t-local');
    expect(store.read('a', URL_A, 'alice')?.tokens?.access_token).toBe('t-alice');
    expect(store.read('a', 'https://elsewhere.example/mcp')).toBeUndefined();
    expect(store.read('b', URL_A)).toBeUndefined();
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(join(path, '..')).mode & 0o777).toBe(0o700);
  });

  it('D2: a file or symlink planted where the temporary file used to go is never written through', () => {
    const path = fresh();
    mkdirSync(join(path, '..'), { recursive: true, mode: 0o700 });
    const victim = join(path, '..', '..', 'victim.txt');
    writeFileSync(victim, 'untouched');
    symlinkSync(victim, `${path}.${process.pid}.tmp`);
    const store = new TokenStore(path);
    store.write('a', URL_A, { tokens: tokens('t-secret') });
    expect(readFileSync(victim, 'utf8')).toBe('untouched');
    expect(store.read('a', URL_A)?.tokens?.access_token).toBe('t-secret');
    // No temporary file is left behind.
    expect(
      readdirSync(join(path, '..')).filter(
        (name) => name.endsWith('.tmp') && !name.includes(`${process.pid}.tmp`),
      ),
    ).toEqual([]);
  });

  it('D2: a write merges into the login; a login for another URL is replaced', () => {
    const store = new TokenStore(fresh());
    store.write('a', URL_A, { client: { client_id: 'c1' }, redirectUrl: 'http://127.0.0.1:5/callback' });
    store.write('a', URL_A, { tokens: tokens('t1') });
    expect(store.read('a', URL_A)).toMatchObject({
      client: { client_id: 'c1' },
      tokens: { access_token: 't1' },
    });
    store.write('a', 'https://moved.example/mcp', { tokens: tokens('t2') });
    expect(store.read('a', 'https://moved.example/mcp')?.client).toBeUndefined();
  });

  it("D2: remove forgets one principal's login and says whether there was one", () => {
    const store = new TokenStore(fresh());
    store.write('a', URL_A, { tokens: tokens('t') });
    store.write('a', URL_A, { tokens: tokens('u') }, 'alice');
    expect(store.remove('a')).toBe(true);
    expect(store.remove('a')).toBe(false);
    expect(store.read('a', URL_A)).toBeUndefined();
    expect(store.read('a', URL_A, 'alice')?.tokens?.access_token).toBe('u');
  });

  it('D2: a login written by another process (login while the gateway runs) is read at once', () => {
    const path = fresh();
    const gateway = new TokenStore(path);
    expect(gateway.read('a', URL_A)).toBeUndefined();
    new TokenStore(path).write('a', URL_A, { tokens: tokens('from-login') });
    expect(gateway.read('a', URL_A)?.tokens?.access_token).toBe('from-login');
  });

  it.each([
    ['not JSON', '{"version": 1, "logins": '],
    ['another version', '{"version": 2, "logins": {}}'],
  ])('D2: a store that is %s is named in one line with what to do', (_name, text) => {
    const path = fresh();
    new TokenStore(path).write('x', URL_A, {});
    writeFileSync(path, text);
    expect(() => new TokenStore(path).read('a', URL_A)).toThrow(
      new RegExp(
        `^The token store ${path.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')} cannot be read \\(.+\\): remove it and log in again$`,
      ),
    );
    expect(readFileSync(path, 'utf8')).toBe(text);
  });
});
