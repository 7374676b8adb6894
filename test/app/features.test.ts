/**
 * U5 through the composition root: a real SDK Client on our upstream server, in-memory downstream
 * McpServers behind the pool (no processes): prompts, resources, templates, completions, list
 * changes, logging, collisions and a down server.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { completable } from '@modelcontextprotocol/sdk/server/completable.js';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import {
  ErrorCode,
  LoggingMessageNotificationSchema,
  PromptListChangedNotificationSchema,
  ResourceListChangedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { z } from 'zod';
import { createProxy } from '../../src/app/proxy.js';
import type { ServerConfig } from '../../src/config/types.js';
import { memoryConfig, runtimeConfig } from '../helpers/fixtures.js';
import { captureLogger, MemoryTransports } from '../helpers/memory-servers.js';
import type { Connectable } from '../helpers/memory-servers.js';

const stops: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const stop of stops.splice(0)) await stop();
});

const config = runtimeConfig;

const memory = memoryConfig;

const PNG = 'iVBORw0KGgo=';

/** A downstream with two prompts (one completable), two resources, a template and a log tool. */
function notesServer(): McpServer {
  const server = new McpServer({ name: 'notes', version: '1.0.0' }, { capabilities: { logging: {} } });
  server.registerPrompt('greeting', { description: 'Say hello.' }, () => ({
    messages: [{ role: 'user', content: { type: 'text', text: 'Hello!' } }],
  }));
  server.registerPrompt(
    'summarize',
    {
      description: 'Summarize a topic.',
      argsSchema: {
        topic: completable(z.string(), (v) => ['mcp', 'markdown', 'tests'].filter((t) => t.startsWith(v))),
      },
    },
    ({ topic }) => ({ messages: [{ role: 'user', content: { type: 'text', text: `Summarize ${topic}.` } }] }),
  );
  server.registerResource('readme', 'notes://readme', { mimeType: 'text/plain' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'text/plain', text: 'read me' }],
  }));
  server.registerResource('logo', 'notes://logo.png', { mimeType: 'image/png' }, (uri) => ({
    contents: [{ uri: uri.href, mimeType: 'image/png', blob: PNG }],
  }));
  server.registerResource(
    'note',
    new ResourceTemplate('notes://note/{name}', {
      list: undefined,
      complete: { name: (v) => ['alpha', 'beta'].filter((n) => n.startsWith(v)) },
    }),
    {},
    (uri, { name }) => ({ contents: [{ uri: uri.href, text: `note ${String(name)}` }] }),
  );
  server.registerTool(
    'log',
    { inputSchema: { text: z.string(), level: z.enum(['warning', 'error']).optional() } },
    async ({ text, level = 'warning' }) => {
      await server.sendLoggingMessage({ level, logger: 'db', data: text });
      return { content: [{ type: 'text', text: 'ok' }] };
    },
  );
  server.registerTool('add_prompt', { inputSchema: { name: z.string() } }, ({ name }) => {
    server.registerPrompt(name, {}, () => ({ messages: [] }));
    return { content: [] };
  });
  server.registerTool('add_resource', { inputSchema: { uri: z.string() } }, ({ uri }) => {
    server.registerResource(uri, uri, {}, (u) => ({ contents: [{ uri: u.href, text: 'new' }] }));
    return { content: [] };
  });
  return server;
}

async function started(servers: ServerConfig[], builders: Record<string, () => McpServer>) {
  const { logger, lines } = captureLogger();
  const transports = new MemoryTransports(builders);
  const proxy = createProxy(config(servers), { logger, pool: { transports } });
  stops.push(() => proxy.stop({ graceMs: 0 }));
  await proxy.start();
  const client = await clientOf(proxy);
  return { proxy, client, lines, transports };
}

/** A 2025 client of `proxy`'s upstream server over an in-memory pair, closed after the test. */
async function clientOf(proxy: ReturnType<typeof createProxy>): Promise<Client> {
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await proxy.upstream.connect(serverSide);
  const client = new Client({ name: 'features-test', version: '1.0.0' });
  await client.connect(clientSide);
  stops.push(() => client.close());
  return client;
}

describe('prompts and resources through the proxy', () => {
  it('U5/Q5: announces prompts and resources with listChanged, completions, and subscribe (to a 2025 client)', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const capabilities = client.getServerCapabilities();
    expect(capabilities?.prompts).toEqual({ listChanged: true });
    expect(capabilities?.resources).toEqual({ listChanged: true, subscribe: true });
    expect(capabilities?.completions).toEqual({});
  });

  it('U5/T1: prompts are listed under exposed names and prompts/get reaches the downstream prompt with its arguments', async () => {
    const { client } = await started([memory('notes', { prefix: 'kb' })], { notes: notesServer });
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['kb_greeting', 'kb_summarize']);
    expect(prompts[1]?.arguments).toEqual([expect.objectContaining({ name: 'topic', required: true })]);
    const got = await client.getPrompt({ name: 'kb_summarize', arguments: { topic: 'mcp' } });
    expect(got.messages).toEqual([{ role: 'user', content: { type: 'text', text: 'Summarize mcp.' } }]);
  });

  it("U5/N12: a prompt's or read's _meta reaches a 2025 client valid: progressToken and reserved keys left out, ui:// exposed", async () => {
    const odd = {
      progressToken: {},
      'io.modelcontextprotocol/related-task': { taskId: 't' },
      ui: { resourceUri: 'ui://v/app.html' },
      k: 1,
    };
    const metaServer = (): McpServer => {
      const server = new McpServer({ name: 'odd', version: '1.0.0' });
      server.registerPrompt('p', {}, () => ({ messages: [], _meta: odd }) as never);
      server.registerResource(
        'r',
        'odd://r',
        {},
        (uri) => ({ contents: [{ uri: uri.href, text: 'x' }], _meta: odd }) as never,
      );
      return server;
    };
    const { client } = await started([memory('odd')], { odd: metaServer });
    const kept = { ui: { resourceUri: 'ui://odd/v/app.html' }, k: 1 };
    expect((await client.getPrompt({ name: 'odd_p' }))._meta).toEqual(kept);
    expect((await client.readResource({ uri: 'odd+odd://r' }))._meta).toEqual(kept);
  });

  it('U5: an unknown prompt is a JSON-RPC InvalidParams error naming close matches', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const error = await client.getPrompt({ name: 'notes_sumarize' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: ErrorCode.InvalidParams,
      data: { suggestions: ['notes_summarize'] },
    });
    expect(String((error as Error).message)).toContain(
      'Unknown prompt "notes_sumarize"; did you mean "notes_summarize"?',
    );
  });

  it('U5: resources and templates are namespaced; text, blob and template reads route back to the server', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['notes+notes://readme', 'notes+notes://logo.png']);
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['notes+notes://note/{name}']);
    expect((await client.readResource({ uri: 'notes+notes://readme' })).contents).toEqual([
      { uri: 'notes+notes://readme', mimeType: 'text/plain', text: 'read me' },
    ]);
    expect((await client.readResource({ uri: 'notes+notes://logo.png' })).contents).toEqual([
      { uri: 'notes+notes://logo.png', mimeType: 'image/png', blob: PNG },
    ]);
    expect((await client.readResource({ uri: 'notes+notes://note/alpha' })).contents).toEqual([
      { uri: 'notes+notes://note/alpha', text: 'note alpha' },
    ]);
  });

  it('U5: an unknown URI is InvalidParams with close matches; a downstream refusal keeps its own code', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const unknown = await client.readResource({ uri: 'notes://readme' }).catch((e: unknown) => e);
    expect(unknown).toMatchObject({
      code: ErrorCode.InvalidParams,
      data: { suggestions: ['notes+notes://readme'] },
    });
    const refused = await client.readResource({ uri: 'notes+notes://nothing' }).catch((e: unknown) => e);
    expect(refused).toMatchObject({ data: { error_type: 'downstream_error', server: 'notes' } });
  });

  it('U5: a server with prefix "" keeps its prompt names and URIs unchanged', async () => {
    const { client } = await started([memory('notes', { prefix: '' })], { notes: notesServer });
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toEqual(['greeting', 'summarize']);
    expect((await client.listResources()).resources.map((r) => r.uri)).toEqual([
      'notes://readme',
      'notes://logo.png',
    ]);
    expect((await client.readResource({ uri: 'notes://note/beta' })).contents[0]).toMatchObject({
      text: 'note beta',
    });
  });

  it('U5: completions route by reference: a prompt by exposed name, a template by exposed URI', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const byPrompt = await client.complete({
      ref: { type: 'ref/prompt', name: 'notes_summarize' },
      argument: { name: 'topic', value: 'm' },
    });
    expect(byPrompt.completion.values).toEqual(['mcp', 'markdown']);
    const byTemplate = await client.complete({
      ref: { type: 'ref/resource', uri: 'notes+notes://note/{name}' },
      argument: { name: 'name', value: 'b' },
    });
    expect(byTemplate.completion.values).toEqual(['beta']);
    const unknown = await client
      .complete({ ref: { type: 'ref/prompt', name: 'nope' }, argument: { name: 'x', value: '' } })
      .catch((e: unknown) => e);
    expect(unknown).toMatchObject({ code: ErrorCode.InvalidParams });
  });

  it('U5/T4: two unprefixed servers with the same prompt and URI: the later one is withheld and logged as an error', async () => {
    const { proxy, client, lines } = await started(
      [memory('a', { prefix: '' }), memory('b', { prefix: '' })],
      {
        a: notesServer,
        b: notesServer,
      },
    );
    expect((await client.listPrompts()).prompts).toHaveLength(2);
    expect(proxy.features().problems.map((p) => [p.kind, p.server])).toEqual([
      ['prompt', 'b'],
      ['prompt', 'b'],
      ['resource', 'b'],
      ['resource', 'b'],
      ['resource_template', 'b'],
    ]);
    expect(
      lines.filter((l) => l['level'] === 50 && String(l['msg']).startsWith('Name collision on prompt')),
    ).toHaveLength(2);
  });

  it('U5: a downstream prompt or resource list change is re-listed and announced upstream', async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const prompts = vi.fn();
    const resources = vi.fn();
    client.setNotificationHandler(PromptListChangedNotificationSchema, prompts);
    client.setNotificationHandler(ResourceListChangedNotificationSchema, resources);
    // T10: a client hears of the changes of the lists it has been answered.
    await client.listPrompts();
    await client.listResources();
    await client.callTool({ name: 'notes_add_prompt', arguments: { name: 'fresh' } });
    await vi.waitFor(() => expect(prompts).toHaveBeenCalled());
    expect((await client.listPrompts()).prompts.map((p) => p.name)).toContain('notes_fresh');
    expect(resources).not.toHaveBeenCalled();
    await client.callTool({ name: 'notes_add_resource', arguments: { uri: 'notes://new' } });
    await vi.waitFor(() => expect(resources).toHaveBeenCalled());
    expect((await client.listResources()).resources.map((r) => r.uri)).toContain('notes+notes://new');
  });

  it('T10/P1: a prompt list that waits for a server still starting answers with its prompts and no list_changed ahead of them', async () => {
    const { logger } = captureLogger();
    let open: () => void = () => undefined;
    const gate = new Promise<void>((resolve) => (open = resolve));
    const late = (): Connectable => ({
      connect: async (transport) => {
        await gate;
        await notesServer().connect(transport);
      },
    });
    const transports = new MemoryTransports({ notes: notesServer, late });
    const cfg = { ...config([memory('notes'), memory('late')]), listWaitMs: 60_000 };
    const proxy = createProxy(cfg, { logger, pool: { transports }, startedAt: Date.now() });
    stops.push(() => proxy.stop({ graceMs: 0 }));
    void proxy.start();
    await proxy.pool.firstAttempt('notes');
    const client = await clientOf(proxy);
    const prompts = vi.fn();
    client.setNotificationHandler(PromptListChangedNotificationSchema, prompts);
    const listing = client.listPrompts();
    await client.ping();
    open();
    expect((await listing).prompts.map((p) => p.name)).toContain('late_greeting');
    await client.ping();
    expect(prompts).not.toHaveBeenCalled();
    await client.callTool({ name: 'notes_add_prompt', arguments: { name: 'fresh' } });
    await vi.waitFor(() => expect(prompts).toHaveBeenCalledTimes(1));
  });

  it('U5: a downstream log message reaches the upstream client with the server in logger, and pino', async () => {
    const { client, lines } = await started([memory('notes')], { notes: notesServer });
    const messages: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    await client.callTool({ name: 'notes_log', arguments: { text: 'disk almost full' } });
    await vi.waitFor(() => expect(messages).toHaveLength(1));
    expect(messages[0]).toEqual({ level: 'warning', logger: 'notes/db', data: 'disk almost full' });
    expect(lines).toContainEqual(
      expect.objectContaining({ level: 40, server: 'notes', logger: 'notes/db', msg: 'disk almost full' }),
    );
  });

  it("U5: the upstream client's logging/setLevel filters forwarded messages", async () => {
    const { client } = await started([memory('notes')], { notes: notesServer });
    const messages: unknown[] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void messages.push(n.params));
    await client.setLoggingLevel('error');
    await client.callTool({ name: 'notes_log', arguments: { text: 'only a warning' } });
    await client.callTool({ name: 'notes_log', arguments: { text: 'broken', level: 'error' } });
    await vi.waitFor(() => expect(messages).toHaveLength(1));
    expect(messages).toEqual([{ level: 'error', logger: 'notes/db', data: 'broken' }]);
  });

  it('U5/P4: while a server is down, its prompts and resources stay listed and a get or read fails at once', async () => {
    const { client, transports, proxy } = await started([memory('notes')], { notes: notesServer });
    await transports.drop('notes');
    await vi.waitFor(() => expect(proxy.snapshot()[0]?.state).not.toBe('ready'));
    expect((await client.listPrompts()).prompts).toHaveLength(2);
    const error = await client.getPrompt({ name: 'notes_greeting' }).catch((e: unknown) => e);
    expect(error).toMatchObject({
      code: ErrorCode.InternalError,
      data: { error_type: 'downstream_unavailable' },
    });
  });
});
