/**
 * Issue 55: what a replica reads back from the shared store or the state folder is untrusted. A
 * real Redis and a state folder are filled with records nested 5,000 levels deep and with junk,
 * under every kind of key the gateway keeps (catalogs, pins, tasks, logins, file links, sign-ins)
 * and on its channels; two replicas then start on them and serve calls, and a task id with a
 * deep record is simply not found.
 */
import type { ChildProcess } from 'node:child_process';
import { readdirSync, writeFileSync } from 'node:fs';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, expect, it } from 'vitest';
import { createClient } from 'redis';
import { modernAnswer } from '../helpers/hosts.js';
import { describeWith } from '../helpers/peers.js';
import { startRedis, type RedisPeer } from '../helpers/redis.js';
import { fixtureEntry, serveHttp, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const redises: RedisPeer[] = [];
afterEach(async () => {
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const redis of redises.splice(0)) await redis.stop();
});

const DEEP = `${'['.repeat(5000)}${']'.repeat(5000)}`;
const DEEP_OBJECT = `${'{"a":'.repeat(5000)}1${'}'.repeat(5000)}`;
const JUNK = ['{"version":1,"tools":"no"}', 'not json', DEEP, DEEP_OBJECT];

const answer = (url: string, method: string, params: Record<string, unknown>) =>
  modernAnswer(url, method, params, {
    capabilities: { extensions: { 'io.modelcontextprotocol/tasks': {} } },
  });

describeWith(['redis-server'])('a hostile store and state folder', () => {
  for (const junk of JUNK)
    it(`K5: records of every kind that are ${junk.length > 100 ? 'nested 5,000 deep' : JSON.stringify(junk)}: every replica starts and serves`, async () => {
      const redis = await startRedis();
      redises.push(redis);
      const state = mkdtempSync(join(tmpdir(), 'xdg-state-hostile-'));
      const env = { XDG_STATE_HOME: state };
      const file = writeConfig(
        [`store: { url: "${redis.url}" }`, 'pinning: hold', 'servers:', fixtureEntry('e', 'echo')].join('\n'),
      );
      // A first replica writes what it remembers (catalogs and pins, in the folder and the store).
      const first = await serveHttp(file, env);
      children.push(first.child);
      expect(
        (await answer(first.url, 'tools/call', { name: 'e_echo', arguments: { text: 'x' } })).result,
      ).toBeDefined();
      first.child.kill('SIGKILL');

      const raw = createClient({ url: redis.url });
      await raw.connect();
      const keys = await raw.keys('mcp-normalizer:*');
      expect(keys.some((key) => key.startsWith('mcp-normalizer:state:pins/'))).toBe(true);
      for (const key of keys) if ((await raw.type(key)) === 'string') await raw.set(key, junk);
      await raw.set('mcp-normalizer:claim:task:deep-task', junk);
      await raw.set('mcp-normalizer:file:deep-file', junk);
      await raw.hSet('mcp-normalizer:logins:e', 'token:alice', junk);
      for (const folder of ['catalogs', 'pins'])
        for (const name of readdirSync(join(state, 'mcp-normalizer', folder)))
          writeFileSync(join(state, 'mcp-normalizer', folder, name), junk);

      const [one, two] = await Promise.all([serveHttp(file, env), serveHttp(file, env)]);
      children.push(one.child, two.child);
      // Junk on the channels the replicas listen on reaches them while they serve.
      for (const channel of await raw.pubSubChannels('mcp-normalizer:*')) await raw.publish(channel, junk);
      await raw.quit();
      for (const replica of [one, two]) {
        const called = await answer(replica.url, 'tools/call', {
          name: 'e_echo',
          arguments: { text: 'still here' },
        });
        expect(JSON.stringify(called.result)).toContain('still here');
        expect((await answer(replica.url, 'tasks/get', { taskId: 'deep-task' })).error?.code).toBe(-32602);
        expect(replica.child.exitCode).toBeNull();
      }
    });
});
