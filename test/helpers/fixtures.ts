/**
 * Fixture servers as tests spawn them: the compiled JS in dist/fixtures/servers (built by
 * `npm run build`), run by the current Node binary, plus runtime ServerConfig builders.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { MAX_STDIO_MESSAGE_BYTES } from '../../src/config/schema.js';
import type { Config, ServerConfig, TransportConfig } from '../../src/config/types.js';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/** Where `tsc -p tsconfig.build.json` puts the compiled fixture servers. */
export const FIXTURE_DIST = join(ROOT, 'dist', 'fixtures', 'servers');

/** The fixture servers that exist (fixtures/servers/<name>.ts). */
export type FixtureName =
  | 'skills'
  | 'hostile-skills'
  | 'conformance-skills'
  | 'conformance-tasks'
  | 'structured'
  | 'text'
  | 'files'
  | 'inband'
  | 'errors'
  | 'slow'
  | 'crash'
  | 'annotated'
  | 'comeback'
  | 'noisy'
  | 'counter'
  | 'dynamic'
  | 'echo'
  | 'many-tools'
  | 'http'
  | 'prompts-resources'
  | 'modern'
  | 'probe-exit'
  | 'asking'
  | 'raw'
  | 'stateful'
  | 'conformance';

/**
 * The command that runs fixture `name` over stdio. Throws when dist is missing, naming the fix.
 * @example fixtureServer('echo') // { command: '/usr/bin/node', args: ['/repo/dist/fixtures/servers/echo.js'] }
 */
export function fixtureServer(
  name: FixtureName,
  extraArgs: readonly string[] = [],
): { command: string; args: string[] } {
  const script = join(FIXTURE_DIST, `${name}.js`);
  if (!existsSync(script)) {
    throw new Error(`Fixture server "${name}" is not built (${script} is missing): run npm run build`);
  }
  return { command: process.execPath, args: [script, ...extraArgs] };
}

/** A fixture serving HTTP on 127.0.0.1, and how to stop it. */
export interface HttpFixture {
  readonly url: string;
  stop(): void;
}

/**
 * Spawns fixture `name` with `args` (which make it serve HTTP) and resolves with its URL once it
 * prints `LISTENING <url>`; rejects after 10 s.
 */
export function startHttpFixture(name: FixtureName, args: readonly string[] = []): Promise<HttpFixture> {
  const { command, args: argv } = fixtureServer(name, args);
  const child = spawn(command, argv, { stdio: ['ignore', 'pipe', 'inherit'] });
  const stop = (): void => {
    if (child.exitCode === null) child.kill('SIGTERM');
  };
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      stop();
      reject(new Error(`fixture ${name} did not listen`));
    }, 10_000);
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const match = /^LISTENING (\S+)$/m.exec(out);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve({ url: match[1], stop });
      }
    });
    child.once('exit', () => {
      clearTimeout(timer);
      reject(new Error(`fixture ${name} exited before it listened`));
    });
  });
}

/**
 * A runtime ServerConfig with every default of the config pipeline, for tests.
 * @example serverConfig('db', stdioTransport('node', ['db.js']), { timeoutMs: 100 })
 */
export function serverConfig(
  name: string,
  transport: TransportConfig,
  overrides: Partial<Omit<ServerConfig, 'name' | 'transport'>> = {},
): ServerConfig {
  return {
    name,
    prefix: name,
    enabled: true,
    transport,
    timeoutMs: 60_000,
    // Tests that shorten timeoutMs to bound a start-up meant both (they predate the split, P1).
    startupTimeoutMs: overrides.timeoutMs ?? 60_000,
    concurrency: 8,
    maxQueue: 256,
    withholdAfterMs: 300_000,
    healthIntervalMs: 15_000,
    inbandErrors: true,
    protocol: 'auto',
    clientFeatures: ['elicitation', 'sampling'],
    isolateCallers: false,
    instances: { mode: 'shared', max: 16, idleMs: 600_000 },
    expose: 'all',
    instructions: {},
    tools: { include: [], exclude: [], rename: {}, overrides: {}, stripPrefix: false },
    source: { file: 'test' },
    ...overrides,
  };
}

/** A ServerConfig that runs fixture `fixture` over stdio under the server name `name`. */
export function fixtureConfig(
  name: string,
  fixture: FixtureName,
  overrides: Partial<Omit<ServerConfig, 'name' | 'transport'>> = {},
): ServerConfig {
  const { command, args } = fixtureServer(fixture);
  return serverConfig(name, stdioTransport(command, args), overrides);
}

/** A stdio transport config with no env, no cwd and the default message limit. */
export function stdioTransport(command: string, args: readonly string[] = []): TransportConfig {
  return { type: 'stdio', command, args, env: {}, maxMessageBytes: MAX_STDIO_MESSAGE_BYTES };
}

/**
 * A ServerConfig for a server that a test's `MemoryTransports` serves in process: its stdio
 * transport is never spawned.
 */
export function memoryConfig(
  name: string,
  overrides: Partial<Omit<ServerConfig, 'name' | 'transport'>> = {},
): ServerConfig {
  return serverConfig(name, stdioTransport('unused'), overrides);
}

/** A whole runtime Config around `servers`, with the contract's defaults (C6). */
export function runtimeConfig(servers: ServerConfig[], overrides: Partial<Config> = {}): Config {
  return {
    separator: '_',
    statusPage: true,
    profiles: {},
    nameMaxLength: 64,
    logLevel: 'info',
    output: {
      format: 'results',
      media: 'artifacts',
      maxInlineBytes: 65536,
      describeArguments: false,
      advertiseSchema: true,
      text: 'json',
      files: 'inline',
      fileStore: { maxBytes: 268_435_456, ttlMs: 600_000 },
    },
    explicitDestructive: true,
    strictArguments: false,
    listWaitMs: 1000,
    // K1: a fresh state folder per config: nothing remembered leaks from one test to the next.
    stateDir: mkdtempSync(join(tmpdir(), 'state-')),
    pinning: 'warn',
    expose: 'all',
    instructions: {},
    http: {
      host: '127.0.0.1',
      port: 0,
      allowedHosts: ['127.0.0.1'],
      sessionIdleMs: 1_800_000,
      maxSessions: 1000,
      legacy: 'sessions',
    },
    inputRequired: { roundTimeoutMs: 300_000, maxRounds: 10 },
    servers,
    redactKeys: [],
    secrets: [],
    file: 'test.yaml',
    ...overrides,
    logSecrets: overrides.logSecrets ?? overrides.secrets ?? [],
  };
}

/**
 * Whether process `pid` still runs (signal 0 checks without signalling). A zombie (ended, not
 * yet reaped: an orphan whose new parent, here the sandbox's init, does not reap) has ended.
 */
export function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
  } catch {
    return false;
  }
  try {
    // The state follows the parenthesised command name in /proc/<pid>/stat (Linux).
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2, stat.lastIndexOf(')') + 3) !== 'Z';
  } catch {
    return process.platform !== 'linux';
  }
}
