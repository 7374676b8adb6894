/**
 * Issue 48, D2 with a real Redis: `logout` on the command line removes a login the replicas share
 * from the store, and when it cannot reach the store it says so and fails (exit 4): the login
 * there stays in use by every replica, so the logout is not done.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createClient } from 'redis';
import { afterEach, expect, it } from 'vitest';
import { describeWith } from '../helpers/peers.js';
import { startRedis, type RedisPeer } from '../helpers/redis.js';
import { runCli, writeConfig } from './cli-process.js';

const redises: RedisPeer[] = [];
afterEach(async () => {
  for (const redis of redises.splice(0)) await redis.stop();
});

const SERVER_URL = 'http://127.0.0.1:9/mcp';
const LOGINS = 'mcp-normalizer:logins:r';

/** Another replica's login of the operator (principal `local`) to `r`, as it shares it. */
async function shareLogin(url: string): Promise<void> {
  const raw = createClient({ url });
  await raw.connect();
  const login = {
    url: SERVER_URL,
    tokens: { access_token: 'at-0123456789', token_type: 'Bearer' },
    savedAt: Date.now(),
  };
  await raw.hSet(LOGINS, 'local', JSON.stringify(login));
  await raw.quit();
}

describeWith(['redis-server'])('`logout` with a store the replicas share', () => {
  it('D2, issue 48: a logout that cannot reach the store fails and says the login there stays; reached, it removes it', async () => {
    let redis = await startRedis();
    redises.push(redis);
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-logout-'));
    const file = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        `state_dir: ${JSON.stringify(dir)}`,
        `token_store: ${JSON.stringify(join(dir, 'tokens.json'))}`,
        'servers:',
        '  r:',
        `    url: ${SERVER_URL}`,
        '    auth: oauth',
      ].join('\n'),
    );
    await shareLogin(redis.url);
    await redis.stop();

    const away = await runCli(['logout', 'r', '--config', file]);
    expect(away.code).toBe(4);
    expect(away.stderr.trim()).toBe(
      `No login to r was stored in this folder: the store at ${redis.url} could not be reached (unreachable: connect ECONNREFUSED ${new URL(redis.url).host}), and a login kept there stays in use by every replica. Run this again once it is reachable.`,
    );

    redis = await startRedis(Number(new URL(redis.url).port));
    redises.push(redis);
    await shareLogin(redis.url);
    const done = await runCli(['logout', 'r', '--config', file]);
    expect([done.code, done.stderr.trim()]).toEqual([0, 'Logged out of r.']);
    const raw = createClient({ url: redis.url });
    await raw.connect();
    expect(await raw.hGetAll(LOGINS)).toEqual({});
    await raw.quit();
  });
});
