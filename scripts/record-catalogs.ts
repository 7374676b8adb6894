/**
 * Records the tools/list of real, published MCP servers into fixtures/catalogs/, the corpus the
 * search-mode query set (test/core/search-queries.json) is measured over (issue 15, S3).
 *
 * The four reference servers come from this repo's devDependencies; the others are installed
 * once into a scratch folder (they pull browsers and native modules the tests do not need):
 *
 *   mkdir -p /tmp/realsrv && cd /tmp/realsrv && npm init -y && \
 *     npm i --ignore-scripts @playwright/mcp@0.0.83 chrome-devtools-mcp@1.11.0 \
 *       @notionhq/notion-mcp-server@2.5.2 @modelcontextprotocol/server-github@2025.4.8 \
 *       mongodb-mcp-server@3.0.4 @wonderwhy-er/desktop-commander@0.2.52 \
 *       mcp-server-kubernetes@4.1.7 @zereight/mcp-gitlab@2.1.64 \
 *       @modelcontextprotocol/server-slack@2025.4.25 @modelcontextprotocol/server-puppeteer@2025.5.12 \
 *       @modelcontextprotocol/server-google-maps@0.6.2 @cyanheads/git-mcp-server@2.15.3 @sentry/mcp-server@0.39.0
 *   REAL_SERVERS=/tmp/realsrv npx tsx scripts/record-catalogs.ts
 *
 * Only tools/list is asked; no tool is called. Dummy credentials are given where a server will
 * not start without one (it never uses them to list).
 */
import { mkdirSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';

interface Source {
  readonly name: string;
  readonly package: string;
  readonly command: string;
  readonly args: readonly string[];
  readonly env?: Record<string, string>;
}

const root = resolve(import.meta.dirname, '..');
const here = (bin: string): string => join(root, 'node_modules', '.bin', bin);
const scratch = process.env['REAL_SERVERS'] ?? '/tmp/realsrv';
const there = (bin: string): string => join(scratch, 'node_modules', '.bin', bin);
const folder = tmpdir();

const SOURCES: readonly Source[] = [
  {
    name: 'everything',
    package: '@modelcontextprotocol/server-everything',
    command: here('mcp-server-everything'),
    args: [],
  },
  {
    name: 'filesystem',
    package: '@modelcontextprotocol/server-filesystem',
    command: here('mcp-server-filesystem'),
    args: [folder],
  },
  {
    name: 'memory',
    package: '@modelcontextprotocol/server-memory',
    command: here('mcp-server-memory'),
    args: [],
  },
  {
    name: 'sequential-thinking',
    package: '@modelcontextprotocol/server-sequential-thinking',
    command: here('mcp-server-sequential-thinking'),
    args: [],
  },
  { name: 'playwright', package: '@playwright/mcp', command: there('playwright-mcp'), args: ['--headless'] },
  {
    name: 'chrome-devtools',
    package: 'chrome-devtools-mcp',
    command: there('chrome-devtools-mcp'),
    args: [],
  },
  {
    name: 'notion',
    package: '@notionhq/notion-mcp-server',
    command: there('notion-mcp-server'),
    args: [],
    env: { NOTION_TOKEN: 'ntn_dummy' },
  },
  {
    name: 'github',
    package: '@modelcontextprotocol/server-github',
    command: there('mcp-server-github'),
    args: [],
    env: { GITHUB_PERSONAL_ACCESS_TOKEN: 'dummy' },
  },
  { name: 'mongodb', package: 'mongodb-mcp-server', command: there('mongodb-mcp-server'), args: [] },
  {
    name: 'desktop-commander',
    package: '@wonderwhy-er/desktop-commander',
    command: there('desktop-commander'),
    args: [],
  },
  { name: 'kubernetes', package: 'mcp-server-kubernetes', command: there('mcp-server-kubernetes'), args: [] },
  {
    name: 'gitlab',
    package: '@zereight/mcp-gitlab',
    command: there('mcp-gitlab'),
    args: [],
    env: { GITLAB_PERSONAL_ACCESS_TOKEN: 'glpat-dummy', GITLAB_API_URL: 'http://127.0.0.1:9/api/v4' },
  },
  {
    name: 'slack',
    package: '@modelcontextprotocol/server-slack',
    command: there('mcp-server-slack'),
    args: [],
    env: { SLACK_BOT_TOKEN: 'xoxb-dummy', SLACK_TEAM_ID: 'T0' },
  },
  {
    name: 'puppeteer',
    package: '@modelcontextprotocol/server-puppeteer',
    command: there('mcp-server-puppeteer'),
    args: [],
  },
  {
    name: 'google-maps',
    package: '@modelcontextprotocol/server-google-maps',
    command: there('mcp-server-google-maps'),
    args: [],
    env: { GOOGLE_MAPS_API_KEY: 'dummy' },
  },
  { name: 'git', package: '@cyanheads/git-mcp-server', command: there('git-mcp-server'), args: [] },
  {
    name: 'sentry',
    package: '@sentry/mcp-server',
    command: there('sentry-mcp'),
    args: ['--access-token=dummy'],
  },
];

const out = join(root, 'fixtures', 'catalogs');
mkdirSync(out, { recursive: true });
const only = process.argv.slice(2);
for (const source of SOURCES) {
  if (only.length > 0 && !only.includes(source.name)) continue;
  const transport = new StdioClientTransport({
    command: source.command,
    args: [...source.args],
    env: { ...(process.env as Record<string, string>), ...source.env },
    stderr: 'ignore',
  });
  const client = new Client({ name: 'record-catalogs', version: '1.0.0' });
  try {
    await client.connect(transport, { timeout: 60_000 });
    const tools = [];
    let cursor: string | undefined;
    do {
      const page = await client.listTools(cursor === undefined ? {} : { cursor }, { timeout: 60_000 });
      tools.push(...page.tools);
      cursor = page.nextCursor;
    } while (cursor !== undefined);
    const version = client.getServerVersion();
    writeFileSync(
      join(out, `${source.name}.json`),
      `${JSON.stringify({ server: source.name, package: source.package, serverInfo: version, tools }, null, 1)}\n`,
    );
    process.stderr.write(
      `${source.name}: ${tools.length} tools (${version?.name ?? '?'} ${version?.version ?? '?'})\n`,
    );
  } catch (error) {
    process.stderr.write(
      `${source.name}: FAILED ${error instanceof Error ? error.message : String(error)}\n`,
    );
  } finally {
    await client.close().catch(() => undefined);
  }
}
