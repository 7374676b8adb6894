#!/usr/bin/env node
/**
 * The `mcp-normalizer` command (CONTRACT U3). Each command is imported only when it runs, so
 * `--version` and `--help` stay instant and `serve` loads nothing it does not use. Every error
 * ends here and becomes an exit code (docs/cli.md): 0 ok, 1 problems found, 2 usage error,
 * 3 invalid config, 4 runtime failure.
 */
import module from 'node:module';
import { loadInTurns, openStdioFront } from '../app/stdio-front.js';
import { packageVersion } from '../app/version.js';
import type { StdioFront } from '../app/stdio-front.js';
import type { CliIO } from './errors.js';
import { CliError, EXIT, processIO } from './errors.js';

interface Command {
  /** `front`: `serve` over stdio, started by the process before the command loaded. */
  run(args: readonly string[], io: CliIO, front?: StdioFront): Promise<number>;
}

const COMMANDS: Readonly<Record<string, { summary: string; load: () => Promise<Command> }>> = {
  serve: {
    summary: 'serve the aggregated MCP server (stdio, or --http)',
    load: () => import('./commands/serve.js'),
  },
  check: {
    summary: 'validate the config, connect every server, report problems',
    load: () => import('./commands/check.js'),
  },
  tools: { summary: 'list the exposed tools', load: () => import('./commands/tools.js') },
  skills: {
    summary: 'list the exposed skills (SEP-2640), --verify their files',
    load: () => import('./commands/skills.js'),
  },
  call: { summary: 'call one exposed tool and print the envelope', load: () => import('./commands/call.js') },
  login: {
    summary: 'log in to a remote server that has auth: oauth',
    load: () => import('./commands/login.js'),
  },
  logout: {
    summary: 'forget the stored login to a remote server',
    load: async () => ({ run: (await import('./commands/login.js')).runLogout }),
  },
  pins: {
    summary: 'list definitions that changed since pinned; pins approve accepts them',
    load: () => import('./commands/pins.js'),
  },
  remember: {
    summary: 'start servers and remember their first listing (serve does it when a host leaves early)',
    load: () => import('./commands/remember.js'),
  },
};

/**
 * P1: what `serve`'s own module needs, in steps that each add a part of it (zod and the config's
 * schema; yaml and its loader; pino), for the stdio front to answer between them
 * (app/stdio-front.ts {@link loadInTurns}). `serve` loads the rest the same way once it has
 * spawned its head start.
 */
const SERVE_STEPS: readonly (() => Promise<unknown>)[] = [
  () => import('../config/schema.js'),
  () => import('../config/load.js'),
  () => import('../log/logger.js'),
];

const USAGE = `Usage: mcp-normalizer <command> [options]

One MCP server in front of many: prefixed, collision-free tools and one result envelope.

Commands:
${Object.entries(COMMANDS)
  .map(([name, command]) => `  ${name.padEnd(8)}${command.summary}`)
  .join('\n')}

Options:
  -h, --help     show this help (also: mcp-normalizer <command> --help)
  -v, --version  print the version

Example:
  mcp-normalizer serve --http --config config/default.yaml`;

/**
 * Runs the CLI with `argv` (without node and the script) and resolves to the exit code. `front`
 * holds stdin for `serve` over stdio while the command loads (app/stdio-front.ts).
 */
export async function main(
  argv: readonly string[],
  io: CliIO = processIO,
  front?: StdioFront,
): Promise<number> {
  const [first, ...rest] = argv;
  if (first === undefined || first === '-h' || first === '--help' || first === 'help') {
    io.out(USAGE);
    return first === undefined ? EXIT.usage : EXIT.ok;
  }
  if (first === '-v' || first === '--version') {
    io.out(packageVersion());
    return EXIT.ok;
  }
  const command = COMMANDS[first];
  if (command === undefined) {
    throw new CliError(
      `Unknown command "${first}". Commands: ${Object.keys(COMMANDS).join(', ')}.`,
      EXIT.usage,
    );
  }
  if (front !== undefined) await loadInTurns(SERVE_STEPS, front);
  return (await command.load()).run(rest, io, front);
}

/**
 * E1, P1: `serve` over stdio answers the host's opening while it loads. Any `--http…` or help
 * flag means no stdio session, so no front.
 */
function servesStdio(argv: readonly string[]): boolean {
  const [command, ...rest] = argv;
  return (
    command === 'serve' && !rest.some((arg) => arg.startsWith('--http') || arg === '-h' || arg === '--help')
  );
}

async function runAsBin(): Promise<void> {
  // P1: Node 22.1+ keeps the compiled code of every module loaded after this in a cache on disk
  // (os.tmpdir()/node-compile-cache; NODE_DISABLE_COMPILE_CACHE=1 turns it off), so a later start
  // does not compile them again, as TypeScript's own CLI does. Node 20 has no such cache.
  (module as { enableCompileCache?: () => unknown }).enableCompileCache?.();
  let code: number;
  try {
    const argv = process.argv.slice(2);
    code = await main(argv, processIO, servesStdio(argv) ? openStdioFront() : undefined);
  } catch (error) {
    // A CliError, or an error of a lower layer that names its exit code (state-files.ts).
    const exitCode = (error as { exitCode?: unknown } | null)?.exitCode;
    if (error instanceof CliError || (error instanceof Error && typeof exitCode === 'number')) {
      processIO.err(`mcp-normalizer: ${error.message}`);
      code = exitCode as number;
    } else {
      processIO.err(
        `mcp-normalizer: internal error: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}`,
      );
      code = EXIT.runtime;
    }
  }
  // Exit explicitly once stdout is flushed: a finished one-shot command must not linger on a
  // stray handle, and an unflushed pipe must not lose the last lines.
  process.stdout.write('', () => process.exit(code));
}

void runAsBin();
