/**
 * O3: a new config's servers applied to a running proxy: removed and changed servers stop after
 * their in-flight calls (up to `graceMs`), added and changed ones start, unchanged ones are not
 * touched. Settings other than `servers` are not applied live: the keys that differ are returned,
 * to be logged as needing a restart.
 */
import type { Logger } from 'pino';
import type { Config, ServerConfig } from '../config/types.js';
import type { Pool } from '../downstream/pool.js';
import type { ServerHolder } from './servers.js';

/** True when two server configs are the same, where they came from aside. */
function same(a: ServerConfig, b: ServerConfig): boolean {
  const { source: _a, ...left } = a;
  const { source: _b, ...right } = b;
  return JSON.stringify(left) === JSON.stringify(right);
}

/** The top-level keys of `before` and `after` (servers and secrets aside) whose values differ. */
export function restartNeeded(before: Config, after: Config): string[] {
  const { servers: _old, secrets: _s1, ...globalsBefore } = before;
  const { servers: _new, secrets: _s2, ...globalsAfter } = after;
  const a = globalsBefore as Record<string, unknown>;
  const b = globalsAfter as Record<string, unknown>;
  return Object.keys({ ...a, ...b }).filter((key) => JSON.stringify(a[key]) !== JSON.stringify(b[key]));
}

/** Applies `next.servers` to `pool` (see the module header); `servers` then holds them. */
export async function applyServers(
  pool: Pool,
  servers: ServerHolder,
  next: Config,
  graceMs: number,
  logger: Logger,
): Promise<void> {
  const before = new Map(servers.list().map((server) => [server.name, server]));
  const after = new Map(next.servers.map((server) => [server.name, server]));
  const removed = [...before.values()].filter((old) => !after.has(old.name));
  const changed = next.servers.filter((now) => {
    const old = before.get(now.name);
    return old !== undefined && !same(old, now);
  });
  const added = next.servers.filter((now) => !before.has(now.name));
  servers.replace(next.servers);
  logger.info(
    {
      removing: removed.map((s) => s.name),
      changing: changed.map((s) => s.name),
      adding: added.map((s) => s.name),
    },
    'config reloaded',
  );
  await Promise.all([
    ...removed.map((server) => pool.remove(server.name, graceMs)),
    ...changed.map((server) => pool.replace(server, graceMs)),
    ...added.map((server) => pool.add(server)),
  ]);
}
