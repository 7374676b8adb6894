/**
 * The real third-party MCP servers of the interop suite (installed as devDependencies at exact
 * versions), and the means to talk to them DIRECTLY, as any client would: spawned over stdio, or
 * server-everything over Streamable HTTP and SSE behind the loopback wrapper.
 *
 * Every direct client advertises NO capabilities, like mcp-normalizer's own downstream clients
 * (P8), so that the direct and the proxied runs see the same tools and the same behaviour.
 */
import { spawn } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, realpathSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import type { ClientCapabilities } from '@modelcontextprotocol/sdk/types.js';
import { SSEClientTransport } from '@modelcontextprotocol/sdk/client/sse.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { z } from 'zod';

/** The repository root. */
export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');

/**
 * Per-request timeout: generous, because the suite runs beside the rest of `npm test` on a
 * 2-core CI machine. A call that needs it is a failure worth seeing, never a retry.
 */
export const CALL_TIMEOUT_MS = 60_000;

/** Time allowed to start processes and connect (hooks). */
export const START_TIMEOUT_MS = 120_000;

const require = createRequire(import.meta.url);

/** The four reference servers, by the short key the suite uses. */
export const REAL_PACKAGES = {
  everything: '@modelcontextprotocol/server-everything',
  filesystem: '@modelcontextprotocol/server-filesystem',
  memory: '@modelcontextprotocol/server-memory',
  thinking: '@modelcontextprotocol/server-sequential-thinking',
  inspector: '@modelcontextprotocol/inspector-cli',
} as const;

/** An installed package: its exact version and the absolute path of its (first) bin. */
export interface InstalledPackage {
  readonly name: string;
  readonly version: string;
  readonly bin: string;
}

/** Reads an installed package's manifest (no `exports` map stands in the way of package.json). */
export function installed(name: string): InstalledPackage {
  const manifestPath = require.resolve(`${name}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    version: string;
    bin: Record<string, string>;
  };
  const bin = Object.values(manifest.bin)[0];
  if (bin === undefined) throw new Error(`Expected ${name} to declare a bin`);
  return { name, version: manifest.version, bin: join(dirname(manifestPath), bin) };
}

/** The version devDependencies pin for `name` (the suite checks the installed one matches). */
export function pinnedVersion(name: string): string | undefined {
  const manifest = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as {
    devDependencies?: Record<string, string>;
  };
  return manifest.devDependencies?.[name];
}

/** A stdio server as both a direct client and a product config need it. */
export interface StdioSpec {
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Readonly<Record<string, string>>;
}

/** A stdio server running one of the reference packages with the current node binary. */
export function stdioServer(
  pkg: string,
  args: readonly string[] = [],
  env?: Record<string, string>,
): StdioSpec {
  return { command: process.execPath, args: [installed(pkg).bin, ...args], ...(env ? { env } : {}) };
}

/** A fresh temp folder (the caller removes it). */
export function tempDir(label: string): string {
  // realpath: server-filesystem resolves its allowed folders, and the results name the real path.
  return realpathSync(mkdtempSync(join(tmpdir(), `mcp-normalizer-interop-${label}-`)));
}

/** A 1×1 PNG, so that read_media_file has a real image to return. */
export const PIXEL_PNG_BASE64 =
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==';

/** Bytes of the large text file: above the default 64 KiB inline limit, so N9 applies. */
export const BIG_FILE_BYTES = 70_000;

/**
 * A folder for server-filesystem with the same content every time: text, JSON, an image, a file
 * large enough to spill (N9), and a subfolder. Two such folders answer alike, up to their path.
 */
export function filesystemRoot(label: string): string {
  const root = tempDir(label);
  writeFileSync(join(root, 'hello.txt'), 'hello\nworld\n');
  writeFileSync(join(root, 'data.json'), '{"a":1,"list":[1,2,3]}');
  writeFileSync(join(root, 'pixel.png'), Buffer.from(PIXEL_PNG_BASE64, 'base64'));
  writeFileSync(join(root, 'big.txt'), 'x'.repeat(BIG_FILE_BYTES - 1) + '\n');
  mkdirSync(join(root, 'sub'));
  writeFileSync(join(root, 'sub', 'note.md'), '# Note\n');
  return root;
}

/** The result schema of a direct call: keep every field the server sent, judge nothing (P7). */
export const LenientResultSchema = z.looseObject({});

/** A raw CallToolResult exactly as a server sent it. */
export type RawResult = Record<string, unknown>;

/** A connected SDK client and how to close it. */
export interface DirectClient {
  readonly client: Client;
  /** Everything the server wrote to stderr (stdio servers only). */
  stderr(): string;
  close(): Promise<void>;
}

/** Registers handlers on a client before it connects (a server may ask right after initialize). */
export type BeforeConnect = (client: Client) => void;

/** Connects an SDK client with the given capabilities (none by default) over `transport`. */
export async function connectClient(
  transport: Transport,
  capabilities: ClientCapabilities = {},
  stderr: () => string = () => '',
  beforeConnect?: BeforeConnect,
): Promise<DirectClient> {
  const client = new Client({ name: 'interop-direct', version: '1.0.0' }, { capabilities });
  beforeConnect?.(client);
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  return { client, stderr, close: () => client.close() };
}

/** A direct stdio client on `spec`; the server's stderr is kept for failure messages. */
export async function connectStdio(
  spec: StdioSpec,
  capabilities: ClientCapabilities = {},
  beforeConnect?: BeforeConnect,
): Promise<DirectClient> {
  const transport = new StdioClientTransport({
    command: spec.command,
    args: [...spec.args],
    ...(spec.env ? { env: { ...spec.env } } : {}),
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    // Keep the tail only: a chatty server must not grow the test's memory without bound.
    stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
  });
  return connectClient(transport, capabilities, () => stderr, beforeConnect);
}

/** A direct Streamable HTTP or SSE client on `url`. */
export function connectUrl(url: string, kind: 'streamable-http' | 'sse'): Promise<DirectClient> {
  const transport =
    kind === 'sse' ? new SSEClientTransport(new URL(url)) : new StreamableHTTPClientTransport(new URL(url));
  return connectClient(transport);
}

/** Calls a tool directly and returns the raw result (the SDK checks nothing but JSON-RPC). */
export async function callRaw(
  client: Client,
  name: string,
  args: Record<string, unknown>,
): Promise<RawResult> {
  return (await client.request(
    { method: 'tools/call', params: { name, arguments: args } },
    LenientResultSchema,
    { timeout: CALL_TIMEOUT_MS },
  )) as RawResult;
}

/** server-everything's own HTTP entry point, running on 127.0.0.1 behind the wrapper. */
export interface LoopbackServer {
  readonly mode: 'streamableHttp' | 'sse';
  /** The address the server actually bound. */
  readonly address: string;
  readonly port: number;
  /** The MCP endpoint: `/mcp` (Streamable HTTP) or `/sse` (SSE). */
  readonly url: string;
  readonly child: ChildProcess;
  stop(): Promise<void>;
}

const WRAPPER = join(ROOT, 'test', 'interop', 'everything-loopback.mjs');

/** Starts server-everything over `mode` on 127.0.0.1 (a free port) and waits until it listens. */
export function startLoopback(mode: 'streamableHttp' | 'sse'): Promise<LoopbackServer> {
  const child = spawn(process.execPath, [WRAPPER, mode], {
    cwd: ROOT,
    env: { ...process.env, PORT: '0' },
    // stdin is the lifeline (the wrapper exits when it closes); stdout is the server's chatter.
    stdio: ['pipe', 'ignore', 'pipe'],
  });
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  let stderr = '';
  let listening = false;
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`server-everything ${mode} did not start:\n${stderr}`));
    }, START_TIMEOUT_MS);
    const onExit = (code: number | null) => {
      clearTimeout(timer);
      reject(new Error(`server-everything ${mode} exited with ${String(code)}:\n${stderr}`));
    };
    child.once('exit', onExit);
    child.stderr.on('data', (chunk: Buffer) => {
      // The SSE server logs every message on stderr: keep reading (a full pipe would block it).
      stderr = (stderr + chunk.toString('utf8')).slice(-20_000);
      const match = listening ? null : /LISTENING (\S+) (\d+)/.exec(stderr);
      if (match === null) return;
      listening = true;
      clearTimeout(timer);
      child.off('exit', onExit);
      const address = match[1] as string;
      const port = Number(match[2]);
      resolve({
        mode,
        address,
        port,
        url: `http://127.0.0.1:${port}/${mode === 'sse' ? 'sse' : 'mcp'}`,
        child,
        stop: async () => {
          if (child.exitCode === null && child.signalCode === null) {
            child.stdin?.end();
            child.kill('SIGTERM');
          }
          await exited;
        },
      });
    });
  });
}
