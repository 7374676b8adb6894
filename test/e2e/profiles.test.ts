/**
 * I6 end to end: profiles (named views of the catalog) over HTTP at `/mcp/<name>` in both eras,
 * and over stdio with `serve --profile`. The counter fixture counts the calls it receives.
 */
import { createHash } from 'node:crypto';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { connectStdio, fixtureEntry, runCli, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

const CONFIG = [
  'profiles:',
  "  readers: { tools: ['c_count', 'e_*', '!e_is_error'] }",
  'servers:',
  fixtureEntry('c', 'counter'),
  fixtureEntry('e', 'errors'),
].join('\n');

async function gateway(): Promise<HttpServe> {
  const serve = await serveHttp(writeConfig(CONFIG));
  stops.push(() => {
    if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
  });
  return serve;
}

const names = (tools: { name: string }[]): string[] => tools.map((tool) => tool.name).sort();
const READERS = ['c_count', 'e_custom_code', 'e_internal_error', 'e_invalid_params', 'e_throws_plain'];

describe('profiles', () => {
  it('I6: /mcp/<name> serves the profile’s tools in both eras; a tool outside it is access_denied and never reached', async () => {
    const serve = await gateway();
    const legacy = new LegacyClient({ name: 'e2e-2025', version: '1' });
    const legacyTransport = new LegacyHttpTransport(new URL(`${serve.url}/readers`));
    await legacy.connect(legacyTransport);
    stops.push(() => legacy.close());
    const modern = new Client(
      { name: 'e2e-2026', version: '1' },
      { versionNegotiation: { mode: { pin: '2026-07-28' } } },
    );
    await modern.connect(new StreamableHTTPClientTransport(new URL(`${serve.url}/readers`)));
    stops.push(() => modern.close());
    expect(names((await legacy.listTools()).tools)).toEqual(READERS);
    expect(names((await modern.listTools()).tools)).toEqual(READERS);

    const denied = await modern.callTool({ name: 'c_hit', arguments: {} });
    expect(denied.structuredContent).toMatchObject({
      meta_data: { error_type: 'access_denied', error_data: { reason: 'not_in_profile' } },
    });
    const counted = await legacy.callTool({ name: 'c_count', arguments: {} });
    expect(counted.structuredContent).toMatchObject({ results: { calls: 0 } });

    // The whole catalog stays at /mcp; a session opened at /mcp/readers is not one of /mcp's.
    const all = new LegacyClient({ name: 'e2e-all', version: '1' });
    await all.connect(new LegacyHttpTransport(new URL(serve.url)));
    stops.push(() => all.close());
    expect((await all.listTools()).tools.length).toBe(9);
    const crossed = await fetch(serve.url, {
      method: 'POST',
      headers: {
        'content-type': 'application/json',
        accept: 'application/json, text/event-stream',
        'mcp-session-id': legacyTransport.sessionId as string,
        'mcp-protocol-version': '2025-06-18',
      },
      body: JSON.stringify({ jsonrpc: '2.0', id: 3, method: 'tools/list', params: {} }),
    });
    expect(crossed.status).toBe(404);
    const unknown = await fetch(`${serve.url}/nope`, { method: 'POST' });
    expect(unknown.status).toBe(404);
    // The profiles this gateway does serve are named.
    expect(await unknown.text()).toContain('no profile \\"nope\\" here: MCP is served at /mcp, /mcp/readers');
  });

  it('I6: serve --profile serves one profile over stdio; an unknown name is a usage error naming the profiles', async () => {
    const file = writeConfig(CONFIG);
    const session = await connectStdio(file, {}, ['--profile', 'readers']);
    stops.push(() => session.client.close());
    const listed = (await session.client.listTools()).tools;
    expect(names(listed)).toEqual(READERS);
    // E2, I6: check prints the profile's tools/list hash: the bytes this client was sent.
    const checked = await runCli(['check', '--config', file]);
    const hash = createHash('sha256').update(JSON.stringify(listed)).digest('hex');
    expect(checked.stdout).toContain(`Profile readers: sha256 ${hash} (tools/list, 5 tools)`);
    const unknown = await runCli(['serve', '--config', file, '--profile', 'writers']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown profile "writers": the config has readers');
  });

  it('I6: a rule’s profiles confine the local user to them, in serve and in the CLI’s tools listing', async () => {
    const file = writeConfig(
      [
        'access:',
        "  - principals: ['sub:local']",
        "    allow: ['*']",
        '    profiles: [readers]',
        CONFIG,
      ].join('\n'),
    );
    const whole = await connectStdio(file);
    stops.push(() => whole.client.close());
    expect((await whole.client.listTools()).tools).toEqual([]);
    const refused = await whole.client.callTool({ name: 'c_count', arguments: {} });
    expect(refused.structuredContent).toMatchObject({
      meta_data: { error_type: 'access_denied', error_data: { reason: 'profile_not_allowed' } },
    });
    const readers = await connectStdio(file, {}, ['--profile', 'readers']);
    stops.push(() => readers.client.close());
    expect(names((await readers.client.listTools()).tools)).toEqual(READERS);

    const listed = await runCli(['tools', '--config', file, '--profile', 'readers', '--json']);
    expect(listed.code, listed.stderr).toBe(0);
    expect(names(JSON.parse(listed.stdout) as { name: string }[])).toEqual(READERS);
    const nothing = await runCli(['tools', '--config', file, '--json']);
    expect(JSON.parse(nothing.stdout)).toEqual([]);
    // I3: the table says why it is empty.
    const table = await runCli(['tools', '--config', file]);
    expect(table.stdout).toContain('(no tools exposed)');
    expect(table.stderr).toContain(
      'the local user sees none: its access: rule confines it to other profiles',
    );
    const unknown = await runCli(['tools', '--config', file, '--profile', 'writers']);
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('Unknown profile "writers": the config has readers');
  });

  it('I3, I6: a caller confined to one profile is not offered the search pair at another', async () => {
    const file = writeConfig(
      [
        'access:',
        "  - principals: ['local']",
        "    allow: ['*']",
        '    profiles: [readers]',
        'profiles:',
        "  readers: { tools: ['c_count'] }",
        "  finder: { tools: ['c_*'], expose: search }",
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    );
    const finder = await connectStdio(file, {}, ['--profile', 'finder']);
    stops.push(() => finder.client.close());
    expect((await finder.client.listTools()).tools).toEqual([]);
    const whole = await connectStdio(file);
    stops.push(() => whole.client.close());
    expect((await whole.client.listTools()).tools).toEqual([]);
    const readers = await connectStdio(file, {}, ['--profile', 'readers']);
    stops.push(() => readers.client.close());
    expect(names((await readers.client.listTools()).tools)).toEqual(['c_count']);
  });

  it('I6: a rule naming a profile the config does not have is a located config error', async () => {
    const file = writeConfig(
      ['access:', "  - principals: ['*']", "    allow: ['*']", '    profiles: [writers]', CONFIG].join('\n'),
    );
    const checked = await runCli(['check', '--config', file]);
    expect(checked.code).toBe(3);
    expect(checked.stderr).toMatch(
      /:4:\d+: access\[0\]\.profiles\[0\]: unknown profile "writers": profiles: has readers/,
    );
  });

  it('I6: a profile serves its own prompts and resources, none unless it names them', async () => {
    const file = writeConfig(
      [
        'profiles:',
        "  notes: { tools: ['c_count'], prompts: ['n_greeting'], resources: ['n+notes://readme'] }",
        "  bare: { tools: ['c_count'] }",
        'servers:',
        fixtureEntry('c', 'counter'),
        fixtureEntry('n', 'prompts-resources'),
      ].join('\n'),
    );
    const notes = await connectStdio(file, {}, ['--profile', 'notes']);
    stops.push(() => notes.client.close());
    expect((await notes.client.listPrompts()).prompts.map((p) => p.name)).toEqual(['n_greeting']);
    expect((await notes.client.listResources()).resources.map((r) => r.uri)).toEqual(['n+notes://readme']);
    await expect(notes.client.readResource({ uri: 'n+notes://logo.png' })).rejects.toThrow(
      /not allowed for this caller/,
    );
    const bare = await connectStdio(file, {}, ['--profile', 'bare']);
    stops.push(() => bare.client.close());
    expect((await bare.client.listPrompts()).prompts).toEqual([]);
    expect((await bare.client.listResources()).resources).toEqual([]);
    expect((await bare.client.listResourceTemplates()).resourceTemplates).toEqual([]);
  });

  it('I6: a profile’s own expose mode (search, read_only, all) and envelope format', async () => {
    const file = writeConfig(
      [
        'profiles:',
        "  finder: { tools: ['c_*', '!c_delete_all'], expose: search }",
        "  ro: { tools: ['a_*', 'c_*'], expose: read_only }",
        "  brief: { tools: ['c_count'], output: { format: response } }",
        "  every: { tools: ['c_count', 'e_*'], expose: all }",
        'servers:',
        fixtureEntry('c', 'counter'),
        fixtureEntry('a', 'annotated'),
        fixtureEntry('e', 'errors', { expose: 'search' }),
      ].join('\n'),
    );
    const finder = await connectStdio(file, {}, ['--profile', 'finder']);
    stops.push(() => finder.client.close());
    expect(names((await finder.client.listTools()).tools)).toEqual(['call_tool', 'search_tools']);
    const found = await finder.client.callTool({
      name: 'search_tools',
      arguments: { query: 'count calls hit delete add', limit: 20 },
    });
    const foundNames = names(
      (found.structuredContent as { results: { tools: { name: string }[] } }).results.tools,
    );
    expect(foundNames).toContain('c_count');
    expect(foundNames.every((name) => name.startsWith('c_') && name !== 'c_delete_all')).toBe(true);
    const ran = await finder.client.callTool({
      name: 'call_tool',
      arguments: { name: 'c_count', arguments: {} },
    });
    expect(ran.structuredContent).toMatchObject({ results: { calls: 0 } });
    const outside = await finder.client.callTool({
      name: 'call_tool',
      arguments: { name: 'a_read_file', arguments: { path: '/x' } },
    });
    expect(outside.structuredContent).toMatchObject({ meta_data: { error_type: 'access_denied' } });

    // read_only: only tools annotated readOnlyHint of the view; the rest are outside it.
    const ro = await connectStdio(file, {}, ['--profile', 'ro']);
    stops.push(() => ro.client.close());
    const readOnly = names((await ro.client.listTools()).tools);
    expect(readOnly).toContain('a_read_file');
    expect(readOnly).not.toContain('a_touch');
    const touched = await ro.client.callTool({ name: 'a_touch', arguments: { path: '/x' } });
    expect(touched.structuredContent).toMatchObject({
      meta_data: { error_type: 'access_denied', error_data: { reason: 'not_in_profile' } },
    });

    // all: the search-only tools of the view are listed too.
    const every = await connectStdio(file, {}, ['--profile', 'every']);
    stops.push(() => every.client.close());
    expect(names((await every.client.listTools()).tools)).toEqual(
      ['c_count', ...READERS.slice(1), 'e_is_error'].sort(),
    );

    // The profile's own envelope; the whole catalog keeps output.format.
    const brief = await connectStdio(file, {}, ['--profile', 'brief']);
    stops.push(() => brief.client.close());
    const counted = await brief.client.callTool({ name: 'c_count', arguments: {} });
    expect(counted.structuredContent).toMatchObject({ status: 'SUCCESS', data: { calls: 0 } });
    const whole = await connectStdio(file);
    stops.push(() => whole.client.close());
    expect((await whole.client.callTool({ name: 'c_count', arguments: {} })).structuredContent).toMatchObject(
      {
        results: { calls: 0 },
      },
    );
  });

  it('I6: a profile’s envelope cannot differ from an advertised envelope schema', async () => {
    const file = writeConfig(
      [
        'output: { advertise_schema: true }',
        'profiles:',
        "  brief: { tools: ['c_*'], output: { format: response } }",
        'servers:',
        fixtureEntry('c', 'counter'),
      ].join('\n'),
    );
    const checked = await runCli(['check', '--config', file]);
    expect(checked.code).toBe(3);
    expect(checked.stderr).toContain(
      'profiles.brief.output.format: "response" differs from output.format "results"',
    );
  });
});
