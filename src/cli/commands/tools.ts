/**
 * `mcp-normalizer tools` (U3): the exposed tools, as a table or (`--json`) as the exact
 * tools/list definitions a client receives; what the local user may see (I3: `access:` rules
 * for `sub:local`) and, with `--profile`, that profile's view (I6).
 */
import type { CliIO } from '../common.js';
import { EXIT, parseCommandArgs, checkProfile, withStartedProxy } from '../common.js';
import { formatToolTable } from '../report.js';

/** `tools --help`. */
export const HELP = `Usage: mcp-normalizer tools [--config FILE] [--json] [--profile NAME]

List the tools the aggregated server exposes to the local user (the access: rules for sub:local).

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --json            print the tools/list definitions as JSON
      --profile NAME    only profile NAME's tools (profiles: in the config), as serve --profile serves them
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  profile: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** I3, I6: why the local user's view is empty, by the verdict on a tool of the catalog. */
const EMPTY_VIEW: Readonly<Record<string, string>> = {
  no_rule: 'no access: rule names it (add one for `local`: docs/identity.md)',
  not_allowed: 'the access: rule for it allows none of them',
  profile_not_allowed: 'its access: rule confines it to other profiles (try --profile)',
  not_in_profile: 'the profile selects none of them',
};

/** Runs `tools`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs('tools', args, OPTIONS);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  const profile = values['profile'] as string | undefined;
  return withStartedProxy(
    values['config'] as string | undefined,
    values['log-level'] as string | undefined,
    io,
    async (proxy, io) => {
      // I3, I6: what the local user sees there: `--json` is the listing machine's tools/list
      // answer; the table, every tool the user may call (search-only ones too).
      const view = proxy.localView(profile);
      const catalog = proxy.catalog();
      io.out(
        values['json'] === true
          ? JSON.stringify(await proxy.toolList(view), null, 2)
          : formatToolTable(proxy.views.callable(view, catalog)),
      );
      // I3: an empty view of a full catalog says why, not just "(no tools exposed)".
      const first = catalog.tools[0];
      if (view !== undefined && first !== undefined && proxy.views.callable(view, catalog).length === 0) {
        const verdict = proxy.views.verdict(view, first.name);
        const reason = verdict.allowed ? 'allowed' : verdict.reason;
        io.err(
          `warning: the catalog has ${catalog.tools.length} tools, and the local user sees none: ${EMPTY_VIEW[reason] ?? reason}`,
        );
      }
      for (const server of proxy.servers()) {
        if (server.state !== 'ready')
          io.err(`warning: server "${server.name}" is ${server.state}; its tools may be missing`);
      }
      return EXIT.ok;
    },
    (config) => {
      checkProfile(config, profile);
      return config;
    },
  );
}
