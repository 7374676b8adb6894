/**
 * The store part of the chaos bench (issue 55: "chaos with the store loses nothing"): two
 * replicas (`serve --http`) share one real Redis, every call counted by a rate limit there, and
 * Redis is SIGKILLed and restarted empty on its port again and again while `calls` calls run, 32
 * in flight, alternating between the replicas. Every call must be answered exactly once, with its
 * result or, while Redis is down, the `store_unavailable` refusal; both replicas stay up; once
 * Redis stays up, each says so on /healthz, gives it back the catalogs and pins it knows, and
 * every call succeeds again. Prints one JSON line (`part: store`).
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { join } from 'node:path';
import { createClient } from 'redis';
import { startRedisAt, type RedisPeer } from '../fixtures/servers/redis.js';
import { drive, summary } from './chaos-drive.js';
import { config, httpServe, openSession, postCall, ROOT } from './gateway.js';

const ECHO = join(ROOT, 'dist', 'bench', 'servers', 'echo.js');
/** Redis is up this long, then killed and kept down this long, then started empty again. */
const UP_MS = 1_500;
const DOWN_MS = 700;
/** How long the replicas may take to see Redis again and give it what they know. */
const RECOVERY_MS = 20_000;
const AFTER_CALLS = 64;

/** Debian's redis-server, on PATH (`apt-get install -y redis-server`). */
const REDIS_SERVER = 'redis-server';

/**
 * Kills Redis every `UP_MS` and starts it empty again after `DOWN_MS`, until stopped; then once
 * more, so what is measured after starts from an empty Redis.
 */
function redisKiller(first: RedisPeer): { current(): RedisPeer; stop(): Promise<number> } {
  const port = Number(new URL(first.url).port);
  let redis = first;
  let kills = 0;
  let stopped = false;
  const loop = (async () => {
    while (!stopped) {
      await sleep(UP_MS);
      if (stopped) break;
      await redis.stop();
      kills++;
      await sleep(DOWN_MS);
      redis = await startRedisAt(REDIS_SERVER, port);
    }
  })();
  return {
    current: () => redis,
    async stop() {
      stopped = true;
      await loop;
      await redis.stop();
      redis = await startRedisAt(REDIS_SERVER, port);
      return kills + 1;
    },
  };
}

type Answer = {
  result?: {
    isError?: boolean;
    structuredContent?: { meta_data?: { error_type?: string; error_data?: { reason?: string } } };
  };
};

/** `ok`, `store_unavailable`, or what else the answer was (each of those is a loss). */
function outcome(message: Record<string, unknown> | undefined): string {
  if (message === undefined) return 'unanswered';
  const result = (message as Answer).result;
  if (message['error'] !== undefined || result === undefined) return 'jsonrpc_error';
  if (result.isError !== true) return 'ok';
  const meta = result.structuredContent?.meta_data;
  return meta?.error_data?.reason ?? meta?.error_type ?? 'isError';
}

/** Polls `check` every 100 ms until it holds or `ms` passed; how long it took, or -1. */
async function within(ms: number, check: () => Promise<boolean>): Promise<number> {
  const start = performance.now();
  while (performance.now() - start < ms) {
    if (await check().catch(() => false)) return Math.round(performance.now() - start);
    await sleep(100);
  }
  return -1;
}

export async function storeChaos(calls: number): Promise<void> {
  const redis = await startRedisAt(REDIS_SERVER);
  const file = config(
    [
      'log_level: warn',
      `store: { url: "${redis.url}" }`,
      'rate_limits:',
      // A window of a second, far above the calls it sees: a store round trip every ~50 calls.
      "  - principals: ['anonymous']",
      '    calls: 3200',
      '    per_s: 1',
      'servers:',
      '  e:',
      `    command: ${JSON.stringify(process.execPath)}`,
      `    args: [${JSON.stringify(ECHO)}]`,
      '    protocol: legacy',
      '    concurrency: 32',
      '',
    ].join('\n'),
  );
  const replicas = await Promise.all([httpServe(file), httpServe(file)]);
  const sessions = await Promise.all(replicas.map((replica) => openSession(replica.url)));
  const call = (id: number) =>
    postCall(replicas[id % 2]!.url, sessions[id % 2]!, id, {
      name: 'e_echo',
      arguments: { message: `call ${id}` },
    });
  const outcomes: Record<string, number> = {};
  const killer = redisKiller(redis);
  const result = await drive(calls, 32, async (id) => {
    const answer = await call(id);
    const kind = outcome(answer);
    outcomes[kind] = (outcomes[kind] ?? 0) + 1;
    return answer;
  });
  const kills = await killer.stop();
  const alive = replicas.filter(
    (replica) => replica.child.exitCode === null && replica.child.signalCode === null,
  );
  // Redis stays up now: each replica says so, and gives it back what it knows.
  const health = (url: string) => url.replace(/\/mcp$/, '/healthz');
  const healthyMs = await within(RECOVERY_MS, async () => {
    const reports = await Promise.all(
      replicas.map(
        async (replica) => (await (await fetch(health(replica.url))).json()) as { store?: { ok?: boolean } },
      ),
    );
    return reports.every((report) => report.store?.ok === true);
  });
  const raw = createClient({ url: killer.current().url });
  await raw.connect();
  const reseededMs = await within(
    RECOVERY_MS,
    async () => (await raw.keys('mcp-normalizer:state:*')).length >= 2,
  );
  const reseeded = (await raw.keys('mcp-normalizer:state:*')).length;
  await raw.quit();
  const after: Record<string, number> = {};
  for (let id = calls + 1; id <= calls + AFTER_CALLS; id++) {
    const kind = outcome(await call(id));
    after[kind] = (after[kind] ?? 0) + 1;
  }
  const stderr = replicas.flatMap((replica) => replica.stderr());
  for (const replica of replicas) replica.child.kill('SIGTERM');
  await killer.current().stop();
  const lost = Object.entries(outcomes)
    .filter(([kind]) => kind !== 'ok' && kind !== 'store_unavailable')
    .reduce((sum, [, n]) => sum + n, 0);
  summary('store', result, {
    redis_kills: kills,
    by_reason: outcomes,
    lost_or_wrong: lost + result.duplicated,
    replicas_alive: alive.length,
    store_ok_again_after_ms: healthyMs,
    reseeded_state_keys: reseeded,
    reseeded_after_ms: reseededMs,
    [`after_recovery_${AFTER_CALLS}_calls`]: after,
    non_json_stderr_lines: stderr.filter((line) => !line.startsWith('{')).length,
  });
}
