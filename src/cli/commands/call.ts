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
      --elicit ANSWER   answer a question the tool asks (form elicitation): accept (every field
                        its default, else a placeholder of its type; or --elicit-content),
                        decline or cancel (default: the call says it cannot ask)
      --elicit-content JSON  the content to accept with (implies --elicit accept)
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help

Exit codes: 0 success, 1 the call failed (isError), 2 usage error, 3 invalid config.`;

const OPTIONS = {
  args: { type: 'string', short: 'a' },
  elicit: { type: 'string' },
  'elicit-content': { type: 'string' },
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
  const answer = elicitAnswer(
    values['elicit'] as string | undefined,
    values['elicit-content'] as string | undefined,
  );
  return withStartedProxy(
    values['config'] as string | undefined,
    values['log-level'] as string | undefined,
    io,
    async (proxy, io) => {
      const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
      await proxy.upstream.connect(serverSide, { sole: true });
      const client = new Client(
        { name: 'mcp-normalizer-cli', version: '1.0.0' },
        answer !== undefined ? { capabilities: { elicitation: { form: {} } } } : {},
      );
      // Q3: a question the tool asks is answered as --elicit says.
      if (answer !== undefined)
        client.setRequestHandler('elicitation/create', (request) => answer(request.params) as never);
      await client.connect(clientSide);
      try {
        // The raw request, not client.callTool: the envelope is printed as received, unvalidated.
        const result = await client.request({ method: 'tools/call', params: { name, arguments: toolArgs } });
        io.out(JSON.stringify(result.structuredContent ?? result, null, 2));
        // Issue 56: a question this command could not answer (a tool's, or its task's) says how.
        if (answer === undefined && JSON.stringify(result).includes('elicitation/create'))
          io.err(
            'note: the tool asked a question; to answer it, run the command again with --elicit accept (or decline, cancel)',
          );
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
  return text === undefined ? {} : parseJsonObject(text, '--args');
}

/** `text` as a JSON object, or a usage error naming `flag`. */
function parseJsonObject(text: string, flag: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    throw new CliError(
      `call: ${flag} is not valid JSON: ${error instanceof Error ? error.message : String(error)}`,
      EXIT.usage,
    );
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CliError(`call: ${flag} must be a JSON object, e.g. '{"path": "notes.txt"}'`, EXIT.usage);
  }
  return value as Record<string, unknown>;
}

/** What `--elicit` / `--elicit-content` answer to a form elicitation, or undefined: no answers. */
function elicitAnswer(
  elicit: string | undefined,
  content: string | undefined,
): ((params: unknown) => Record<string, unknown>) | undefined {
  if (elicit === undefined && content === undefined) return undefined;
  const action = elicit ?? 'accept';
  if (action !== 'accept' && action !== 'decline' && action !== 'cancel')
    throw new CliError(`call: --elicit must be accept, decline or cancel, got "${action}"`, EXIT.usage);
  if (content !== undefined && action !== 'accept')
    throw new CliError('call: --elicit-content goes with --elicit accept', EXIT.usage);
  const given = content === undefined ? undefined : parseJsonObject(content, '--elicit-content');
  if (action !== 'accept') return () => ({ action });
  return (params) => ({ action, content: given ?? defaultsOf(params) });
}

/** Every field of a form's requested schema: its default, else a placeholder of its type. */
function defaultsOf(params: unknown): Record<string, unknown> {
  const schema = (params as { requestedSchema?: { properties?: Record<string, Record<string, unknown>> } })
    .requestedSchema;
  const placeholders: Record<string, unknown> = { boolean: true, number: 0, integer: 0, string: '' };
  const content: Record<string, unknown> = {};
  for (const [name, field] of Object.entries(schema?.properties ?? {})) {
    const choices = Array.isArray(field['enum']) ? field['enum'] : undefined;
    content[name] = field['default'] ?? choices?.[0] ?? placeholders[String(field['type'])] ?? '';
  }
  return content;
}
