/**
 * `mcp-normalizer remember` (issue 55, K2): starts servers and remembers their first listing, then
 * exits. `serve` over stdio runs it, detached, when its host leaves before a server it knows
 * nothing of has listed (every SDK script and the Inspector CLI list once and leave at once): the
 * next start then lists that server from memory instead of waiting for it again. Also a way to
 * fill the memory ahead of the first host. Bounded: `--within-ms`, then it stops whatever is not
 * up; it holds the state folder's `remembering.lock` while it runs, so many hosts leaving at once
 * start one.
 */
import { rmSync } from 'node:fs';
import type { CliIO } from '../common.js';
import { CliError, EXIT, parseCommandArgs, withStartedProxy } from '../common.js';

/** `remember --help`. */
export const HELP = `Usage: mcp-normalizer remember [--config FILE] [--server NAME]... [--within-ms MS]

Start the servers (all, or each --server NAME) and remember their first listing in the state
folder, then stop them. The next start lists them at once from memory. \`serve\` over stdio runs
this in the background when a host leaves before a server it knows nothing of has listed.

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --server NAME     only this server (repeatable)
      --within-ms MS    give up on a server not up by then (default 60000)
      --lock FILE       remove FILE when done (serve's lock; internal)
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  server: { type: 'string', multiple: true },
  'within-ms': { type: 'string' },
  lock: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs `remember`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs('remember', args, OPTIONS);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  const names = (values['server'] as string[] | undefined) ?? [];
  const withinMs = Number((values['within-ms'] as string | undefined) ?? 60_000);
  if (!Number.isInteger(withinMs) || withinMs < 1 || withinMs > 600_000)
    throw new CliError(`--within-ms: expected a whole number of ms from 1 to 600000`, EXIT.usage);
  const lock = values['lock'] as string | undefined;
  // Whatever happens, the next run may start: the lock goes with this process.
  const unlock = (): void => {
    if (lock !== undefined) rmSync(lock, { force: true });
  };
  const bound = setTimeout(() => {
    unlock();
    process.exit(EXIT.problems);
  }, withinMs + 10_000);
  bound.unref();
  try {
    return await withStartedProxy(
      values['config'] as string | undefined,
      values['log-level'] as string | undefined,
      io,
      async (proxy, out) => {
        // Listing builds the catalog from every live listing, which the memory saves (K2).
        await proxy.toolList();
        const ready = proxy.servers().filter((server) => server.state === 'ready');
        out.err(
          `Remembered ${ready.length} of ${proxy.servers().length} servers: ${ready.map((s) => s.name).join(', ')}`,
        );
        return ready.length === proxy.servers().length ? EXIT.ok : EXIT.problems;
      },
      (config) => {
        const unknown = names.filter((name) => !config.servers.some((server) => server.name === name));
        if (unknown.length > 0) throw new CliError(`remember: no server ${unknown.join(', ')}`, EXIT.usage);
        return {
          ...config,
          servers: config.servers.map((server) =>
            names.length === 0 || names.includes(server.name)
              ? { ...server, startupTimeoutMs: Math.min(server.startupTimeoutMs, withinMs) }
              : { ...server, enabled: false },
          ),
        };
      },
    );
  } finally {
    clearTimeout(bound);
    unlock();
  }
}
