/**
 * The targets, each a real child process the bench client talks to through the SDK `Client`:
 * the downstream called directly, the bare passthrough (bench/passthrough.ts), mcp-normalizer
 * (`dist/src/cli/main.js serve`) and, over HTTP only, supergateway (the npm package most users
 * put in front of a stdio server to serve it over Streamable HTTP; stateful, one child per
 * session, its default log level). Over stdio (the SDK's stdio client transport spawns the
 * target) or Streamable HTTP (we spawn it and read its URL from its output).
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import type { Stream } from 'node:stream';
import { dirname, join } from 'node:path';
import { performance } from 'node:perf_hooks';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import type { FetchLike } from '@modelcontextprotocol/sdk/shared/transport.js';
import { ListToolsResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { freePort } from '../fixtures/servers/redis.js';
import { hopsImport } from './hops.js';

/** Which program answers the bench client. */
export type TargetKind = 'direct' | 'passthrough' | 'normalizer' | 'supergateway';
/** How the bench client reaches it. */
export type Wire = 'stdio' | 'http';

/** What to start. */
export interface TargetSpec {
  readonly kind: TargetKind;
  readonly wire: Wire;
  /** Downstream servers behind the target (direct and passthrough take exactly 1). */
  readonly servers: number;
  /** Extra tools per downstream server (each also has `echo` and `big`). */
  readonly tools: number;
  /** Directory for `--cpu-prof` profiles of this target's process; none when undefined. */
  readonly cpuProfDir?: string;
  /** Directory for `--hops` stamps of this target's pipes (hops-preload.ts); none when undefined. */
  readonly hopsDir?: string;
  /** Extra per-server settings in the normalizer's config (e.g. `concurrency: 64`); none by default. */
  readonly serverSettings?: Readonly<Record<string, number | string | boolean>>;
  /**
   * The passthrough's downstream in a session of its own (`setsid`), as mcp-normalizer spawns
   * every stdio server (P5's process group); by default it shares the passthrough's session.
   */
  readonly childSession?: boolean;
  /** The passthrough's calls carry a progress token, as P3's do (`passthrough-server.ts`). */
  readonly progress?: boolean;
}

/** A started target, connected and with its tool names discovered. */
export interface Target {
  readonly spec: TargetSpec;
  readonly client: Client;
  /** The target process (for a proxy: the proxy itself, its children excluded). */
  readonly pid: number;
  /** Exposed names of the first downstream's `echo` and `big` tools. */
  readonly echoTool: string;
  readonly bigTool: string;
  /** Every exposed `echo` tool, one per downstream (for the normalizer: its N servers). */
  readonly echoTools: readonly string[];
  /** Tools listed by the first complete tools/list. */
  readonly toolCount: number;
  /** Spawn → first complete tools/list, in ms. */
  readonly coldStartMs: number;
  /** The last few KB the target wrote to stderr (for error messages). */
  stderrTail(): string;
  close(): Promise<void>;
}

/** The repository root: the nearest folder up from here holding package.json. */
export const ROOT = findRoot(import.meta.dirname);

function findRoot(from: string): string {
  for (let dir = from; dir !== dirname(dir); dir = dirname(dir)) {
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  throw new Error(`Expected a package.json above \`${from}\``);
}

const ECHO_SERVER = join(ROOT, 'dist/bench/servers/echo.js');
const PASSTHROUGH = join(ROOT, 'dist/bench/passthrough.js');
const NORMALIZER = join(ROOT, 'dist/src/cli/main.js');
const SUPERGATEWAY = join(ROOT, 'node_modules/supergateway/dist/index.js');

/** Whether `npm run build` produced the baselines (the normalizer is checked when launched). */
export function missingBuild(): string[] {
  return [ECHO_SERVER, PASSTHROUGH].filter((file) => !existsSync(file));
}

/** Expected tool count behind a spec: every server lists echo + big + its extra tools. */
export function expectedTools(spec: TargetSpec): number {
  return spec.servers * (2 + spec.tools);
}

function downstreamArgs(tools: number, hopsDir?: string): string[] {
  // `--hops`: the downstream is stamped too, for its own time on each target's requests.
  return [...(hopsDir === undefined ? [] : hopsImport(hopsDir)), ECHO_SERVER, '--tools', String(tools)];
}

/**
 * util-linux's `setsid`, which puts the program it runs in a session of its own (`--wait`: when
 * it has to fork to do so, it stays and passes the exit status on).
 */
function setsidProgram(): string {
  const found = (process.env['PATH'] ?? '')
    .split(':')
    .map((dir) => join(dir, 'setsid'))
    .find((file) => file.startsWith('/') && existsSync(file));
  if (found === undefined) {
    throw new Error(
      'Expected the `setsid` program (util-linux) on PATH for `--child-session`; install util-linux, or run without the flag',
    );
  }
  return found;
}

/** A normalizer config with `servers` copies of the bench server (keys s00, s01, ...). */
function writeNormalizerConfig(spec: TargetSpec): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-'));
  // Defaults everywhere: the bench measures what a user gets.
  const lines = ['# generated by bench/targets.ts', 'servers:'];
  for (let i = 0; i < spec.servers; i += 1) {
    lines.push(`  s${String(i).padStart(2, '0')}:`);
    lines.push(`    command: ${JSON.stringify(process.execPath)}`);
    lines.push(`    args: ${JSON.stringify(downstreamArgs(spec.tools, spec.hopsDir))}`);
    for (const [key, value] of Object.entries(spec.serverSettings ?? {})) {
      lines.push(`    ${key}: ${JSON.stringify(value)}`);
    }
  }
  const file = join(dir, 'bench.yaml');
  writeFileSync(file, `${lines.join('\n')}\n`);
  return file;
}

/** node arguments that start the target program (`port`: supergateway's, which takes no 0). */
function targetArgs(spec: TargetSpec, port: number): string[] {
  const prof = [
    ...(spec.cpuProfDir === undefined ? [] : ['--cpu-prof', '--cpu-prof-dir', spec.cpuProfDir]),
    ...(spec.hopsDir === undefined ? [] : hopsImport(spec.hopsDir)),
  ];
  const http = spec.wire === 'http';
  if (spec.kind !== 'normalizer' && spec.servers !== 1) {
    throw new Error(`Expected 1 server behind \`${spec.kind}\`, got ${spec.servers}`);
  }
  switch (spec.kind) {
    case 'direct':
      return [...prof, ...downstreamArgs(spec.tools), ...(http ? ['--http'] : [])];
    case 'passthrough':
      return [
        ...prof,
        PASSTHROUGH,
        ...(http ? ['--http'] : []),
        ...(spec.progress === true ? ['--progress'] : []),
        '--',
        ...(spec.childSession === true ? [setsidProgram(), '--wait'] : []),
        process.execPath,
        ...downstreamArgs(spec.tools, spec.hopsDir),
      ];
    case 'normalizer': {
      if (!existsSync(NORMALIZER)) throw new Error(`mcp-normalizer is not built: no ${NORMALIZER}`);
      const config = writeNormalizerConfig(spec);
      return [...prof, NORMALIZER, 'serve', '--config', config, ...(http ? ['--http', '--port', '0'] : [])];
    }
    case 'supergateway': {
      if (!http) throw new Error('supergateway serves Streamable HTTP only');
      const downstream = [process.execPath, ...downstreamArgs(spec.tools)].map((arg) => JSON.stringify(arg));
      return [
        ...prof,
        SUPERGATEWAY,
        '--stdio',
        downstream.join(' '),
        '--outputTransport',
        'streamableHttp',
        '--stateful',
        '--port',
        String(port),
      ];
    }
  }
}

/** Keeps the last `limit` characters of a stream, draining it so the child never blocks. */
function tail(stream: Stream | null, limit = 4096): () => string {
  let text = '';
  stream?.on('data', (chunk: Buffer) => {
    text = (text + chunk.toString('utf8')).slice(-limit);
  });
  return () => text;
}

const URL_PATTERN = /https?:\/\/[^\s"'<>]+?:\d+\/mcp\b/;

/** Resolves with the first `http://host:port/mcp` the child prints (stderr or stdout). */
function awaitUrl(child: ChildProcess, timeoutMs: number): Promise<string> {
  return new Promise((resolve, reject) => {
    let seen = '';
    const timer = setTimeout(
      () => reject(new Error(`no /mcp URL within ${timeoutMs} ms:\n${seen}`)),
      timeoutMs,
    );
    const look = (chunk: Buffer): void => {
      // Match before trimming: the URL may sit at the start of one large chunk (a tool table).
      const text = seen + chunk.toString('utf8');
      seen = text.slice(-4096);
      const match = URL_PATTERN.exec(text);
      if (match) {
        clearTimeout(timer);
        resolve(match[0].replace('//localhost:', '//127.0.0.1:'));
      }
    };
    child.stderr?.on('data', look);
    child.stdout?.on('data', look);
    child.once('exit', (code) => {
      clearTimeout(timer);
      reject(new Error(`exited with ${code} before printing its URL:\n${seen}`));
    });
  });
}

/** SIGTERM, then SIGKILL if the child is still there after `graceMs`. */
async function stop(child: ChildProcess, graceMs = 3000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  child.stdin?.end();
  child.kill('SIGTERM');
  const timer = setTimeout(() => child.kill('SIGKILL'), graceMs);
  await exited;
  clearTimeout(timer);
}

/** tools/list until it holds `expected` tools (a proxy may answer before every server is up). */
async function firstCompleteList(client: Client, expected: number, deadline: number): Promise<string[]> {
  for (;;) {
    const { tools } = await client.request({ method: 'tools/list' }, ListToolsResultSchema, {
      timeout: 30_000,
    });
    if (tools.length >= expected) return tools.map((tool) => tool.name);
    if (performance.now() > deadline) {
      throw new Error(`tools/list stuck at ${tools.length} of ${expected} tools`);
    }
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

function pick(names: readonly string[], tool: string): string[] {
  return names.filter((name) => name === tool || name.endsWith(`_${tool}`));
}

/**
 * Start a target, connect the SDK client, wait for its complete tool list.
 * @example const target = await launch({ kind: 'passthrough', wire: 'stdio', servers: 1, tools: 0 });
 */
export async function launch(spec: TargetSpec, startTimeoutMs = 60_000): Promise<Target> {
  const client = new Client({ name: 'bench-client', version: '1.0.0' });
  const args = targetArgs(spec, spec.kind === 'supergateway' ? await freePort() : 0);
  const started = performance.now();
  const process_ = spec.wire === 'stdio' ? startStdio(client, args) : startHttp(client, args, startTimeoutMs);
  try {
    await process_.connect(startTimeoutMs);
    const names = await firstCompleteList(client, expectedTools(spec), started + startTimeoutMs);
    const coldStartMs = performance.now() - started;
    const echoTools = pick(names, 'echo');
    const [echoTool] = echoTools;
    const [bigTool] = pick(names, 'big');
    if (echoTool === undefined || bigTool === undefined) {
      throw new Error(`no echo/big tool among ${names.slice(0, 5).join(', ')}…`);
    }
    return {
      spec,
      client,
      pid: process_.pid(),
      echoTool,
      bigTool,
      echoTools,
      toolCount: names.length,
      coldStartMs,
      stderrTail: process_.stderrTail,
      close: process_.close,
    };
  } catch (error) {
    await process_.close().catch(() => undefined);
    throw new Error(`${spec.kind}/${spec.wire}: ${String(error)}\n--- stderr ---\n${process_.stderrTail()}`, {
      cause: error,
    });
  }
}

/** A target process being started: connect the client, then its pid, stderr and a way to stop it. */
interface Started {
  connect(timeoutMs: number): Promise<void>;
  pid(): number;
  stderrTail(): string;
  close(): Promise<void>;
}

/** The SDK's stdio client transport spawns the target and owns its stdin/stdout. */
function startStdio(client: Client, args: string[]): Started {
  const transport = new StdioClientTransport({ command: process.execPath, args, stderr: 'pipe' });
  return {
    connect: (timeout) => client.connect(transport, { timeout }),
    pid: () => transport.pid ?? -1,
    stderrTail: tail(transport.stderr),
    close: async () => {
      const pid = transport.pid;
      await client.close();
      // Its exit handlers (e.g. `--hops` writing its stamps) have run once it is gone.
      if (pid !== null) await waitForExit(pid, 5_000);
    },
  };
}

/** Resolves once process `pid` is gone, or after `limitMs` (polled every 20 ms). */
async function waitForExit(pid: number, limitMs: number): Promise<void> {
  for (let waited = 0; waited < limitMs; waited += 20) {
    try {
      process.kill(pid, 0);
    } catch {
      return;
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/**
 * fetch for the bench client's POSTs without the transport's one long-lived AbortSignal. The SDK
 * (1.32.2) passes that same signal to every fetch, and each fetch hangs an abort listener on it
 * that only garbage collection frees: over thousands of calls the client slows down and Node
 * warns (MaxListenersExceededWarning). The bench never aborts a POST; GET (the SSE stream) and
 * DELETE keep the signal, so closing still ends the stream.
 */
const fetchWithoutSharedSignal: FetchLike = (url, init) => {
  if (init?.method !== 'POST') return fetch(url, init);
  const { signal: _shared, ...rest } = init;
  return fetch(url, rest);
};

/** We spawn the target, read its URL from its output, and connect over Streamable HTTP. */
function startHttp(client: Client, args: string[], timeoutMs: number): Started {
  // stdin stays an open pipe: a proxy may treat end-of-stdin as its cue to shut down (P5).
  const child = spawn(process.execPath, args, { stdio: ['pipe', 'pipe', 'pipe'] });
  const url = awaitUrl(child, timeoutMs);
  url.catch(() => undefined);
  const stderrTail = tail(child.stderr);
  tail(child.stdout);
  return {
    connect: async (timeout) =>
      client.connect(
        new StreamableHTTPClientTransport(new URL(await url), { fetch: fetchWithoutSharedSignal }),
        { timeout },
      ),
    pid: () => child.pid ?? -1,
    stderrTail,
    close: async () => {
      await client.close().catch(() => undefined);
      await stop(child);
    },
  };
}
