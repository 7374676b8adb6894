/**
 * `mcp-normalizer skills` (issue 47, X1): the skills the aggregated server serves to the local
 * user (I3: `access:` rules for `sub:local`; `--profile`: that profile's view), as a table of
 * server, skill URI, files and description, or (`--json`) as the `skills/list` entries a host
 * receives. `--verify` loads every skill as a host does (X3): its SKILL.md first, checked against
 * its entry (size, SHA-256, frontmatter), its other files only once that holds.
 */
import type { CliIO } from '../common.js';
import { EXIT, checkProfile, parseCommandArgs, withStartedProxy } from '../common.js';
import { formatTable } from '../table.js';

/** `skills --help`. */
export const HELP = `Usage: mcp-normalizer skills [--config FILE] [--json] [--verify] [--profile NAME]

List the skills (SEP-2640) the aggregated server serves to the local user.

Options:
  -c, --config FILE     config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --json            print the skills/list entries as JSON
      --verify          load every skill as a host does: its SKILL.md first (size, digest,
                        frontmatter), its other files only once that holds
      --profile NAME    only profile NAME's skills, as serve --profile serves them
      --log-level LEVEL also log to stderr at this level (default: silent)
  -h, --help            show this help

Exit codes: 0 listed (and verified), 1 a file failed its check, 3 invalid config.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  json: { type: 'boolean' },
  verify: { type: 'boolean' },
  profile: { type: 'string' },
  'log-level': { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Runs `skills`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const { values } = parseCommandArgs('skills', args, OPTIONS);
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
      const view = proxy.localView(profile);
      const skills = await proxy.skills.all(view);
      if (values['json'] === true) io.out(JSON.stringify(skills, null, 2));
      else if (skills.length === 0) io.out('(no skills served)');
      else
        io.out(
          formatTable(skills, [
            { header: 'SERVER', value: (skill) => skill.uri.split('/')[2] ?? '' },
            { header: 'SKILL', value: (skill) => skill.uri },
            {
              header: 'FILES',
              value: (skill) => (skill.resources === 'dynamic' ? 'dynamic' : String(skill.resources.length)),
            },
            { header: 'DESCRIPTION', value: (skill) => skill.frontmatter.description, maxWidth: 60 },
          ]),
        );
      if (values['verify'] !== true) return EXIT.ok;
      const checked = await proxy.skills.verify(view);
      for (const failure of checked.failures) io.err(`error: ${failure}`);
      io.err(
        `${checked.files - checked.failures.length} of ${checked.files} files of ${checked.skills} skills match their entries (size, SHA-256, a SKILL.md's frontmatter).`,
      );
      return checked.failures.length === 0 ? EXIT.ok : EXIT.problems;
    },
    (config) => {
      checkProfile(config, profile);
      return config;
    },
  );
}
