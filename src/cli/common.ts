/**
 * What the CLI commands share: where the config comes from, loading it with every problem
 * printed, the logger on stderr, option parsing, and a started proxy for one-shot commands.
 */
import { LOG_LEVELS } from '../core/options.js';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { parseArgs } from 'node:util';
import type { ParseArgsConfig } from 'node:util';
import type { Logger } from 'pino';
import type { Proxy } from '../app/proxy.js';
import { formatProblem, loadConfig } from '../config/load.js';
import type { Config, LogLevel } from '../config/types.js';
import { secretScrubber } from '../core/secrets.js';
import { closest } from '../core/suggest.js';
import { createLogger } from '../log/logger.js';
import { CliError, EXIT } from './errors.js';
import type { CliIO } from './errors.js';

export { CliError, EXIT, processIO } from './errors.js';
export type { CliIO } from './errors.js';

/** The config files looked for, in this order, when `--config` is not given. */
export const DEFAULT_CONFIG_FILES = [
  'mcp-normalizer.yaml',
  'mcp-normalizer.yml',
  'mcp-normalizer.json',
] as const;

/**
 * The config file to use: `--config`, else env `MCP_NORMALIZER_CONFIG`, else the first of
 * {@link DEFAULT_CONFIG_FILES} in the working directory. No silent fallback to the demo config:
 * a user who forgot `--config` must not end up serving the fixture servers.
 */
export function resolveConfigPath(flag: string | undefined, env: NodeJS.ProcessEnv, cwd: string): string {
  if (flag !== undefined && flag !== '') return resolve(cwd, flag);
  const fromEnv = env['MCP_NORMALIZER_CONFIG'];
  if (fromEnv !== undefined && fromEnv !== '') return resolve(cwd, fromEnv);
  for (const name of DEFAULT_CONFIG_FILES) {
    const candidate = resolve(cwd, name);
    if (existsSync(candidate)) return candidate;
  }
  throw new CliError(
    `No config file: pass --config FILE, set MCP_NORMALIZER_CONFIG, or create ./${DEFAULT_CONFIG_FILES[0]} (config/default.yaml in the repository is a working example).`,
    EXIT.config,
  );
}

/** Loads the config; prints warnings, and on any error prints each one and throws (exit 3). */
export async function loadConfigOrFail(file: string, io: CliIO): Promise<Config> {
  return (await loadConfigWithWarnings(file, io)).config;
}

/** {@link loadConfigOrFail}, also returning the ignored-key warnings it printed (`check` counts them). */
export async function loadConfigWithWarnings(
  file: string,
  io: CliIO,
): Promise<{ config: Config; warnings: readonly string[] }> {
  const { config, errors, warnings } = await loadConfig(file, process.env);
  for (const warning of warnings) io.err(`warning: ${formatProblem(warning)}`);
  // C5: an ignored key (a misspelt `enviroment` in a Claude-Desktop file) is a problem for check.
  const printed = warnings
    .filter((warning) => warning.ignoredKey === true)
    .map((warning) => `warning: ${formatProblem(warning)}`);
  if (config === undefined || errors.length > 0) {
    for (const error of errors) io.err(formatProblem(error));
    const count = errors.length === 1 ? '1 problem' : `${errors.length} problems`;
    throw new CliError(`Config ${file} is invalid (${count}); nothing was started.`, EXIT.config);
  }
  return { config, warnings: printed };
}

/** The pino logger on stderr (L1), with the config's redaction and secrets (L2). */
export function cliLogger(config: Config, level: LogLevel | 'silent'): Logger {
  return createLogger({ level, redactKeys: config.redactKeys, secrets: config.logSecrets });
}

/** A `--log-level` value, checked. */
export function parseLogLevel(value: string | undefined, fallback: LogLevel | 'silent'): LogLevel | 'silent' {
  if (value === undefined) return fallback;
  const levels = [...LOG_LEVELS, 'silent'] as const;
  const level = levels.find((candidate) => candidate === value);
  if (level === undefined)
    throw new CliError(`--log-level must be one of ${levels.join(', ')}, got "${value}"`, EXIT.usage);
  return level;
}

/** node:util `parseArgs` with its errors turned into usage errors (exit 2). */
export function parseCommandArgs<T extends ParseArgsConfig['options']>(
  command: string,
  args: readonly string[],
  options: T,
  allowPositionals = false,
): { values: Record<string, string | boolean | undefined>; positionals: string[] } {
  try {
    const parsed = parseArgs({ args: [...args], options, allowPositionals, strict: true });
    return {
      values: parsed.values as Record<string, string | boolean | undefined>,
      positionals: parsed.positionals,
    };
  } catch (error) {
    const message = error instanceof Error ? error.message : String(error);
    // `serve --htttp`: name the option that was probably meant.
    const unknown = /^Unknown option '(--?[^']+)'/.exec(message)?.[1];
    const names = Object.keys(options ?? {}).map((name) => `--${name}`);
    const guess = unknown === undefined ? undefined : closest(unknown, names, { limit: 1 })[0];
    const what = guess === undefined ? message : `Unknown option '${unknown}'. Did you mean ${guess}?`;
    throw new CliError(
      `${what === message ? `${command}: ${message}` : `${command}: ${what}`}\nRun "mcp-normalizer ${command} --help" for the options.`,
      EXIT.usage,
    );
  }
}

/**
 * L2: `io` with every secret of `config` scrubbed from what it prints (a downstream's error can
 * echo an interpolated token into a server's last error, a problem or an envelope).
 */
export function scrubbedIO(io: CliIO, config: Config): CliIO {
  // What a user asked for (stdout) keeps a path; diagnostics (stderr) are scrubbed as logs are.
  const scrub = secretScrubber(config.secrets);
  const scrubLog = secretScrubber(config.logSecrets);
  if (scrub === undefined && scrubLog === undefined) return io;
  return {
    out: (text) => io.out(scrub?.(text) ?? text),
    err: (text) => io.err(scrubLog?.(text) ?? text),
  };
}

/**
 * Loads the config, starts a proxy, waits for every downstream's first connection attempt, runs
 * `body` with an `io` that prints no secret (L2), and always stops the proxy again (no child left
 * behind, P5).
 */
export async function withStartedProxy<T>(
  configFlag: string | undefined,
  logLevel: string | undefined,
  io: CliIO,
  body: (proxy: Proxy, io: CliIO, configWarnings: readonly string[]) => Promise<T>,
  select?: (config: Config) => Config,
): Promise<T> {
  const file = resolveConfigPath(configFlag, process.env, process.cwd());
  const { config: loaded, warnings } = await loadConfigWithWarnings(file, io);
  const config = select === undefined ? loaded : select(loaded);
  const out = scrubbedIO(io, config);
  // Problems are printed by the command itself; the log stays quiet unless asked.
  const logger = cliLogger(config, parseLogLevel(logLevel, 'silent'));
  // Imported here: `serve` loads this module before its servers are spawned (P1's head start).
  const { createProxy } = await import('../app/proxy.js');
  const proxy = createProxy(config, { logger });
  try {
    await proxy.start();
    return await body(proxy, out, warnings);
  } finally {
    await proxy.stop({ graceMs: 0 });
  }
}

/** I6: `--profile NAME` must name one of the config's `profiles:` (a usage error naming them). */
export function checkProfile(config: Config, profile: string | undefined): void {
  if (profile === undefined || config.profiles[profile] !== undefined) return;
  const known = Object.keys(config.profiles);
  throw new CliError(
    `Unknown profile "${profile}": ${known.length > 0 ? `the config has ${known.join(', ')}` : 'the config has no profiles:'}`,
    EXIT.usage,
  );
}
