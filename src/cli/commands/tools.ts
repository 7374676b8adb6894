/**
 * `mcp-normalizer tools` (U3): the exposed tools, as a table or (`--json`) as the exact
 * tools/list definitions a client receives.
 */
import type { CliIO } from '../common.js';
import { EXIT, parseCommandArgs, withStartedProxy } from '../common.js';
import { formatToolTable } from '../report.js';

/** `tools --help`. */
export const HELP = `Usage: mcp-normalizer tools [--config FILE] [--json]

List the tools the aggregated server exposes.

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --json            print the tools/list definitions as JSON
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs `tools`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs('tools', args, OPTIONS);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  return withStartedProxy(
    values['config'] as string | undefined,
    values['log-level'] as string | undefined,
    io,
    (proxy, io) => {
      const catalog = proxy.catalog();
      io.out(
        values['json'] === true
          ? JSON.stringify(catalog.definitions, null, 2)
          : formatToolTable(catalog.tools),
      );
      for (const server of proxy.servers()) {
        if (server.state !== 'ready')
          io.err(`warning: server "${server.name}" is ${server.state}; its tools may be missing`);
      }
      return Promise.resolve(EXIT.ok);
    },
  );
}
