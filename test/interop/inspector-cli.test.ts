/**
 * A real third-party client against `mcp-normalizer serve`: @modelcontextprotocol/inspector-cli
 * in its `--cli` mode (one method per run, the answer as JSON on stdout), over stdio (it spawns
 * `serve` itself) and over Streamable HTTP (`serve --http`).
 *
 * Assertions are on its JSON output, never on its exit code alone: it exits 0 when a tool answers
 * `isError: true`. Quirks it imposes:
 * - it only runs from a folder whose PARENT holds a package.json (it reads `../package.json`
 *   relative to the working directory to name itself), so it runs from test/ here;
 * - its launcher owns `--config` (an inspector config file), so the product's config goes in
 *   MCP_NORMALIZER_CONFIG, which `serve` reads when `--config` is absent.
 */
import { spawn } from 'node:child_process';
import { rmSync } from 'node:fs';
import { join } from 'node:path';
import type { Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ENVELOPE_OUTPUT_SCHEMAS, typedEnvelopeSchema } from '../../src/upstream/envelope-schema.js';
import { assertEnvelopeCarries, createMask } from './envelope-oracle.js';
import type { HttpServe } from './product.js';
import { CLI, productEnv, serveHttp, writeProductConfig } from './product.js';
import type { DirectClient } from './real-servers.js';
import {
  CALL_TIMEOUT_MS,
  REAL_PACKAGES,
  ROOT,
  START_TIMEOUT_MS,
  callRaw,
  connectStdio,
  installed,
  stdioServer,
  tempDir,
} from './real-servers.js';

const TEST_TIMEOUT_MS = 2 * CALL_TIMEOUT_MS;
/** Its working directory: test/, whose parent (the repository root) holds a package.json. */
const INSPECTOR_CWD = join(ROOT, 'test');

interface InspectorRun {
  readonly code: number | null;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs `mcp-inspector-cli --cli <args>` to completion, bounded in time. */
function inspector(
  args: readonly string[],
  env: Record<string, string> = {},
  cwd = INSPECTOR_CWD,
): Promise<InspectorRun> {
  const bin = installed(REAL_PACKAGES.inspector).bin;
  const child = spawn(process.execPath, [bin, '--cli', ...args], {
    cwd,
    env: { ...productEnv(), ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
    // Its own process group: on a timeout, the launcher, its CLI child and `serve` go together.
    detached: true,
  });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString('utf8')));
  child.stderr.on('data', (chunk: Buffer) => (stderr = (stderr + chunk.toString('utf8')).slice(-20_000)));
  return new Promise((resolve) => {
    const timer = setTimeout(() => {
      if (child.pid !== undefined) process.kill(-child.pid, 'SIGKILL');
    }, TEST_TIMEOUT_MS - 5_000);
    child.once('close', (code) => {
      clearTimeout(timer);
      resolve({ code, stdout, stderr });
    });
  });
}

/** The JSON document the inspector printed. */
function output(run: InspectorRun): Record<string, unknown> {
  try {
    return JSON.parse(run.stdout) as Record<string, unknown>;
  } catch {
    throw new Error(
      `inspector-cli printed no JSON (exit ${String(run.code)}):\n${run.stdout}\n${run.stderr}`,
    );
  }
}

const everything = () => stdioServer(REAL_PACKAGES.everything, ['stdio']);
const mask = createMask();

let configDir: string;
let config: string;
let serve: HttpServe;
let direct: DirectClient;
let directTools: Tool[];

beforeAll(async () => {
  configDir = tempDir('inspector');
  // `--method tools/list` lists once and leaves: as docs/configuration.md advises for such a
  // host, the list waits for the servers still starting (P1).
  config = writeProductConfig(configDir, { ev: everything() }, { list_wait_ms: 60_000 });
  [serve, direct] = await Promise.all([serveHttp(config), connectStdio(everything())]);
  // Q6: every tool is exposed, task-only ones included (mcp-normalizer runs them as tasks).
  directTools = (await direct.client.listTools()).tools;
}, START_TIMEOUT_MS);

afterAll(async () => {
  await direct?.close();
  await serve?.stop();
  if (configDir) rmSync(configDir, { recursive: true, force: true });
});

function expectListing(run: InspectorRun): void {
  const listing = output(run) as { tools: Tool[] };
  expect(run.code, run.stderr).toBe(0);
  expect(listing.tools.map((tool) => tool.name).sort()).toEqual(
    directTools.map((tool) => `ev_${tool.name}`).sort(),
  );
  for (const tool of listing.tools) {
    const original = directTools.find((t) => `ev_${t.name}` === tool.name);
    expect(tool.inputSchema, tool.name).toEqual(original?.inputSchema);
    expect(tool.outputSchema, tool.name).toEqual(
      (original?.outputSchema !== undefined
        ? typedEnvelopeSchema('results', original.outputSchema)
        : undefined) ?? ENVELOPE_OUTPUT_SCHEMAS.results,
    );
  }
}

describe('@modelcontextprotocol/inspector-cli --cli against mcp-normalizer', () => {
  it(
    'fails from a folder whose parent holds no package.json (the quirk the suite works around)',
    async () => {
      const run = await inspector(
        [serve.url, '--transport', 'http', '--method', 'tools/list'],
        {},
        join(ROOT, 'test', 'interop'),
      );
      expect(run.code).not.toBe(0);
      expect(run.stdout).toBe('');
      expect(run.stderr).toMatch(/Cannot find module .*package\.json/);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'U1: over stdio, tools/list prints every server-everything tool, prefixed, with the envelope outputSchema',
    async () => {
      const run = await inspector([process.execPath, CLI, 'serve', '--method', 'tools/list'], {
        MCP_NORMALIZER_CONFIG: config,
      });
      expectListing(run);
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'U1/N3: over stdio, tools/call prints the envelope, and it carries the direct result',
    async () => {
      const args = { a: 2, b: 40 };
      const run = await inspector(
        // The target first: --tool-arg takes every key=value pair after it.
        [
          process.execPath,
          CLI,
          'serve',
          '--method',
          'tools/call',
          '--tool-name',
          'ev_get-sum',
          '--tool-arg',
          'a=2',
          'b=40',
        ],
        { MCP_NORMALIZER_CONFIG: config },
      );
      expect(run.code, run.stderr).toBe(0);
      assertEnvelopeCarries(await callRaw(direct.client, 'get-sum', args), output(run), {
        server: 'ev',
        tool: 'get-sum',
        mask,
      });
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'U1: over Streamable HTTP, tools/list prints every server-everything tool, prefixed, with the envelope outputSchema',
    async () => {
      expectListing(await inspector([serve.url, '--transport', 'http', '--method', 'tools/list']));
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'U1/N4: over Streamable HTTP, an image result prints as a file in the envelope, out of the text block',
    async () => {
      const run = await inspector([
        serve.url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'ev_get-tiny-image',
      ]);
      expect(run.code, run.stderr).toBe(0);
      const printed = output(run);
      assertEnvelopeCarries(await callRaw(direct.client, 'get-tiny-image', {}), printed, {
        server: 'ev',
        tool: 'get-tiny-image',
        mask,
      });
      const text = (printed['content'] as { text: string }[])[0]?.text ?? '';
      expect(text).toContain('image-1.png');
      expect(text).not.toContain('iVBORw0KGgo');
    },
    TEST_TIMEOUT_MS,
  );

  it(
    'U1/N7: over Streamable HTTP, a tool error prints isError and the error envelope although the exit code is 0',
    async () => {
      const run = await inspector([
        serve.url,
        '--transport',
        'http',
        '--method',
        'tools/call',
        '--tool-name',
        'ev_get-resource-reference',
        '--tool-arg',
        'resourceType=Text',
        'resourceId=0',
      ]);
      expect(run.code, 'inspector-cli exits 0 on an isError result').toBe(0);
      const printed = output(run);
      expect(printed['isError']).toBe(true);
      const args = { resourceType: 'Text', resourceId: 0 };
      assertEnvelopeCarries(await callRaw(direct.client, 'get-resource-reference', args), printed, {
        server: 'ev',
        tool: 'get-resource-reference',
        mask,
      });
    },
    TEST_TIMEOUT_MS,
  );
});
