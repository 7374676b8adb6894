/**
 * server-everything's tools that ask their client (elicitation, sampling, roots) through
 * mcp-normalizer (Q2–Q4), for a 2025 host (SDK v1 client) and a 2026-07-28 host (SDK v2 client,
 * pinned), each answering from its own handler. server-everything is a 2025 server: it pushes
 * its requests, and the gateway turns them into input rounds for the 2026 host. Then the Python
 * side: the official Python `mcp` client as the host, FastMCP (`ctx.elicit`) and server-everything
 * behind the gateway.
 */
import { execFile } from 'node:child_process';
import { rmSync, writeFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { join } from 'node:path';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { stringify } from 'yaml';
import { CLI, childEnv } from '../e2e/cli-process.js';
import { ROOT } from '../helpers/fixtures.js';
import { answersAs, envelope, legacyHost, modernHost } from '../helpers/hosts.js';
import { describeWith } from '../helpers/peers.js';
import { python, PYTHON_FIXTURES } from '../helpers/python.js';
import { CALL_TIMEOUT_MS, REAL_PACKAGES, START_TIMEOUT_MS, stdioServer, tempDir } from './real-servers.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

let dir: string;
let config: string;
beforeAll(() => {
  dir = tempDir('everything-asks');
  const ev = stdioServer(REAL_PACKAGES.everything, ['stdio']);
  config = join(dir, 'config.yaml');
  writeFileSync(
    config,
    stringify({
      log_level: 'warn',
      // These hosts list once, at once: the list waits for server-everything (P1).
      list_wait_ms: 60_000,
      servers: {
        ev: {
          command: ev.command,
          args: [...ev.args],
          client_features: ['elicitation', 'sampling', 'roots'],
        },
      },
    }),
  );
});
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const gateway = {
  command: process.execPath,
  args: () => [CLI, 'serve', '--config', config],
  env: childEnv(),
  cwd: ROOT,
};

/** The text server-everything wrote, out of the envelope. */
function text(result: unknown): string {
  return JSON.stringify(envelope(result).results);
}

describe(
  'server-everything asking its client through mcp-normalizer',
  { timeout: 2 * START_TIMEOUT_MS },
  () => {
    it.each(['2025', '2026'] as const)(
      'Q3: a %s host sees get-roots-list, trigger-elicitation-request and trigger-sampling-request listed, and answers each',
      async (era) => {
        const seen: string[] = [];
        const answers = answersAs(era);
        const record = (method: string, params: Record<string, unknown>) => {
          seen.push(method);
          if (method === 'elicitation/create')
            return {
              action: 'accept',
              content: { name: `${era} host`, color: 'red', number: 7, pets: ['cats'] },
            };
          return answers(method, params);
        };
        const capabilities = { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} };
        const client =
          era === '2025'
            ? legacyHost(capabilities, record, cleanup)
            : modernHost(record, cleanup, capabilities);
        await client.connect(
          era === '2025'
            ? new LegacyStdioTransport({ ...gateway, args: gateway.args(), stderr: 'pipe' })
            : new StdioClientTransport({ ...gateway, args: gateway.args(), stderr: 'pipe' }),
        );
        const names = (await client.listTools()).tools.map((tool) => tool.name);
        expect(names).toEqual(
          expect.arrayContaining([
            'ev_get-roots-list',
            'ev_trigger-elicitation-request',
            'ev_trigger-sampling-request',
          ]),
        );
        const options = { timeout: CALL_TIMEOUT_MS };
        const roots = await client.callTool({ name: 'ev_get-roots-list', arguments: {} }, undefined, options);
        expect(text(roots)).toContain(`file:///${era}`);
        const form = await client.callTool(
          { name: 'ev_trigger-elicitation-request', arguments: {} },
          undefined,
          options,
        );
        expect(text(form)).toContain(`${era} host`);
        const sampled = await client.callTool(
          { name: 'ev_trigger-sampling-request', arguments: { prompt: 'hello', maxTokens: 20 } },
          undefined,
          options,
        );
        expect(text(sampled)).toContain(`${era} sampled`);
        expect(seen).toEqual(
          expect.arrayContaining(['roots/list', 'elicitation/create', 'sampling/createMessage']),
        );
      },
    );
  },
);

describeWith(['python'])(
  'a Python MCP host, FastMCP and server-everything behind the gateway',
  { timeout: 2 * START_TIMEOUT_MS },
  () => {
    it("Q3: the Python host answers FastMCP's ctx.elicit (spoken to in 2025) and server-everything's elicitation and sampling", async () => {
      const ev = stdioServer(REAL_PACKAGES.everything, ['stdio']);
      const file = join(dir, 'python.yaml');
      writeFileSync(
        file,
        stringify({
          log_level: 'warn',
          servers: {
            // FastMCP 4.0.10 refuses ctx.elicit on 2026-07-28 connections (it pushes only), so a
            // server whose tools elicit is spoken to in 2025 (docs/compatibility.md).
            fast: {
              command: python(),
              args: [join(PYTHON_FIXTURES, 'fastmcp_server.py')],
              protocol: 'legacy',
            },
            ev: { command: ev.command, args: [...ev.args] },
          },
        }),
      );
      const { stdout } = await promisify(execFile)(
        python(),
        [
          join(PYTHON_FIXTURES, 'asking_client.py'),
          process.execPath,
          CLI,
          file,
          'fast_favourite',
          'ev_trigger-elicitation-request',
          'ev_trigger-sampling-request={"prompt":"hi","maxTokens":5}',
        ],
        { cwd: ROOT, env: childEnv(), timeout: CALL_TIMEOUT_MS },
      );
      const seen = JSON.parse(stdout) as Record<string, { is_error: boolean; text: string }>;
      expect(seen['fast_favourite']).toEqual({
        is_error: false,
        text: expect.stringContaining('favourite: teal'),
      });
      expect(seen['ev_trigger-elicitation-request']?.text).toContain('from python');
      expect(seen['ev_trigger-sampling-request']?.text).toContain('python sampled');
    });
  },
);
