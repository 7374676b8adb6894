/**
 * mcp-normalizer itself, as a real user runs it: the built CLI (`dist/src/cli/main.js serve`)
 * started from a written config, over stdio or Streamable HTTP, with an SDK client connected to
 * it. Needs `dist/` (`npm test` builds it first).
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { existsSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { ToolListChangedNotificationSchema } from '@modelcontextprotocol/sdk/types.js';
import { stringify } from 'yaml';
import type { StdioSpec } from './real-servers.js';
import { CALL_TIMEOUT_MS, ROOT, START_TIMEOUT_MS } from './real-servers.js';

/** The compiled bin. */
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');

/** A downstream entry of a test config. */
export type DownstreamSpec =
  StdioSpec | { readonly url: string; readonly transport: 'streamable-http' | 'sse' };

/** How the upstream client reaches the product. */
export type Upstream = 'stdio' | 'http';

/** Writes `config.yaml` into `dir` with these servers (in this order) and returns its path. */
export function writeProductConfig(
  dir: string,
  servers: Readonly<Record<string, DownstreamSpec>>,
  extra: Readonly<Record<string, unknown>> = {},
): string {
  const entries: Record<string, Record<string, unknown>> = {};
  for (const [key, spec] of Object.entries(servers)) {
    entries[key] =
      'url' in spec
        ? { url: spec.url, transport: spec.transport, timeout_ms: CALL_TIMEOUT_MS }
        : {
            command: spec.command,
            args: [...spec.args],
            ...(spec.env ? { env: { ...spec.env } } : {}),
            timeout_ms: CALL_TIMEOUT_MS,
          };
  }
  const config = {
    // warn: the N2 warnings and failures reach stderr, the per-call info lines do not.
    log_level: 'warn',
    // The envelope schema is advertised here (it is off by default, T6) so that the SDK client's
    // strict callTool checks every envelope of the suite against it.
    output: { format: 'results', media: 'artifacts', advertise_schema: true },
    // The suites compare each server's listing and answers with a direct client that advertises
    // no capabilities (P8); a server offered elicitation or sampling lists more tools (Q2).
    defaults: { client_features: [] },
    servers: entries,
    ...extra,
  };
  const file = join(dir, 'config.yaml');
  writeFileSync(file, stringify(config));
  return file;
}

/** The environment of the product: ours, minus anything that would change its config. */
export function productEnv(): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [key, value] of Object.entries(process.env)) {
    if (value !== undefined && !key.startsWith('MCP_')) env[key] = value;
  }
  return env;
}

/** A running product with an SDK client connected to it. */
export interface Product {
  readonly upstream: Upstream;
  readonly client: Client;
  /** The Streamable HTTP endpoint (`--http` only). */
  readonly url?: string;
  /** Everything the product wrote to stderr (its log), for failure messages. */
  stderr(): string;
  /** Tool definitions by exposed name, as the client listed them. */
  tools(): Promise<Map<string, Tool>>;
  /**
   * Resolves with the listing once it holds every name in `names`. Over stdio the product answers
   * `initialize` before its downstreams are up and announces each server's tools with
   * `tools/list_changed` (T10): this re-lists on every announcement instead of sleeping.
   */
  waitForTools(names: readonly string[]): Promise<Map<string, Tool>>;
  /** tools/call through the SDK's strict helper: structuredContent is checked against outputSchema. */
  call(
    name: string,
    args: Record<string, unknown>,
    onprogress?: (progress: number) => void,
  ): Promise<CallToolResult>;
  close(): Promise<void>;
}

function assertBuilt(): void {
  if (!existsSync(CLI))
    throw new Error(`${CLI} is missing: run npx tsc -p tsconfig.build.json (npm test does)`);
}

function wrap(
  upstream: Upstream,
  client: Client,
  stderr: () => string,
  close: () => Promise<void>,
  url?: string,
): Product {
  const tools = async () => {
    const { tools: listed } = await client.listTools(undefined, { timeout: CALL_TIMEOUT_MS });
    return new Map(listed.map((tool) => [tool.name, tool]));
  };
  const waitForTools = (names: readonly string[]) =>
    new Promise<Map<string, Tool>>((resolve, reject) => {
      let last: Map<string, Tool> = new Map();
      const timer = setTimeout(() => {
        const missing = names.filter((name) => !last.has(name));
        reject(new Error(`mcp-normalizer never listed ${missing.join(', ')}; its log:\n${stderr()}`));
      }, START_TIMEOUT_MS);
      const check = async () => {
        last = await tools();
        if (names.every((name) => last.has(name))) {
          clearTimeout(timer);
          client.removeNotificationHandler('notifications/tools/list_changed');
          resolve(last);
        }
      };
      client.setNotificationHandler(ToolListChangedNotificationSchema, () => {
        check().catch(reject);
      });
      check().catch(reject);
    });
  return {
    upstream,
    client,
    ...(url !== undefined ? { url } : {}),
    stderr,
    tools,
    waitForTools,
    call: async (name, args, onprogress) =>
      (await client.callTool({ name, arguments: args }, undefined, {
        timeout: CALL_TIMEOUT_MS,
        ...(onprogress ? { onprogress: (p: { progress: number }) => onprogress(p.progress) } : {}),
      })) as CallToolResult,
    close,
  };
}

/** `serve --config <file>` over stdio, with an SDK client on the other end. */
export async function startProductStdio(config: string): Promise<Product> {
  assertBuilt();
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [CLI, 'serve', '--config', config],
    env: productEnv(),
    cwd: ROOT,
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on(
    'data',
    (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-50_000)),
  );
  const client = new Client({ name: 'interop-upstream-stdio', version: '1.0.0' });
  await client.connect(transport, { timeout: START_TIMEOUT_MS });
  return wrap(
    'stdio',
    client,
    () => stderr,
    () => client.close(),
  );
}

/** A `serve --http` child and where it listens. */
export interface HttpServe {
  readonly child: ChildProcess;
  readonly url: string;
  stderr(): string;
  stop(): Promise<void>;
}

/** Spawns `serve --http --port 0 --config <file>` and waits for the "MCP endpoint" line. */
export function serveHttp(config: string): Promise<HttpServe> {
  assertBuilt();
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', '--config', config], {
    cwd: ROOT,
    env: productEnv(),
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  let url: string | undefined;
  // A test process that ends without afterAll (a crash, a bail) must not leave us serving.
  const reap = () => child.kill('SIGTERM');
  process.once('exit', reap);
  const exited = new Promise<void>((resolve) =>
    child.once('exit', () => {
      process.off('exit', reap);
      resolve();
    }),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`serve --http did not start:\n${stderr}`));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`serve --http exited with ${String(code)}:\n${stderr}`));
    };
    child.once('exit', onExit);
    child.stderr.on('data', (chunk: Buffer) => {
      stderr = (stderr + chunk.toString('utf8')).slice(-50_000);
      if (url !== undefined) return;
      url = /MCP endpoint[^:]*:\s*(http:\/\/\S+\/mcp)/.exec(stderr)?.[1];
      if (url === undefined) return;
      clearTimeout(timer);
      child.off('exit', onExit);
      resolve({
        child,
        url,
        stderr: () => stderr,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
          await exited;
        },
      });
    });
  });
}

/** `serve --http` with an SDK client connected over Streamable HTTP. */
export async function startProductHttp(config: string): Promise<Product> {
  const serve = await serveHttp(config);
  const client = new Client({ name: 'interop-upstream-http', version: '1.0.0' });
  try {
    await client.connect(new StreamableHTTPClientTransport(new URL(serve.url)), {
      timeout: START_TIMEOUT_MS,
    });
  } catch (error) {
    await serve.stop();
    throw error;
  }
  return wrap(
    'http',
    client,
    serve.stderr,
    async () => {
      await client.close();
      await serve.stop();
    },
    serve.url,
  );
}

/** Starts the product over `upstream`. */
export function startProduct(upstream: Upstream, config: string): Promise<Product> {
  return upstream === 'stdio' ? startProductStdio(config) : startProductHttp(config);
}
