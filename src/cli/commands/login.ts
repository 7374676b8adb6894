/**
 * `mcp-normalizer login <server>` and `logout <server>` (D2): a person's OAuth login to a remote
 * server with `auth: oauth`, kept in the token store for the gateway to use.
 */
import { spawn } from 'node:child_process';
import { loginServer, login, logout, principalKey, withSharedLogins } from '../../app/logins/login.js';
import type { CliIO } from '../common.js';
import { CliError, EXIT, loadConfigOrFail, parseCommandArgs, resolveConfigPath } from '../common.js';

/** `login --help`. */
export const HELP = `Usage: mcp-normalizer login <server> [--no-browser] [--principal NAME] [--config FILE]

Log in to a remote server that has \`auth: oauth\`: the browser opens the server's login page,
and the tokens are stored (mode 0600) for the gateway, which refreshes them.

Options:
  -c, --config FILE   config file (default: $MCP_NORMALIZER_CONFIG, else ./mcp-normalizer.{yaml,yml,json})
      --no-browser    print the URL to open instead of opening a browser
      --principal S   log in for the gateway's caller S, not for yourself: a subject of
                      http.auth.issuer, token:<name> for a static token, or the
                      <issuer>#<subject> a call's failure names; send that person the URL
                      (with --no-browser)
      --timeout S     give up after S seconds without the browser coming back (default: 300)
  -h, --help          show this help

Exit codes: 0 logged in, 2 usage error, 3 invalid config, 4 the login failed.`;

/** `logout --help`. */
export const LOGOUT_HELP = `Usage: mcp-normalizer logout <server> [--principal NAME] [--config FILE]

Forget the stored login to a remote server that has \`auth: oauth\` (yours, or caller NAME's).

Exit codes: 0 done (also when there was no login), 2 usage error, 3 invalid config.`;

const OPTIONS = {
  config: { type: 'string', short: 'c' },
  'no-browser': { type: 'boolean' },
  timeout: { type: 'string' },
  principal: { type: 'string' },
  help: { type: 'boolean', short: 'h' },
} as const;

/** Opens `url` with the desktop's handler; quietly does nothing where there is none. */
function openBrowser(url: URL): void {
  const [command, args] =
    process.platform === 'darwin'
      ? ['open', [url.href]]
      : process.platform === 'win32'
        ? ['cmd', ['/c', 'start', '', url.href]]
        : ['xdg-open', [url.href]];
  const child = spawn(command, args, { stdio: 'ignore', detached: true });
  child.on('error', () => undefined);
  child.unref();
}

async function target(command: string, args: readonly string[], io: CliIO, help: string) {
  const { values, positionals } = parseCommandArgs(command, args, OPTIONS, true);
  if (values['help'] === true) {
    io.out(help);
    return undefined;
  }
  const [name, ...extra] = positionals;
  if (name === undefined || extra.length > 0)
    throw new CliError(
      `${command}: expected exactly one server name, e.g. mcp-normalizer ${command} github`,
      EXIT.usage,
    );
  const file = resolveConfigPath(values['config'] as string | undefined, process.env, process.cwd());
  const config = await loadConfigOrFail(file, io);
  const server = loginServer(config, name);
  if (typeof server === 'string') throw new CliError(`${command}: ${server}`, EXIT.usage);
  const written = values['principal'] as string | undefined;
  if (written !== undefined && written.trim() === '')
    throw new CliError(`${command}: --principal needs a caller's subject`, EXIT.usage);
  if (written === undefined) return { server, values, config };
  // I2: a bare subject is the configured issuer's; `token:<name>` a static token's.
  const principal = principalKey(config, written);
  if (typeof principal !== 'string')
    throw new CliError(`${command}: --principal: ${principal.error}`, EXIT.usage);
  return { server: { ...server, principal }, values, config };
}

/** Runs `login`. */
export async function run(args: readonly string[], io: CliIO): Promise<number> {
  const found = await target('login', args, io, HELP);
  if (found === undefined) return EXIT.ok;
  const { server, values, config } = found;
  const timeout = values['timeout'] as string | undefined;
  if (timeout !== undefined && !/^\d+$/.test(timeout))
    throw new CliError(`login: --timeout must be a whole number of seconds, got "${timeout}"`, EXIT.usage);
  const noBrowser = values['no-browser'] === true;
  try {
    const { result: tokens, unreached } = await withSharedLogins(config, () =>
      login(server, {
        open(url) {
          io.err(`Open this URL to log in to ${server.server}:\n\n  ${url.href}\n`);
          if (!noBrowser) openBrowser(url);
        },
        ...(timeout !== undefined ? { timeoutMs: Number(timeout) * 1000 } : {}),
      }),
    );
    io.err(`Logged in to ${server.server}; the tokens are in ${tokens}.`);
    if (unreached === undefined) return EXIT.ok;
    io.err(
      `The store at ${unreached.where} could not be reached (${unreached.why}): the other replicas do not have this login. Run this again once it is reachable.`,
    );
    return EXIT.runtime;
  } catch (error) {
    const why = error instanceof Error ? error.message : String(error);
    throw new CliError(`login to ${server.server} failed: ${why.split('\n')[0] ?? why}`, EXIT.runtime);
  }
}

/** Runs `logout`. */
export async function runLogout(args: readonly string[], io: CliIO): Promise<number> {
  const found = await target('logout', args, io, LOGOUT_HELP);
  if (found === undefined) return EXIT.ok;
  const { server, config } = found;
  const { result: was, unreached } = await withSharedLogins(config, () => logout(server));
  if (unreached !== undefined) {
    // D2: what the store keeps, every replica goes on using: this logout is not done.
    io.err(
      `${was ? `Logged out of ${server.server} in this folder only` : `No login to ${server.server} was stored in this folder`}: the store at ${unreached.where} could not be reached (${unreached.why}), and a login kept there stays in use by every replica. Run this again once it is reachable.`,
    );
    return EXIT.runtime;
  }
  io.err(was ? `Logged out of ${server.server}.` : `No login to ${server.server} was stored.`);
  return EXIT.ok;
}
