/**
 * Issue 55, K2: a host that lists once and leaves at once (an SDK script, the Inspector CLI) ends
 * the gateway before a slow server has listed, so nothing is remembered of it and every later
 * start waits for it again. When stdin ends with such a server still connecting, `serve` starts
 * `remember` for it, detached (its own process group, no stdio, not waited for): the host's exit is
 * never delayed, and the next start lists the server from memory. One at a time per state folder
 * (`remembering.lock`, taken with O_EXCL; one older than two minutes is stale).
 */
import { spawn } from 'node:child_process';
import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { Logger } from 'pino';
import type { Proxy } from '../app/proxy.js';
import { memoryPaths } from '../app/state/memory-files.js';

/** A lock older than this is a dead run's. */
const STALE_MS = 120_000;

/** The bound of one background run: a server's own start bound, at most a minute. */
const WITHIN_MS = 60_000;

/** Starts `remember` for the servers still connecting that nothing is remembered of; their names. */
export function rememberLater(proxy: Proxy, file: string, logger: Logger): readonly string[] {
  const { config } = proxy;
  const connecting = new Set(
    proxy
      .snapshot()
      .filter((row) => row.state === 'connecting')
      .map((row) => row.name),
  );
  const waiting = config.servers.filter(
    (server) =>
      server.enabled &&
      connecting.has(server.name) &&
      !existsSync(memoryPaths(config.stateDir, server).catalog),
  );
  if (waiting.length === 0) return [];
  const lock = join(config.stateDir, 'remembering.lock');
  try {
    if (Date.now() - statSync(lock).mtimeMs < STALE_MS) return [];
    rmSync(lock, { force: true });
  } catch {
    // No lock: take it.
  }
  try {
    writeFileSync(lock, String(process.pid), { flag: 'wx', mode: 0o600 });
  } catch {
    return []; // Another gateway of this folder took it first.
  }
  const names = waiting.map((server) => server.name);
  const within = Math.min(WITHIN_MS, Math.max(...waiting.map((server) => server.startupTimeoutMs)));
  const args = [
    process.argv[1] ?? '',
    'remember',
    '--config',
    file,
    '--within-ms',
    String(within),
    '--lock',
    lock,
  ];
  const child = spawn(process.execPath, [...args, ...names.flatMap((name) => ['--server', name])], {
    detached: true,
    stdio: 'ignore',
  });
  child.on('error', () => rmSync(lock, { force: true }));
  child.unref();
  logger.info(
    { servers: names },
    'the host left before these servers listed: remembering them in the background',
  );
  return names;
}
