/**
 * A process that hosts a downstream Pool and nothing else, for the tests that need a process
 * boundary: P6 (its stdout must stay empty however noisy the children are) and P5 (on SIGTERM it
 * closes the pool, leaves no child behind and exits 0).
 *
 * Usage: node --import tsx test/helpers/pool-host.ts '<HostSpec as JSON>'
 * It logs (pino, fd 2) `pool-host ready` once the pool started and the spec's calls were sent,
 * and `pool-host closed` before exiting.
 */
import { pino } from 'pino';
import type { ServerConfig } from '../../src/config/types.js';
import { Pool } from '../../src/downstream/pool.js';

/** What the host runs. */
export interface HostSpec {
  readonly servers: readonly ServerConfig[];
  /** Calls sent (and not awaited) after start, e.g. to keep something in flight. */
  readonly calls: readonly { server: string; tool: string; args: Record<string, unknown> }[];
  readonly graceMs: number;
}

const spec = JSON.parse(process.argv[2] ?? '') as HostSpec;
const logger = pino({ level: 'info' }, pino.destination({ dest: 2, sync: true }));
const pool = new Pool({ servers: spec.servers, logger });

let stopping = false;
process.on('SIGTERM', () => {
  if (stopping) return;
  stopping = true;
  void pool.close({ graceMs: spec.graceMs }).then(() => {
    logger.info('pool-host closed');
    process.exit(0);
  });
});

await pool.start();
for (const call of spec.calls) void pool.callTool(call.server, call.tool, call.args);
// Give the calls a moment to reach the children before announcing readiness.
setTimeout(
  () => logger.info({ servers: pool.snapshot().map((s) => [s.name, s.state]) }, 'pool-host ready'),
  200,
);
