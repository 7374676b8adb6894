/**
 * Hints that run as printed (issue 56): a command line of this CLI, as the running process was
 * started — `mcp-normalizer …` once installed (`npm install -g`, or `npx`), `node <clone>/…/main.js
 * …` from a clone — with the process's own `--config <file>` (made absolute), quoted for a POSIX
 * shell.
 */
import path from 'node:path';

/** How this CLI is invoked: `mcp-normalizer` when installed, `node <script>` from a clone. */
export function cliCommand(script = process.argv[1] ?? ''): string {
  if (script === '' || /[\\/]node_modules[\\/]|[\\/]mcp-normalizer$/.test(script)) return 'mcp-normalizer';
  return /\.[cm]?js$/.test(script) ? `node ${shellQuote(script)}` : 'mcp-normalizer';
}

/** `word` quoted for a POSIX shell (as it is when it needs no quotes). */
export function shellQuote(word: string): string {
  return /^[A-Za-z0-9_@%+=:,./-]+$/.test(word) ? word : `'${word.replace(/'/g, `'\\''`)}'`;
}

/** The `--config` file a command line named (made absolute against `cwd`), if any. */
function configOf(argv: readonly string[], cwd: string): string | undefined {
  for (let i = 2; i < argv.length; i++) {
    const arg = argv[i]!;
    const value = arg === '--config' ? argv[i + 1] : arg.startsWith('--config=') ? arg.slice(9) : undefined;
    if (value !== undefined && value !== '') return path.resolve(cwd, value);
  }
  return undefined;
}

/**
 * The command line that runs `args` with this process's CLI and config.
 * @example commandLine(['pins', 'approve', 'fs']) // "node /clone/dist/src/cli/main.js pins approve fs --config /etc/mcp.yaml"
 */
export function commandLine(
  args: readonly string[],
  argv: readonly string[] = process.argv,
  cwd: string = process.cwd(),
): string {
  const config = configOf(argv, cwd);
  const words = [...args, ...(config !== undefined ? ['--config', config] : [])];
  return [cliCommand(argv[1] ?? ''), ...words.map(shellQuote)].join(' ');
}
