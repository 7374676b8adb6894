/**
 * `mcp-normalizer check` (U3): validate the config, connect every server, print the servers with
 * their states and tool counts, the exposed-tool table, every collision and failure; exit 1 on
 * any problem (T4), 3 when the config itself is invalid.
 */
import { commandLine } from '../../config/command-line.js';
import { createHash } from 'node:crypto';
import type { CliIO } from '../common.js';
import { EXIT, parseCommandArgs, withStartedProxy } from '../common.js';
import { configHints } from '../hints.js';
import { formatProblems, formatServerTable, formatToolTable, type ServerRow } from '../report.js';

/** `check --help`. */
export const HELP = `Usage: mcp-normalizer check [--config FILE]

Validate the config, connect to every server, and print the servers, the exposed tools and
every problem (name collisions, failing servers, malformed tools).

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help

Exit codes: 0 no problem, 1 a problem was found, 2 usage error, 3 invalid config.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs `check`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs('check', args, OPTIONS);
  if (values['help'] === true) {
    io.out(HELP);
    return EXIT.ok;
  }
  return withStartedProxy(
    values['config'] as string | undefined,
    values['log-level'] as string | undefined,
    io,
    async (proxy, io, configWarnings) => {
      const catalog = proxy.catalog();
      const profileLists = await Promise.all(
        Object.keys(proxy.config.profiles).map(async (name) => ({
          name,
          tools: await proxy.toolList(proxy.views.ofProfile(name)),
        })),
      );
      const servers = proxy.servers();
      const disabled = proxy.config.servers
        .filter((server) => !server.enabled)
        .map((server): ServerRow => ({
          name: server.name,
          state: 'disabled',
          tools: 0,
          in_flight: 0,
          queued: 0,
        }));
      const failures = servers
        .filter((server) => server.state !== 'ready')
        .map(
          (server) =>
            `error: server "${server.name}" is ${server.state}${server.error !== undefined ? `: ${server.error}` : ''}`,
        );
      // U5/T4: a withheld prompt, resource or template collision is a problem too.
      const featureProblems = proxy
        .features()
        .problems.map((problem) => `${problem.severity}: ${problem.message}`);
      // An ignored key (a misspelt key in a Claude-Desktop file) is a problem here: `check` is
      // where a user asks whether the config does what they wrote.
      // X3: every skill file read through the gateway and checked against its entry.
      const skills = proxy.skills.declared() ? await proxy.skills.verify(undefined) : undefined;
      const skillProblems = (skills?.failures ?? []).map((failure) => `error: skill file ${failure}`);
      const problems = [
        ...configWarnings,
        ...failures,
        ...formatProblems(catalog.problems),
        ...featureProblems,
        ...skillProblems,
      ];
      // Warnings that do not fail the check: the config works as written.
      const hints = configHints(
        proxy.config,
        catalog,
        (profile, name) => proxy.views.holds(proxy.views.ofProfile(profile), name),
        servers.every((server) => server.state === 'ready'),
      );
      // K3: a definition that changed since it was pinned is shown until it is approved.
      for (const change of proxy.definitionChanges())
        hints.push(
          [
            `warning: definition_changed: the ${change.kind} "${change.name}" of "${change.server}" ${change.change === 'new' ? 'is new since the server was pinned' : 'differs from its pin'}${proxy.config.pinning === 'hold' ? ' and is withheld' : ''}; review it, then: ${commandLine(['pins', 'approve', change.server, change.name])}`,
            ...change.diff.map((line) => `    ${line}`),
          ].join('\n'),
        );
      // Issue 56: the last line counts what is withheld and the warnings above it too.
      const withheld = proxy.config.pinning === 'hold' ? proxy.definitionChanges().length : 0;
      const notes = [
        ...(withheld > 0 ? [`${withheld} withheld until approved`] : []),
        ...(hints.length > 0 ? [count(hints.length, 'warning')] : []),
      ];
      const errors =
        configWarnings.length +
        failures.length +
        featureProblems.length +
        skillProblems.length +
        catalog.problems.filter((problem) => problem.severity === 'error').length;
      io.out(
        [
          `Config: ${proxy.config.file}`,
          '',
          formatServerTable([...servers, ...disabled]),
          '',
          formatToolTable(catalog.tools),
          '',
          ...(problems.length > 0 ? [...problems, ''] : []),
          ...(hints.length > 0 ? [...hints, ''] : []),
          // E2, replicas: the same config and downstreams give the same hash on every replica.
          `Catalog: sha256 ${sha256(catalog.definitions)} (tools/list, ${catalog.tools.length} tools)`,
          // I6: each profile's list at /mcp/<name> (before access rules) is stable the same way.
          ...profileLists.map(
            ({ name, tools }) =>
              `Profile ${name}: sha256 ${sha256(tools)} (tools/list, ${tools.length} tools)`,
          ),
          ...(skills !== undefined
            ? [
                `Skills: ${skills.skills} skills, ${skills.files - skills.failures.length} of ${skills.files} files match their entries (size, SHA-256, frontmatter)`,
              ]
            : []),
          errors === 0
            ? `OK: ${count(catalog.tools.length, 'tool')} from ${count(servers.length, 'server')}, no problems${notes.length > 0 ? `; ${notes.join(', ')}` : ''}.`
            : `FAILED: ${count(errors, 'problem')}${notes.length > 0 ? `; ${notes.join(', ')}` : ''}.`,
        ].join('\n'),
      );
      return errors === 0 ? EXIT.ok : EXIT.problems;
    },
  );
}

/** E2: the SHA-256 of a tools/list answer's bytes. */
function sha256(tools: unknown): string {
  return createHash('sha256').update(JSON.stringify(tools)).digest('hex');
}

/** `n` and `word`, plural unless `n` is 1: "1 tool", "2 tools". */
function count(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
