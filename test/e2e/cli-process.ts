/**
 * The built CLI as a child process, for end-to-end tests: run a one-shot command, or serve over
 * stdio / HTTP with a real SDK client on the other side. Needs `dist/` (npm test builds it).
 */
import { execFile, spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { Client as ModernClient, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import type { FixtureName } from '../helpers/fixtures.js';
import { fixtureServer, ROOT } from '../helpers/fixtures.js';

/** The compiled bin. */
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** The shipped demo config (U4). */
export const DEFAULT_CONFIG = join(ROOT, 'config', 'default.yaml');

if (!existsSync(CLI))
  throw new Error(`${CLI} is missing: run npx tsc -p tsconfig.build.json (npm test does)`);

/** A YAML server entry running fixture `fixture` with the current node binary. */
export function fixtureEntry(
  name: string,
  fixture: FixtureName,
  extra: Record<string, unknown> = {},
): string {
  const { command, args } = fixtureServer(fixture);
  const lines = [
    `  ${name}:`,
    `    command: ${JSON.stringify(command)}`,
    `    args: ${JSON.stringify(args)}`,
  ];
  for (const [key, value] of Object.entries(extra)) lines.push(`    ${key}: ${JSON.stringify(value)}`);
  return lines.join('\n');
}

/** Writes a config file into a fresh temp folder and returns its path. */
export function writeConfig(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-e2e-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, body);
  return file;
}

/**
 * Issue 48: a config of echo server `e` with the shared store at `storeUrl` and the state folder
 * `stateDir` (`extra` lines before `servers:`), written as {@link writeConfig} does.
 */
export function storeConfig(storeUrl: string, stateDir: string, extra: readonly string[] = []): string {
  return writeConfig(
    [
      `store: { url: "${storeUrl}" }`,
      `state_dir: ${JSON.stringify(stateDir)}`,
      ...extra,
      'servers:',
      fixtureEntry('e', 'echo'),
    ].join('\n'),
  );
}

/** The environment of every child: the parent's, minus anything that would change the config. */
export function childEnv(extra: Record<string, string> = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('MCP_')) env[key] = value;
  }
  return { ...env, ...extra };
}

/** What a one-shot command did. */
export interface CliRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs the CLI to completion (bounded by `timeoutMs`). */
export function runCli(
  args: readonly string[],
  env: Record<string, string> = {},
  timeoutMs = 20_000,
): Promise<CliRun> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      [CLI, ...args],
      { cwd: ROOT, env: childEnv(env), timeout: timeoutMs },
      (error, stdout, stderr) => {
        const code = error === null ? 0 : typeof error.code === 'number' ? error.code : null;
        resolve({ code, stdout, stderr });
      },
    );
  });
}

/** An SDK client talking to `mcp-normalizer serve` over stdio. */
export interface StdioSession {
  readonly client: Client;
  readonly transport: StdioClientTransport;
  /** Everything the server wrote to stderr so far. */
  stderr(): string;
}

/** How any SDK's stdio client transport starts `serve --config <file>` (command, args, env, cwd). */
export function serveStdio(
  config: string,
  extraArgs: readonly string[] = [],
  env: Record<string, string> = {},
): { command: string; args: string[]; env: Record<string, string>; cwd: string } {
  return {
    command: process.execPath,
    args: [CLI, 'serve', '--config', config, ...extraArgs],
    env: childEnv(env),
    cwd: ROOT,
  };
}

/** Spawns `serve --config <file>` over stdio and connects an SDK client to it. */
export async function connectStdio(
  config: string,
  env: Record<string, string> = {},
  extraArgs: readonly string[] = [],
): Promise<StdioSession> {
  // The log must say when the first round is over (below): at least at info.
  const args = extraArgs.includes('--log-level') ? extraArgs : [...extraArgs, '--log-level', 'info'];
  const transport = new StdioClientTransport({
    ...serveStdio(config, args, env),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const client = new Client({ name: 'e2e', version: '1.0.0' });
  await client.connect(transport);
  // P1: the gateway answers before its servers are up; these tests want them all (a host that
  // listed early would hear of them by list_changed).
  for (const end = Date.now() + 20_000; !stderr.includes('first connection round over');) {
    if (Date.now() > end) throw new Error(`the gateway did not finish starting its servers:\n${stderr}`);
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return { client, transport, stderr: () => stderr };
}

/** A `serve --http` child and where it listens. */
export interface HttpServe {
  readonly child: ChildProcess;
  readonly url: string;
  readonly healthUrl: string;
  stderr(): string;
  /** Resolves with the exit code. */
  readonly exited: Promise<number | null>;
}

/** Spawns `serve --http --port 0` and waits for the "MCP endpoint" line on stderr. */
export function serveHttp(
  config: string,
  env: Record<string, string> = {},
  timeoutMs = 20_000,
  extraArgs: readonly string[] = [],
): Promise<HttpServe> {
  const child = spawn(
    process.execPath,
    [CLI, 'serve', '--http', '--port', '0', '--config', config, ...extraArgs],
    {
      cwd: ROOT,
      env: childEnv(env),
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let stderr = '';
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`serve --http did not start:\n${stderr}`)), timeoutMs);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr += chunk.toString('utf8');
      const url = /MCP endpoint[^:]*:\s*(http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
      const healthUrl = /health:\s*(http:\/\/\S+\/healthz)/.exec(stderr)?.[1];
      if (url !== undefined && healthUrl !== undefined) {
        clearTimeout(timer);
        resolve({ child, url, healthUrl, stderr: () => stderr, exited });
      }
    });
    void exited.then((code) => {
      clearTimeout(timer);
      reject(new Error(`serve --http exited with ${String(code)}:\n${stderr}`));
    });
  });
}

/** Every live descendant of `pid` (Linux /proc), children first. */
export function descendants(pid: number): number[] {
  const parents = new Map<number, number[]>();
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      // Field 4 (ppid) comes after the parenthesised command name, which may contain spaces.
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      const state = fields[0];
      const ppid = Number(fields[1]);
      if (state === 'Z') continue;
      parents.set(ppid, [...(parents.get(ppid) ?? []), Number(entry)]);
    } catch {
      // The process exited while we looked.
    }
  }
  const out: number[] = [];
  const queue = [pid];
  while (queue.length > 0) {
    const next = queue.shift() as number;
    for (const child of parents.get(next) ?? []) {
      out.push(child);
      queue.push(child);
    }
  }
  return out;
}

/** True while `pid` exists and is not a zombie. */
export function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, 'utf8');
    return stat.slice(stat.lastIndexOf(')') + 2).split(' ')[0] !== 'Z';
  } catch {
    return false;
  }
}

/**
 * A 2026-07-28 SDK client of `url` with `token` as its bearer: no session, each request stands
 * alone (as replicas see it). The caller closes it.
 */
export async function modernHttpClient(url: string, token?: string): Promise<ModernClient> {
  const client = new ModernClient(
    { name: 'e2e-2026', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(token !== undefined ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
    }),
  );
  return client;
}

/** `serve --http` on a config of `lines`; `stops` (run at the end of the file's tests) kills it. */
export async function serveHttpLines(lines: readonly string[], stops: (() => unknown)[]): Promise<HttpServe> {
  const serve = await serveHttp(writeConfig(lines.join('\n')));
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}
