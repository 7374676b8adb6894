/**
 * `mcp-normalizer call <exposed-name> --args '<json>'` (U3): one call through an in-memory SDK
 * client connected to our own upstream server, so the printed envelope is exactly what a client
 * receives (R2: no second renderer). Exit 1 when the result is an error.
 */
import { Client, InMemoryTransport } from '@modelcontextprotocol/client';
import type { Config } from '../../config/types.js';
import { composeName } from '../../core/naming.js';
import type { CliIO } from '../common.js';
import { CliError, EXIT, parseCommandArgs, withStartedProxy } from '../common.js';

/** `call --help`. */
export const HELP = `Usage: mcp-normalizer call <exposed-name> [--args JSON] [--config FILE]

Call one exposed tool and print the envelope (the structuredContent) a client would receive.

Options:
  -a, --args JSON       the arguments, a JSON object (default: {})
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help

Exit codes: 0 success, 1 the call failed (isError), 2 usage error, 3 invalid config.`;

const OPTIONS = {
  args: { type: 'string', short: 'a' },
  config: { type: 'string', short: 'c' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs `call`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values, positionals } = parseCommandArgs('call', args, OPTIONS, true);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0) {
    throw new CliError(
      'call: expected exactly one tool name, e.g. mcp-normalizer call demo_echo --args \'{"text":"hi"}\'',
      EXIT.usage,
    );
  }
  const toolArgs = parseToolArgs(values['args'] as string | undefined);
  return withStartedProxy(
    values['config'] as string | undefined,
    values['log-level'] as string | undefined,
    io,
    async (proxy, io) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await proxy.upstream.connect(serverSide, { sole: true });
      const client = new Client({ name: 'mcp-normalizer-cli', version: '1.0.0' });
      await client.connect(clientSide);
      try {
        // The raw request, not client.callTool: the envelope is printed as received, unvalidated.
        const result = await client.request({ method: 'tools/call', params: { name, arguments: toolArgs } });
        io.out(JSON.stringify(result.structuredContent ?? result, null, 2));
        return result.isError === true ? EXIT.problems : EXIT.ok;
      } finally {
        await client.close();
      }
    },
    (config) => ownersOf(name, config),
  );
}

/**
 * Only the servers that can own `name` are started (one call should not wait for every server):
 * those whose exposed prefix (T1) starts it, and those with no prefix at all. When none has a
 * prefix that fits, every server is started, so that an unknown name still gets its "did you
 * mean" from the whole catalog (T9), and an MCP App's downstream name its route (U6).
 */
export function ownersOf(name: string, config: Config): Config {
  // T1's name with an empty tool: `<global>_<server>_`, or "" for an unprefixed server.
  const prefixOf = (server: Config['servers'][number]): string =>
    composeName({
      globalPrefix: config.prefix,
      serverPrefix: server.prefix,
      separator: config.separator,
      tool: '',
    });
  const owners = config.servers.filter((server) => name.startsWith(prefixOf(server)));
  const prefixed = owners.some((server) => prefixOf(server) !== '');
  return prefixed ? { ...config, servers: owners } : config;
}

function parseToolArgs(text: string | undefined): Record<string, unknown> {
  if (text === undefined) return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(
      `call: --args is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.usage,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError('call: --args must be a JSON object, e.g. \'{"path": "notes.txt"}\'', EXIT.usage);
  }
  return value as Record<string, unknown>;
}
