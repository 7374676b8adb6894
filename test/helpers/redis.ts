/**
 * A real Redis for the tests that share state between replicas (issue 48): Debian's
 * `redis-server` (fixtures/servers/redis.ts) found where peers.ts finds it, stopped by the test.
 */
import { startRedisAt, type RedisPeer } from '../../fixtures/servers/redis.js';
import { peerPath } from './peers.js';

export type { RedisPeer } from '../../fixtures/servers/redis.js';

/**
 * Starts redis-server (it must be installed: `describeWith(['redis-server'])`), on `port` (an
 * earlier one's, to restart it empty) or a free one.
 */
export function startRedis(port?: number): Promise<RedisPeer> {
  return startRedisAt(peerPath('redis-server') ?? 'redis-server', port);
}

/**
 * Waits, when the fixed rate-limit window of `windowMs` (aligned to the epoch) ends within
 * `marginMs`, until the next one began: a test's calls then all fall in one window.
 */
export async function awayFromWindowEnd(windowMs: number, marginMs = 10_000): Promise<void> {
  const left = windowMs - (Date.now() % windowMs);
  if (left < marginMs) await new Promise((resolve) => setTimeout(resolve, left + 50));
}
