/**
 * @modelcontextprotocol/server-everything through mcp-normalizer, end to end, compared with the
 * same server called directly in the same run.
 *
 * - Downstream: server-everything over stdio (spawned by mcp-normalizer from the test config),
 *   over Streamable HTTP and over SSE (its own express entry points, bound to 127.0.0.1 by
 *   test/interop/everything-loopback.mjs).
 * - Upstream: an SDK client over stdio and over Streamable HTTP (`serve --http`).
 * - Every tool that server-everything lists to a client without capabilities is called directly
 *   and through the product, and test/interop/envelope-oracle.ts checks field by field that the
 *   envelope carries the raw result. A tool is left out only when it needs a client capability
 *   (P8: mcp-normalizer advertises none), and the suite checks that list against the server's
 *   own listing, so a tool added by a new version cannot go untested.
 *
 * Network: 127.0.0.1 only. `gzip-file-as-resource` gets `data:` URIs (its default fetches a
 * public URL) and an `ftp:` URL that it rejects before fetching anything.
 */
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE_OUTPUT_SCHEMAS, typedEnvelopeSchema } from '../../src/upstream/envelope-schema.js';
import { assertEnvelopeCarries, createMask } from './envelope-oracle.js';
import type { RawResult } from './envelope-oracle.js';
import type { DownstreamSpec, Product, Upstream } from './product.js';
import { startProduct, writeProductConfig } from './product.js';
import type { DirectClient, LoopbackServer } from './real-servers.js';
import {
  CALL_TIMEOUT_MS,
  REAL_PACKAGES,
  START_TIMEOUT_MS,
  callRaw,
  connectStdio,
  connectUrl,
  startLoopback,
  stdioServer,
  tempDir,
} from './real-servers.js';
import { rmSync } from 'node:fs';

const TEST_TIMEOUT_MS = 2 * CALL_TIMEOUT_MS;

/** What a tool needs from its client, when it needs anything. */
type Capability = 'roots' | 'sampling' | 'elicitation' | 'tasks';

/**
 * Tools listed to a client WITHOUT capabilities that the cases below do not call plainly: only
 * `simulate-research-query`, whose listing says `execution.taskSupport: "required"` (a client
 * must send task-augmented calls). mcp-normalizer runs it as a task (Q6), checked below.
 */
const LISTED_BUT_NEEDS: Readonly<Record<string, Capability>> = { 'simulate-research-query': 'tasks' };

/**
 * Tools server-everything registers only for a client that advertises the capability: never
 * listed to mcp-normalizer's downstream client (P8), nor to our direct one.
 */
const LISTED_ONLY_WITH: Readonly<Record<string, Capability>> = {
  'get-roots-list': 'roots',
  'trigger-elicitation-request': 'elicitation',
  'trigger-url-elicitation': 'elicitation',
  'trigger-sampling-request': 'sampling',
  'trigger-sampling-request-async': 'sampling',
  'trigger-elicitation-request-async': 'elicitation',
};

/** What a case's raw result must show, so that a case cannot silently stop proving its point. */
type Shows =
  'text' | 'json-text' | 'structured' | 'image' | 'text-resource' | 'blob-resource' | 'link' | 'error';

interface Case {
  readonly tool: string;
  readonly variant: string;
  readonly args: Record<string, unknown>;
  /** The contract rule the case mainly exercises. */
  readonly rule: string;
  readonly shows: readonly Shows[];
}

const GZIP_INPUT = 'hello, gzip\n'.repeat(4);
const DATA_URI = `data:text/plain;base64,${Buffer.from(GZIP_INPUT).toString('base64')}`;

/** Every tool server-everything lists to a client without capabilities, minus LISTED_BUT_NEEDS. */
const CASES: readonly Case[] = [
  {
    tool: 'echo',
    variant: 'text',
    args: { message: 'hello through the gateway' },
    rule: 'N3',
    shows: ['text'],
  },
  {
    tool: 'get-annotated-message',
    variant: 'error with image',
    args: { messageType: 'error', includeImage: true },
    rule: 'N4',
    shows: ['text', 'image'],
  },
  {
    tool: 'get-annotated-message',
    variant: 'success',
    args: { messageType: 'success' },
    rule: 'N3',
    shows: ['text'],
  },
  {
    tool: 'get-annotated-message',
    variant: 'debug',
    args: { messageType: 'debug' },
    rule: 'N3',
    shows: ['text'],
  },
  { tool: 'get-env', variant: 'JSON text', args: {}, rule: 'N3', shows: ['json-text'] },
  {
    tool: 'get-resource-links',
    variant: 'four links',
    args: { count: 4 },
    rule: 'N4',
    shows: ['text', 'link'],
  },
  {
    tool: 'get-resource-reference',
    variant: 'text resource',
    args: { resourceType: 'Text', resourceId: 1 },
    rule: 'N4',
    shows: ['text', 'text-resource'],
  },
  {
    tool: 'get-resource-reference',
    variant: 'blob resource',
    args: { resourceType: 'Blob', resourceId: 2 },
    rule: 'N4',
    shows: ['text', 'blob-resource'],
  },
  {
    tool: 'get-resource-reference',
    variant: 'invalid id',
    args: { resourceType: 'Text', resourceId: 0 },
    rule: 'N7',
    shows: ['error'],
  },
  {
    tool: 'get-structured-content',
    variant: 'structured with equal JSON text',
    args: { location: 'Chicago' },
    rule: 'N1',
    shows: ['structured', 'json-text'],
  },
  { tool: 'get-sum', variant: 'text', args: { a: 2, b: 40 }, rule: 'N3', shows: ['text'] },
  { tool: 'get-tiny-image', variant: 'image between texts', args: {}, rule: 'N4', shows: ['text', 'image'] },
  {
    tool: 'gzip-file-as-resource',
    variant: 'embedded blob',
    args: { name: 'hello.txt.gz', data: DATA_URI, outputType: 'resource' },
    rule: 'N4',
    shows: ['blob-resource'],
  },
  {
    tool: 'gzip-file-as-resource',
    variant: 'resource link',
    args: { name: 'linked.txt.gz', data: DATA_URI, outputType: 'resourceLink' },
    rule: 'N4',
    shows: ['link'],
  },
  {
    tool: 'gzip-file-as-resource',
    variant: 'unsupported URL',
    args: { name: 'never.gz', data: 'ftp://127.0.0.1/never-fetched', outputType: 'resource' },
    rule: 'N7',
    shows: ['error'],
  },
  // The toggles start and stop per-session timers: on, then off, leaves nothing running.
  { tool: 'toggle-simulated-logging', variant: 'on', args: {}, rule: 'N3', shows: ['text'] },
  { tool: 'toggle-simulated-logging', variant: 'off', args: {}, rule: 'N3', shows: ['text'] },
  { tool: 'toggle-subscriber-updates', variant: 'on', args: {}, rule: 'N3', shows: ['text'] },
  { tool: 'toggle-subscriber-updates', variant: 'off', args: {}, rule: 'N3', shows: ['text'] },
  {
    tool: 'trigger-long-running-operation',
    variant: 'short',
    args: { duration: 0.2, steps: 2 },
    rule: 'N3',
    shows: ['text'],
  },
];

function blocks(raw: RawResult): Record<string, unknown>[] {
  return Array.isArray(raw['content']) ? (raw['content'] as Record<string, unknown>[]) : [];
}

function parsesAsJson(text: unknown): boolean {
  try {
    JSON.parse(String(text));
    return true;
  } catch {
    return false;
  }
}

const SHOWN: Readonly<Record<Shows, (raw: RawResult) => boolean>> = {
  text: (raw) => blocks(raw).some((b) => b['type'] === 'text' && !parsesAsJson(b['text'])),
  'json-text': (raw) => blocks(raw).some((b) => b['type'] === 'text' && parsesAsJson(b['text'])),
  structured: (raw) => typeof raw['structuredContent'] === 'object' && raw['structuredContent'] !== null,
  image: (raw) => blocks(raw).some((b) => b['type'] === 'image'),
  'text-resource': (raw) =>
    blocks(raw).some(
      (b) =>
        b['type'] === 'resource' && typeof (b['resource'] as Record<string, unknown>)['text'] === 'string',
    ),
  'blob-resource': (raw) =>
    blocks(raw).some(
      (b) =>
        b['type'] === 'resource' && typeof (b['resource'] as Record<string, unknown>)['blob'] === 'string',
    ),
  link: (raw) => blocks(raw).some((b) => b['type'] === 'resource_link'),
  error: (raw) => raw['isError'] === true,
};

/** The three ways mcp-normalizer reaches server-everything, by their server key in the config. */
const TRANSPORTS = ['ev', 'evhttp', 'evsse'] as const;
type TransportKey = (typeof TRANSPORTS)[number];
const TRANSPORT_NAMES: Readonly<Record<TransportKey, string>> = {
  ev: 'stdio',
  evhttp: 'Streamable HTTP',
  evsse: 'SSE',
};

const everything = () => stdioServer(REAL_PACKAGES.everything, ['stdio']);
const mask = createMask();

let http: LoopbackServer;
let sse: LoopbackServer;
let configDir: string;

beforeAll(async () => {
  [http, sse] = await Promise.all([startLoopback('streamableHttp'), startLoopback('sse')]);
  configDir = tempDir('everything');
}, START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([http?.stop(), sse?.stop()]);
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

function productServers(): Record<TransportKey, DownstreamSpec> {
  return {
    ev: everything(),
    evhttp: { url: http.url, transport: 'streamable-http' },
    evsse: { url: sse.url, transport: 'sse' },
  };
}

async function connectDirect(key: TransportKey): Promise<DirectClient> {
  if (key === 'ev') return connectStdio(everything());
  return key === 'evhttp' ? connectUrl(http.url, 'streamable-http') : connectUrl(sse.url, 'sse');
}

describe('server-everything behind the loopback wrapper', () => {
  it('its HTTP and SSE entry points listen on 127.0.0.1 only', () => {
    expect(http.address).toBe('127.0.0.1');
    expect(sse.address).toBe('127.0.0.1');
  });

  it(
    'P8: the tools that need roots, sampling or elicitation are listed only to a client that advertises them',
    async () => {
      const bare = await connectStdio(everything());
      const full = await connectStdio(
        everything(),
        {
          roots: { listChanged: true },
          sampling: {},
          elicitation: { form: {}, url: {} },
          tasks: { requests: { sampling: { createMessage: {} }, elicitation: { create: {} } } },
        },
        // server-everything asks a roots-capable client for its roots right after initialize.
        (client) => client.setRequestHandler(ListRootsRequestSchema, () => ({ roots: [] })),
      );
      try {
        const bareNames = (await bare.client.listTools()).tools.map((tool) => tool.name);
        const fullNames = (await full.client.listTools()).tools.map((tool) => tool.name);
        expect(fullNames.filter((name) => !bareNames.includes(name)).sort()).toEqual(
          Object.keys(LISTED_ONLY_WITH).sort(),
        );
        expect(bareNames.filter((name) => !fullNames.includes(name))).toEqual([]);
      } finally {
        await Promise.all([bare.close(), full.close()]);
      }
    },
    TEST_TIMEOUT_MS,
  );
});

describe.each(['stdio', 'http'] as const)(
  'server-everything through mcp-normalizer, %s upstream',
  (upstream: Upstream) => {
    let product: Product;
    let exposed: Map<string, Tool>;
    const direct = new Map<TransportKey, DirectClient>();
    const listed = new Map<TransportKey, Tool[]>();

    beforeAll(async () => {
      const config = writeProductConfig(configDir, productServers());
      const [started, ...clients] = await Promise.all([
        startProduct(upstream, config),
        ...TRANSPORTS.map((key) => connectDirect(key)),
      ]);
      product = started;
      TRANSPORTS.forEach((key, i) => direct.set(key, clients[i] as DirectClient));
      for (const key of TRANSPORTS) {
        listed.set(key, (await (direct.get(key) as DirectClient).client.listTools()).tools);
      }
      const names = TRANSPORTS.flatMap((key) => (listed.get(key) ?? []).map((tool) => `${key}_${tool.name}`));
      exposed = await product.waitForTools(names);
    }, START_TIMEOUT_MS);

    afterAll(async () => {
      await Promise.all([...direct.values()].map((client) => client.close()));
      await product?.close();
    });

    const client = (key: TransportKey) => (direct.get(key) as DirectClient).client;

    it.each(TRANSPORTS)(
      'P8: every tool listed over %s is exercised below, or needs a client capability its listing shows',
      (key) => {
        const tools = listed.get(key) ?? [];
        const names = tools.map((tool) => tool.name).sort();
        const exercised = new Set(CASES.map((c) => c.tool));
        expect(names).toEqual([...new Set([...exercised, ...Object.keys(LISTED_BUT_NEEDS)])].sort());
        for (const tool of tools) {
          const needsTasks =
            (tool.execution as { taskSupport?: string } | undefined)?.taskSupport === 'required';
          expect(LISTED_BUT_NEEDS[tool.name] === 'tasks', `${tool.name}: needs tasks per its listing`).toBe(
            needsTasks,
          );
        }
      },
    );

    it.each(TRANSPORTS)(
      'T6/U1: over %s, mcp-normalizer lists each tool with its name prefixed and its schema, title and annotations kept',
      (key) => {
        // Q6: the task-only tool is served too (the gateway runs it as a task).
        const servable = listed.get(key) ?? [];
        for (const tool of servable) {
          const mine = exposed.get(`${key}_${tool.name}`);
          expect(mine, `${key}_${tool.name} is listed`).toBeDefined();
          expect(mine?.inputSchema, `${tool.name}: inputSchema`).toEqual(tool.inputSchema);
          expect(mine?.title, `${tool.name}: title`).toBe(tool.title);
          expect(mine?.description, `${tool.name}: description`).toBe(tool.description);
          expect(mine?.annotations, `${tool.name}: annotations`).toEqual(tool.annotations);
          expect(mine?.outputSchema, `${tool.name}: outputSchema is the (typed, T14) envelope`).toEqual(
            (tool.outputSchema !== undefined
              ? typedEnvelopeSchema('results', tool.outputSchema)
              : undefined) ?? ENVELOPE_OUTPUT_SCHEMAS.results,
          );
        }
        const prefixed = [...exposed.keys()].filter((name) => name.startsWith(`${key}_`));
        expect(prefixed.length).toBe(servable.length);
      },
    );

    const rows = TRANSPORTS.flatMap((key) =>
      CASES.map((c) => [c.rule, `${c.tool} (${c.variant})`, TRANSPORT_NAMES[key], { ...c, key }] as const),
    );

    it.each(rows)(
      '%s: %s over %s — the envelope carries everything the direct result had',
      async (_rule, _label, _over, { key, tool, args, shows }) => {
        const raw = await callRaw(client(key), tool, args);
        for (const what of shows) expect(SHOWN[what](raw), `the raw result shows ${what}`).toBe(true);
        const proxied = await product.call(`${key}_${tool}`, args);
        assertEnvelopeCarries(raw, proxied, { server: key, tool, mask });
      },
      TEST_TIMEOUT_MS,
    );

    it(
      'Q6: the task-only simulate-research-query fails directly as a plain call, and through mcp-normalizer (which runs it as a task) returns its normalized report',
      async () => {
        const raw = await callRaw(client('ev'), 'simulate-research-query', { topic: 'interop' });
        expect(raw['isError']).toBe(true);
        expect(exposed.get('ev_simulate-research-query')?.execution).toBeUndefined();
        const proxied = await product.call('ev_simulate-research-query', { topic: 'interop' });
        const envelope = proxied.structuredContent as {
          results: unknown;
          meta_data: Record<string, unknown>;
        };
        expect(proxied.isError).toBe(false);
        expect(envelope.results).toEqual(expect.stringContaining('# Research Report: interop'));
        expect(envelope.meta_data).toMatchObject({ server: 'ev', tool: 'simulate-research-query' });
      },
      TEST_TIMEOUT_MS,
    );

    it.each(TRANSPORTS)(
      'T8: over %s, arguments the schema rejects never reach server-everything: invalid_arguments with the path',
      async (key) => {
        const raw = await callRaw(client(key), 'get-sum', { a: 'two', b: 40 });
        expect(raw['isError'], 'the server itself rejects them too').toBe(true);
        const proxied = await product.call(`${key}_get-sum`, { a: 'two', b: 40 });
        const envelope = proxied.structuredContent as { meta_data: Record<string, unknown> };
        expect(proxied.isError).toBe(true);
        expect(envelope.meta_data['error_type']).toBe('invalid_arguments');
        expect(envelope.meta_data['error_data']).toMatchObject({ issues: [{ path: '/a' }] });
      },
      TEST_TIMEOUT_MS,
    );

    it.each(TRANSPORTS)(
      'P3: over %s, progress from trigger-long-running-operation reaches the upstream client',
      async (key) => {
        const seen: number[] = [];
        const proxied = await product.call(
          `${key}_trigger-long-running-operation`,
          { duration: 0.6, steps: 3 },
          (progress) => seen.push(progress),
        );
        expect(proxied.isError).toBeFalsy();
        // The SDK client may drop the last notification when it arrives with the response; the
        // first ones come 200 ms before it.
        expect(seen.length).toBeGreaterThanOrEqual(1);
        expect(seen.every((p) => p >= 1 && p <= 3)).toBe(true);
      },
      TEST_TIMEOUT_MS,
    );
  },
);
