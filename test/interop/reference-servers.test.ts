/**
 * server-filesystem, server-memory and server-sequential-thinking through mcp-normalizer (stdio
 * upstream, an SDK client), compared with the same servers called directly in the same run.
 *
 * Each side gets its own state with the same content: two identical temp folders for
 * server-filesystem, two memory files for server-memory (MEMORY_FILE_PATH, never the default
 * next to the package), two sequential-thinking processes. Every tool of every server is called
 * in the same order on both sides, so the two answer alike up to their folder names, which the
 * oracle's mask replaces. Destructive tools get the explicit_action their listing asks for (T7).
 */
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { ListRootsRequestSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE_OUTPUT_SCHEMAS, typedEnvelopeSchema } from '../../src/upstream/envelope-schema.js';
import { assertEnvelopeCarries, createMask } from './envelope-oracle.js';
import type { Product } from './product.js';
import { startProduct, writeProductConfig } from './product.js';
import type { DirectClient, StdioSpec } from './real-servers.js';
import {
  BIG_FILE_BYTES,
  CALL_TIMEOUT_MS,
  REAL_PACKAGES,
  START_TIMEOUT_MS,
  callRaw,
  connectStdio,
  filesystemRoot,
  installed,
  pinnedVersion,
  stdioServer,
  tempDir,
} from './real-servers.js';

const TEST_TIMEOUT_MS = 2 * CALL_TIMEOUT_MS;
const EXPLICIT = 'explicit_action';

/** One side's state: the folder server-filesystem serves and the memory file. */
interface Side {
  readonly root: string;
  readonly memoryFile: string;
}

const SERVERS = ['fs', 'memory', 'thinking'] as const;
type ServerKey = (typeof SERVERS)[number];

function specs(side: Side): Record<ServerKey, StdioSpec> {
  return {
    fs: stdioServer(REAL_PACKAGES.filesystem, [side.root]),
    memory: stdioServer(REAL_PACKAGES.memory, [], { MEMORY_FILE_PATH: side.memoryFile }),
    // Its boxed thought log goes to stderr; off keeps the product's log readable.
    thinking: stdioServer(REAL_PACKAGES.thinking, [], { DISABLE_THOUGHT_LOGGING: 'true' }),
  };
}

interface Case {
  readonly server: ServerKey;
  readonly tool: string;
  readonly variant: string;
  readonly rule: string;
  readonly args: (side: Side) => Record<string, unknown>;
}

const at = (side: Side, ...path: string[]) => join(side.root, ...path);

/** In call order: later cases see the state earlier ones made, on both sides alike. */
const CASES: readonly Case[] = [
  { server: 'fs', tool: 'list_allowed_directories', variant: 'text', rule: 'N1', args: () => ({}) },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'text file',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'hello.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'JSON file, wrapped in {content}',
    rule: 'N2',
    args: (s) => ({ path: at(s, 'data.json') }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'head',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'hello.txt'), head: 1 }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: `${BIG_FILE_BYTES} bytes`,
    rule: 'N9',
    args: (s) => ({ path: at(s, 'big.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_file',
    variant: 'deprecated alias',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'hello.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_media_file',
    variant: 'PNG',
    rule: 'N4',
    args: (s) => ({ path: at(s, 'pixel.png') }),
  },
  {
    server: 'fs',
    tool: 'read_multiple_files',
    variant: 'one missing',
    rule: 'N1',
    args: (s) => ({ paths: [at(s, 'hello.txt'), at(s, 'data.json'), at(s, 'missing.txt')] }),
  },
  { server: 'fs', tool: 'list_directory', variant: 'root', rule: 'N1', args: (s) => ({ path: s.root }) },
  {
    server: 'fs',
    tool: 'list_directory_with_sizes',
    variant: 'root',
    rule: 'N1',
    args: (s) => ({ path: s.root }),
  },
  {
    server: 'fs',
    tool: 'directory_tree',
    variant: 'JSON text, wrapped',
    rule: 'N2',
    args: (s) => ({ path: s.root }),
  },
  {
    server: 'fs',
    tool: 'search_files',
    variant: '*.txt',
    rule: 'N1',
    args: (s) => ({ path: s.root, pattern: '*.txt' }),
  },
  {
    server: 'fs',
    tool: 'get_file_info',
    variant: 'file',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'sub', 'note.md') }),
  },
  {
    server: 'fs',
    tool: 'create_directory',
    variant: 'new folder',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'made') }),
  },
  {
    server: 'fs',
    tool: 'write_file',
    variant: 'gated',
    rule: 'T7',
    args: (s) => ({ path: at(s, 'made', 'new.txt'), content: 'first line\nsecond line\n' }),
  },
  {
    server: 'fs',
    tool: 'edit_file',
    variant: 'dry run',
    rule: 'T7',
    args: (s) => ({
      path: at(s, 'made', 'new.txt'),
      edits: [{ oldText: 'second', newText: '2nd' }],
      dryRun: true,
    }),
  },
  {
    server: 'fs',
    tool: 'edit_file',
    variant: 'applied',
    rule: 'T7',
    args: (s) => ({ path: at(s, 'made', 'new.txt'), edits: [{ oldText: 'second', newText: '2nd' }] }),
  },
  {
    server: 'fs',
    tool: 'move_file',
    variant: 'gated',
    rule: 'T7',
    args: (s) => ({ source: at(s, 'made', 'new.txt'), destination: at(s, 'made', 'moved.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'moved file',
    rule: 'N1',
    args: (s) => ({ path: at(s, 'made', 'moved.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'missing file',
    rule: 'N7',
    args: (s) => ({ path: at(s, 'missing.txt') }),
  },
  {
    server: 'fs',
    tool: 'read_text_file',
    variant: 'outside the folder',
    rule: 'N7',
    args: () => ({ path: '/etc/hostname' }),
  },
  {
    server: 'memory',
    tool: 'create_entities',
    variant: '{entities} beside the bare array',
    rule: 'N2',
    args: () => ({
      entities: [
        { name: 'Ada', entityType: 'person', observations: ['wrote the first program'] },
        { name: 'Engine', entityType: 'machine', observations: [] },
      ],
    }),
  },
  {
    server: 'memory',
    tool: 'create_relations',
    variant: 'one relation',
    rule: 'N2',
    args: () => ({ relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] }),
  },
  {
    server: 'memory',
    tool: 'add_observations',
    variant: '{results} payload',
    rule: 'N6',
    args: () => ({ observations: [{ entityName: 'Ada', contents: ['born 1815'] }] }),
  },
  {
    server: 'memory',
    tool: 'add_observations',
    variant: 'unknown entity',
    rule: 'N7',
    args: () => ({ observations: [{ entityName: 'Nobody', contents: ['x'] }] }),
  },
  { server: 'memory', tool: 'read_graph', variant: 'whole graph', rule: 'N1', args: () => ({}) },
  {
    server: 'memory',
    tool: 'search_nodes',
    variant: 'by observation',
    rule: 'N1',
    args: () => ({ query: '1815' }),
  },
  {
    server: 'memory',
    tool: 'open_nodes',
    variant: 'by name',
    rule: 'N1',
    args: () => ({ names: ['Engine'] }),
  },
  {
    server: 'memory',
    tool: 'delete_observations',
    variant: '{success, message}',
    rule: 'N8',
    args: () => ({ deletions: [{ entityName: 'Ada', observations: ['born 1815'] }] }),
  },
  {
    server: 'memory',
    tool: 'delete_relations',
    variant: '{success, message}',
    rule: 'N8',
    args: () => ({ relations: [{ from: 'Ada', to: 'Engine', relationType: 'programmed' }] }),
  },
  {
    server: 'memory',
    tool: 'delete_entities',
    variant: '{success, message}',
    rule: 'N8',
    args: () => ({ entityNames: ['Engine'] }),
  },
  { server: 'memory', tool: 'read_graph', variant: 'after the deletes', rule: 'N1', args: () => ({}) },
  {
    server: 'thinking',
    tool: 'sequentialthinking',
    variant: 'first thought',
    rule: 'N1',
    args: () => ({
      thought: 'Split the problem.',
      thoughtNumber: 1,
      totalThoughts: 3,
      nextThoughtNeeded: true,
    }),
  },
  {
    server: 'thinking',
    tool: 'sequentialthinking',
    variant: 'branch',
    rule: 'N1',
    args: () => ({
      thought: 'Try another way.',
      thoughtNumber: 2,
      totalThoughts: 3,
      nextThoughtNeeded: true,
      branchFromThought: 1,
      branchId: 'alt',
    }),
  },
  {
    server: 'thinking',
    tool: 'sequentialthinking',
    variant: 'revision, last thought',
    rule: 'N1',
    args: () => ({
      thought: 'Revise the split.',
      thoughtNumber: 3,
      totalThoughts: 3,
      nextThoughtNeeded: false,
      isRevision: true,
      revisesThought: 1,
    }),
  },
];

let direct: Side;
let proxied: Side;
let configDir: string;
let product: Product;
const clients = new Map<ServerKey, DirectClient>();
const listed = new Map<ServerKey, Tool[]>();
let exposed: Map<string, Tool>;
let mask: (text: string) => string;

function newSide(label: string): Side {
  const memoryDir = tempDir(`${label}-memory`);
  return { root: filesystemRoot(`${label}-fs`), memoryFile: join(memoryDir, 'memory.jsonl') };
}

beforeAll(async () => {
  direct = newSide('direct');
  proxied = newSide('product');
  configDir = tempDir('reference-config');
  mask = createMask([direct.root, proxied.root, direct.memoryFile, proxied.memoryFile]);
  const config = writeProductConfig(configDir, specs(proxied));
  const directSpecs = specs(direct);
  const [started, ...connected] = await Promise.all([
    startProduct('stdio', config),
    ...SERVERS.map((key) => connectStdio(directSpecs[key])),
  ]);
  product = started;
  SERVERS.forEach((key, i) => clients.set(key, connected[i] as DirectClient));
  for (const key of SERVERS)
    listed.set(key, (await (clients.get(key) as DirectClient).client.listTools()).tools);
  exposed = await product.waitForTools(
    SERVERS.flatMap((key) => (listed.get(key) ?? []).map((t) => `${key}_${t.name}`)),
  );
}, START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all([...clients.values()].map((client) => client.close()));
  await product?.close();
  for (const side of [direct, proxied]) {
    if (!side) continue;
    rmSync(side.root, { recursive: true, force: true });
    rmSync(join(side.memoryFile, '..'), { recursive: true, force: true });
  }
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

/** The consent value a gated exposed tool asks for, if it is gated (T7). */
function consentFor(name: string): string | undefined {
  const schema = exposed.get(name)?.inputSchema as
    { properties?: Record<string, { const?: string }> } | undefined;
  return schema?.properties?.[EXPLICIT]?.const;
}

describe('the reference servers', () => {
  it.each(Object.values(REAL_PACKAGES))('%s runs at the exact version package.json pins', (name) => {
    expect(installed(name).version).toBe(pinnedVersion(name));
  });
});

describe('server-filesystem, server-memory and server-sequential-thinking through mcp-normalizer', () => {
  it('every tool of the three servers is exercised below (none needs a client capability)', () => {
    for (const key of SERVERS) {
      const names = (listed.get(key) ?? []).map((tool) => tool.name).sort();
      const exercised = [...new Set(CASES.filter((c) => c.server === key).map((c) => c.tool))].sort();
      expect(exercised, `${key}: every listed tool has a case`).toEqual(names);
    }
  });

  it.each(SERVERS)(
    'T6/T7: %s tools are listed with their schemas, and exactly the destructive ones ask for explicit_action',
    (key) => {
      for (const tool of listed.get(key) ?? []) {
        const name = `${key}_${tool.name}`;
        const mine = exposed.get(name);
        expect(mine, `${name} is listed`).toBeDefined();
        const destructive =
          tool.annotations?.destructiveHint === true && tool.annotations.readOnlyHint !== true;
        expect(consentFor(name), `${name}: gated iff destructive`).toBe(
          destructive ? name.toUpperCase() : undefined,
        );
        const {
          properties = {},
          required = [],
          ...rest
        } = (mine?.inputSchema ?? {}) as {
          properties?: Record<string, unknown>;
          required?: string[];
        };
        const { [EXPLICIT]: _consent, ...downstreamProperties } = properties;
        expect({ ...rest, properties: downstreamProperties }, `${name}: the downstream schema`).toEqual({
          ...tool.inputSchema,
          properties: tool.inputSchema.properties ?? {},
          required: undefined,
        });
        expect(required.filter((k) => k !== EXPLICIT)).toEqual(tool.inputSchema.required ?? []);
        if (destructive) {
          expect(mine?.description).toMatch(/^REQUIRES EXPLICIT USER INSTRUCTION/);
          expect(mine?.description?.endsWith(tool.description ?? '')).toBe(true);
        } else {
          expect(mine?.description).toBe(tool.description);
        }
        expect(mine?.title).toBe(tool.title);
        expect(mine?.annotations).toEqual(tool.annotations);
        expect(mine?.outputSchema, `${name}: the envelope schema, typed by the tool's own (T14)`).toEqual(
          (tool.outputSchema !== undefined ? typedEnvelopeSchema('results', tool.outputSchema) : undefined) ??
            ENVELOPE_OUTPUT_SCHEMAS.results,
        );
      }
    },
  );

  it(
    'T7: a destructive filesystem tool called without explicit_action fails with consent_required and writes nothing',
    async () => {
      const target = join(proxied.root, 'never.txt');
      const result = await product.call('fs_write_file', { path: target, content: 'no' });
      const envelope = result.structuredContent as { meta_data: Record<string, unknown> };
      expect(result.isError).toBe(true);
      expect(envelope.meta_data['error_type']).toBe('consent_required');
      expect(existsSync(target)).toBe(false);
    },
    TEST_TIMEOUT_MS,
  );

  it.each(CASES.map((c) => [c.rule, c.server, c.tool, c.variant, c] as const))(
    '%s: %s %s (%s) — the envelope carries everything the direct result had',
    async (_rule, server, tool, _variant, c) => {
      const raw = await callRaw((clients.get(server) as DirectClient).client, tool, c.args(direct));
      const name = `${server}_${tool}`;
      const consent = consentFor(name);
      const result = await product.call(name, {
        ...c.args(proxied),
        ...(consent ? { [EXPLICIT]: consent } : {}),
      });
      assertEnvelopeCarries(raw, result, { server, tool, mask });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'T8: a thought number below the schema minimum never reaches sequential-thinking: invalid_arguments with the path',
    async () => {
      const args = { thought: 'zero', thoughtNumber: 0, totalThoughts: 1, nextThoughtNeeded: false };
      const raw = await callRaw((clients.get('thinking') as DirectClient).client, 'sequentialthinking', args);
      expect(raw['isError'], 'the server itself rejects it too').toBe(true);
      const result = await product.call('thinking_sequentialthinking', args);
      const envelope = result.structuredContent as { meta_data: Record<string, unknown> };
      expect(envelope.meta_data['error_type']).toBe('invalid_arguments');
      expect(envelope.meta_data['error_data']).toMatchObject({ issues: [{ path: '/thoughtNumber' }] });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'P8: server-filesystem keeps its configured folder behind mcp-normalizer, while a roots-capable client replaces it',
    async () => {
      const elsewhere = tempDir('roots');
      const rooted = await connectStdio(specs(direct).fs, { roots: { listChanged: true } }, (client) =>
        client.setRequestHandler(ListRootsRequestSchema, () => ({
          roots: [{ uri: pathToFileURL(elsewhere).href, name: 'elsewhere' }],
        })),
      );
      try {
        const allowed = async () =>
          JSON.stringify(await callRaw(rooted.client, 'list_allowed_directories', {}));
        // The server asks for roots after initialize and swaps its folders when the answer lands.
        await expect.poll(allowed, { timeout: CALL_TIMEOUT_MS }).toContain(elsewhere);
        expect(await allowed()).not.toContain(direct.root);
      } finally {
        await rooted.close();
        rmSync(elsewhere, { recursive: true, force: true });
      }
      const result = await product.call('fs_list_allowed_directories', {});
      expect(JSON.stringify(result.structuredContent)).toContain(proxied.root);
    },
    TEST_TIMEOUT_MS,
  );
});
