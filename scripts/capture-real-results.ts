/**
 * Captures raw CallToolResults from the four REAL reference MCP servers (installed as
 * devDependencies) into the golden corpus, as `fixtures/results/<rule>-captured-<server>-<tool>[-variant].json`.
 *
 * Run: `npx tsx scripts/capture-real-results.ts`
 *
 * - Servers run over stdio only (no network): server-everything, server-filesystem on a temp
 *   folder with a few files (incl. a 1×1 PNG), server-memory with MEMORY_FILE_PATH in a temp
 *   folder, server-sequential-thinking.
 * - Calls go through `client.request({method: 'tools/call'}, <lenient schema>)`, as the gateway
 *   does (P7), so the result is recorded exactly as the server sent it.
 * - mcp-sqlite (a SQLite server; its native module is not a devDependency) is captured when it
 *   is installed in the scratch folder `REAL_SERVERS` (default /tmp/realsrv, see
 *   scripts/record-catalogs.ts: `npm i mcp-sqlite@1.0.9` there), else skipped with a message. Its
 *   query results are the corpus's real tables (F6): a database is filled through the server's
 *   own `query` tool first (not recorded).
 * - Nondeterministic bits are replaced: the temp folder's path becomes {@link STABLE_DIR}.
 * - A case's `description`, `rule` and `expected` are kept when its file already exists (they are
 *   reviewed by hand against the contract). A new case gets an `expected` drafted by the
 *   normalizer and a description starting with `UNREVIEWED:`, which the golden test rejects
 *   until someone has checked it against CONTRACT.md and rewritten the description.
 */
import {
  existsSync,
  mkdtempSync,
  mkdirSync,
  readFileSync,
  realpathSync,
  rmSync,
  writeFileSync,
  readdirSync,
  unlinkSync,
} from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { z } from 'zod';
import { normalizeCallToolResult } from '../src/core/normalize.js';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const OUT_DIR = join(ROOT, 'fixtures', 'results');
/** What the temp folder's real path is replaced with in captured cases. */
const STABLE_DIR = '/tmp/mcp-normalizer-capture';
const CALL_TIMEOUT_MS = 20_000;

/** The SDK parses results with this: keep every field, judge nothing (P7). */
const LenientResultSchema = z.looseObject({});

const require = createRequire(import.meta.url);

interface ServerSpec {
  /** Short name used in file names. */
  readonly key: string;
  readonly pkg: string;
  readonly args?: readonly string[];
  readonly env?: Record<string, string>;
  /** Installed in the scratch folder `REAL_SERVERS`, not in this repo: skipped when absent. */
  readonly scratch?: boolean;
  /** Calls made before the recorded ones, to set the server up (not recorded). */
  readonly setup?: readonly { readonly tool: string; readonly args: Record<string, unknown> }[];
  readonly calls: readonly CallSpec[];
}

interface CallSpec {
  readonly tool: string;
  readonly variant?: string;
  readonly args: Record<string, unknown>;
  /** The N-rule the case mainly shows. */
  readonly rule: string;
  /** What the case shows (used only for a new, unreviewed case). */
  readonly about: string;
  /** Replaces nondeterministic parts of the raw result (said so in the case's description). */
  readonly fix?: (raw: unknown) => unknown;
}

const CLOCK_TIME = /created at \d{1,2}:\d{2}:\d{2}[\s\u202f]?[AP]M/g;
const FIXED_TIME = 'created at 12:00:00 PM';

/**
 * server-everything's dynamic resources say when they were made ("created at 6:34:54 AM"), in the
 * text of a text resource or inside the base64 of a blob: pin that time.
 */
function pinCreationTime(raw: unknown): unknown {
  return JSON.parse(JSON.stringify(raw), (key, value: unknown) => {
    if (typeof value !== 'string') return value;
    if (key === 'blob') {
      const decoded = Buffer.from(value, 'base64').toString('utf8');
      const pinned = decoded.replace(CLOCK_TIME, FIXED_TIME);
      return pinned === decoded ? value : Buffer.from(pinned).toString('base64');
    }
    return value.replace(CLOCK_TIME, FIXED_TIME);
  }) as unknown;
}

/** A 1×1 transparent PNG. */
const PIXEL_PNG = Buffer.from(
  'iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mNkYPhfDwAChwGA60e6kgAAAABJRU5ErkJggg==',
  'base64',
);

const SCRATCH = process.env['REAL_SERVERS'] ?? '/tmp/realsrv';

function packageInfo(pkg: string, scratch = false): { version: string; bin: string } {
  const manifestPath = scratch
    ? join(SCRATCH, 'node_modules', pkg, 'package.json')
    : require.resolve(`${pkg}/package.json`);
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    version: string;
    bin: Record<string, string>;
  };
  const binRel = Object.values(manifest.bin)[0];
  if (binRel === undefined) throw new Error(`Expected ${pkg} to declare a bin`);
  return { version: manifest.version, bin: join(dirname(manifestPath), binRel) };
}

function servers(dir: string): ServerSpec[] {
  const files = join(dir, 'files');
  return [
    {
      key: 'everything',
      pkg: '@modelcontextprotocol/server-everything',
      args: ['stdio'],
      calls: [
        {
          tool: 'echo',
          args: { message: 'hello from mcp-normalizer' },
          rule: 'N3',
          about: 'plain text reply',
        },
        { tool: 'get-sum', args: { a: 2, b: 40 }, rule: 'N3', about: 'plain text reply with a number in it' },
        {
          tool: 'get-structured-content',
          args: { location: 'Chicago' },
          rule: 'N1',
          about: 'structuredContent with equal compact JSON text',
        },
        { tool: 'get-tiny-image', args: {}, rule: 'N4', about: 'an image block between text blocks' },
        { tool: 'get-resource-links', args: { count: 2 }, rule: 'N4', about: 'resource_link blocks' },
        {
          tool: 'get-resource-reference',
          variant: 'text',
          args: { resourceType: 'Text', resourceId: 1 },
          rule: 'N4',
          about: 'an embedded text resource',
          fix: pinCreationTime,
        },
        {
          tool: 'get-resource-reference',
          variant: 'blob',
          args: { resourceType: 'Blob', resourceId: 2 },
          rule: 'N4',
          about: 'an embedded blob resource',
          fix: pinCreationTime,
        },
        {
          tool: 'get-annotated-message',
          variant: 'error',
          args: { messageType: 'error', includeImage: true },
          rule: 'N4',
          about: 'annotated text and image blocks',
        },
        {
          tool: 'gzip-file-as-resource',
          args: {
            name: 'hello.txt.gz',
            data: `data:text/plain;base64,${Buffer.from('hello, gzip\n').toString('base64')}`,
            outputType: 'resource',
          },
          rule: 'N4',
          about: 'an embedded gzip blob from a data: URI',
        },
        {
          tool: 'echo',
          variant: 'bad-arguments',
          args: {},
          rule: 'N7',
          about: 'isError for arguments that fail validation',
        },
        { tool: 'no-such-tool', args: {}, rule: 'N7', about: 'isError for an unknown tool' },
      ],
    },
    {
      key: 'filesystem',
      pkg: '@modelcontextprotocol/server-filesystem',
      args: [files],
      calls: [
        {
          tool: 'read_text_file',
          args: { path: join(files, 'hello.txt') },
          rule: 'N1',
          about: 'structuredContent {content} beside the text',
        },
        {
          tool: 'read_text_file',
          variant: 'json-file',
          args: { path: join(files, 'data.json') },
          rule: 'N2',
          about: 'a JSON file: text parses but differs from structuredContent',
        },
        {
          tool: 'list_directory',
          args: { path: files },
          rule: 'N1',
          about: 'a listing as structuredContent {content}',
        },
        {
          tool: 'read_text_file',
          variant: 'missing',
          args: { path: join(files, 'missing.txt') },
          rule: 'N7',
          about: 'isError for a missing file',
        },
        {
          tool: 'read_media_file',
          args: { path: join(files, 'pixel.png') },
          rule: 'N4',
          about: 'an image block, also inside structuredContent',
        },
      ],
    },
    {
      key: 'memory',
      pkg: '@modelcontextprotocol/server-memory',
      env: { MEMORY_FILE_PATH: join(dir, 'memory.jsonl') },
      calls: [
        {
          tool: 'create_entities',
          args: {
            entities: [{ name: 'Ada', entityType: 'person', observations: ['wrote the first program'] }],
          },
          rule: 'N1',
          about: 'structuredContent with pretty-printed JSON text',
        },
        {
          tool: 'add_observations',
          args: { observations: [{ entityName: 'Ada', contents: ['born 1815'] }] },
          rule: 'N6',
          about: 'structuredContent {results} is the output contract shape',
        },
        { tool: 'read_graph', args: {}, rule: 'N1', about: 'the whole graph as structuredContent' },
        {
          tool: 'delete_entities',
          args: { entityNames: ['Ada'] },
          rule: 'N8',
          about: 'structuredContent {success: true, message} is the ADR-003 shape',
        },
      ],
    },
    {
      key: 'sqlite',
      pkg: 'mcp-sqlite',
      scratch: true,
      args: [join(dir, 'shop.db')],
      setup: SHOP_SQL.map((sql) => ({ tool: 'query', args: { sql } })),
      calls: [
        {
          tool: 'read_records',
          args: { table: 'orders', limit: 12 },
          rule: 'N3',
          about: 'twelve rows of a table as pretty-printed JSON text',
        },
        {
          tool: 'query',
          variant: 'group-by',
          args: {
            sql: 'SELECT status, COUNT(*) AS orders, SUM(quantity) AS items FROM orders GROUP BY status',
          },
          rule: 'N3',
          about: 'an aggregate query: four rows as JSON text',
        },
        {
          tool: 'query',
          variant: 'join',
          args: {
            sql: 'SELECT c.name, c.city, COUNT(o.id) AS orders, ROUND(SUM(o.price * o.quantity), 2) AS total FROM customers c JOIN orders o ON o.customer_id = c.id GROUP BY c.id ORDER BY total DESC',
          },
          rule: 'N3',
          about: 'a join with totals per customer: six rows as JSON text',
        },
        {
          tool: 'get_table_schema',
          args: { tableName: 'orders' },
          rule: 'N3',
          about: "a table's columns as rows of JSON text",
        },
        { tool: 'list_tables', args: {}, rule: 'N3', about: 'two table names as rows of JSON text' },
      ],
    },
    {
      key: 'sequential-thinking',
      pkg: '@modelcontextprotocol/server-sequential-thinking',
      env: { DISABLE_THOUGHT_LOGGING: 'true' },
      calls: [
        {
          tool: 'sequentialthinking',
          args: {
            thought: 'First, list the inputs.',
            thoughtNumber: 1,
            totalThoughts: 2,
            nextThoughtNeeded: true,
          },
          rule: 'N1',
          about: 'a thought record as structured content',
        },
      ],
    },
  ];
}

/** The shop database the sqlite server is filled with: 6 customers, 12 orders. */
const SHOP_SQL: readonly string[] = [
  'CREATE TABLE customers (id INTEGER PRIMARY KEY, name TEXT NOT NULL, city TEXT, joined TEXT)',
  'CREATE TABLE orders (id INTEGER PRIMARY KEY, customer_id INTEGER REFERENCES customers(id), product TEXT, quantity INTEGER, price REAL, status TEXT)',
  "INSERT INTO customers VALUES (1, 'Ada Lovelace', 'London', '2024-01-12'), (2, 'Grace Hopper', 'Arlington', '2024-02-03'), (3, 'Alan Turing', 'Manchester', '2024-03-21'), (4, 'Katherine Johnson', 'Hampton', '2024-04-09'), (5, 'Edsger Dijkstra', 'Austin', '2024-05-30'), (6, 'Barbara Liskov', 'Boston', '2024-06-14')",
  "INSERT INTO orders VALUES (1, 6, 'laptop stand', 2, 35.0, 'pending'), (2, 5, 'monitor', 3, 189.0, 'delivered'), (3, 4, 'usb-c hub', 1, 27.9, 'cancelled'), (4, 3, 'mouse', 2, 19.5, 'shipped'), (5, 2, 'keyboard', 3, 49.0, 'pending'), (6, 1, 'laptop stand', 1, 35.0, 'delivered'), (7, 6, 'monitor', 2, 189.0, 'cancelled'), (8, 5, 'usb-c hub', 3, 27.9, 'shipped'), (9, 4, 'mouse', 1, 19.5, 'pending'), (10, 3, 'keyboard', 2, 49.0, 'delivered'), (11, 2, 'laptop stand', 3, 35.0, 'cancelled'), (12, 1, 'monitor', 1, 189.0, 'shipped')",
];

/** Replaces the temp folder (and its real path, /tmp may be a symlink) with a stable one. */
function stabilize(value: unknown, dir: string): unknown {
  let json = JSON.stringify(value);
  for (const variant of new Set([dir, realpathSync(dir)])) {
    json = json.split(variant).join(STABLE_DIR);
    // File URIs and JSON-escaped forms of the same path.
    json = json.split(encodeURI(variant)).join(STABLE_DIR);
  }
  return JSON.parse(json);
}

/** The Result as the corpus states it (see test/core/golden.test.ts). */
function observable(result: ReturnType<typeof normalizeCallToolResult>): unknown {
  const { mediaBlocks: _media, ...rest } = result;
  const { diagnostics: _diagnostics, elapsedMs: _elapsed, ...meta } = result.meta;
  const out: Record<string, unknown> = { ...rest, meta };
  delete out['exception'];
  // U6 keeps the raw result by reference for MCP Apps; the corpus states it once, as `input`.
  delete out['original'];
  return JSON.parse(JSON.stringify(out));
}

function writeCase(spec: ServerSpec, call: CallSpec, version: string, input: unknown): string {
  // Files are named `<rule>-captured-<server>-<tool>[-variant].json`: after the rule they show,
  // which a reviewer may have changed, so an earlier capture is found by the rest of the name.
  const suffix = `captured-${spec.key}-${call.tool}${call.variant ? `-${call.variant}` : ''}.json`;
  const earlier = readdirSync(OUT_DIR).find((file) => /^N\d+-/.test(file) && file.endsWith(`-${suffix}`));
  const previous =
    earlier !== undefined
      ? (JSON.parse(readFileSync(join(OUT_DIR, earlier), 'utf8')) as Record<string, unknown>)
      : undefined;
  const drafted = observable(normalizeCallToolResult(input, { maxInlineBytes: 65536, inbandErrors: true }));
  const reviewed = previous !== undefined && !String(previous['description']).startsWith('UNREVIEWED');
  const entry = {
    description: reviewed
      ? previous['description']
      : `UNREVIEWED: ${spec.pkg} ${call.tool}: ${call.about}. The temp folder is replaced by ${STABLE_DIR}.`,
    rule: reviewed ? previous['rule'] : call.rule,
    captured: { package: spec.pkg, version, tool: call.tool },
    input,
    expected: reviewed ? previous['expected'] : drafted,
    ...(previous?.['envelopes'] !== undefined ? { envelopes: previous['envelopes'] } : {}),
  };
  const name = `${String(entry.rule)}-${suffix}`;
  if (earlier !== undefined && earlier !== name) unlinkSync(join(OUT_DIR, earlier));
  writeFileSync(join(OUT_DIR, name), `${JSON.stringify(entry, null, 2)}\n`);
  return name;
}

async function captureServer(spec: ServerSpec, dir: string): Promise<string[]> {
  const { version, bin } = packageInfo(spec.pkg, spec.scratch);
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [bin, ...(spec.args ?? [])],
    env: spec.env ?? {},
    stderr: 'pipe',
  });
  // The child's stderr is noise here; drain it so the pipe never fills.
  transport.stderr?.on('data', () => {});
  // A bare client: no roots, so the filesystem server keeps its command-line folders (P8).
  const client = new Client({ name: 'mcp-normalizer-capture', version: '0.0.0' }, { capabilities: {} });
  await client.connect(transport, { timeout: CALL_TIMEOUT_MS });
  const written: string[] = [];
  try {
    for (const step of spec.setup ?? []) {
      await client.request(
        { method: 'tools/call', params: { name: step.tool, arguments: step.args } },
        LenientResultSchema,
        { timeout: CALL_TIMEOUT_MS },
      );
    }
    for (const call of spec.calls) {
      const raw = await client.request(
        { method: 'tools/call', params: { name: call.tool, arguments: call.args } },
        LenientResultSchema,
        { timeout: CALL_TIMEOUT_MS },
      );
      const stable = stabilize(raw, dir);
      written.push(writeCase(spec, call, version, call.fix ? call.fix(stable) : stable));
    }
  } finally {
    await client.close();
  }
  return written;
}

async function main(): Promise<void> {
  const dir = mkdtempSync(join(tmpdir(), 'mcpn-capture-'));
  try {
    const files = join(dir, 'files');
    mkdirSync(files);
    writeFileSync(join(files, 'hello.txt'), 'Hello from a real file.\nSecond line.\n');
    writeFileSync(join(files, 'data.json'), '{"name": "demo", "items": [1, 2, 3]}\n');
    writeFileSync(join(files, 'pixel.png'), PIXEL_PNG);
    mkdirSync(OUT_DIR, { recursive: true });
    for (const spec of servers(dir)) {
      if (spec.scratch === true && !existsSync(join(SCRATCH, 'node_modules', spec.pkg, 'package.json'))) {
        process.stderr.write(`${spec.pkg}: skipped, not installed in ${SCRATCH}\n`);
        continue;
      }
      const written = await captureServer(spec, dir);
      process.stderr.write(`${spec.pkg}: ${written.join(', ')}\n`);
    }
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

main().catch((error: unknown) => {
  process.stderr.write(
    `capture failed: ${error instanceof Error ? (error.stack ?? error.message) : String(error)}\n`,
  );
  process.exitCode = 1;
});
