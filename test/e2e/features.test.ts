/**
 * U5 end to end: `mcp-normalizer serve` over stdio (the built bin) in front of the real
 * prompts-resources fixture as a child process: prompts, resources, a template read, a
 * completion, and a downstream log message forwarded with the server's name.
 */
import {
  LoggingMessageNotificationSchema,
  ResourceUpdatedNotificationSchema,
} from '@modelcontextprotocol/sdk/types.js';
import type { LoggingMessageNotification } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import type { StdioSession } from './cli-process.js';
import { connectStdio, fixtureEntry, writeConfig } from './cli-process.js';

describe('e2e: prompts and resources over stdio', () => {
  let session: StdioSession;
  beforeAll(async () => {
    session = await connectStdio(writeConfig(`servers:\n${fixtureEntry('notes', 'prompts-resources')}\n`));
  });
  afterAll(async () => {
    await session?.client.close();
  });

  it('U5: lists, gets, reads (text, blob, template), completes and forwards logs through the real fixture', async () => {
    const { client } = session;
    const { prompts } = await client.listPrompts();
    expect(prompts.map((p) => p.name)).toEqual(['notes_greeting', 'notes_summarize']);
    const prompt = await client.getPrompt({ name: 'notes_summarize', arguments: { topic: 'mcp' } });
    expect(prompt.messages[0]?.content).toEqual({ type: 'text', text: 'Summarize mcp (brief).' });

    const { resources } = await client.listResources();
    expect(resources.map((r) => r.uri)).toEqual(['notes+notes://readme', 'notes+notes://logo.png']);
    const text = await client.readResource({ uri: 'notes+notes://readme' });
    expect(text.contents[0]).toMatchObject({ uri: 'notes+notes://readme', text: 'Notes fixture: read me.' });
    const blob = await client.readResource({ uri: 'notes+notes://logo.png' });
    expect(blob.contents[0]).toMatchObject({ mimeType: 'image/png', blob: expect.stringMatching(/^iVBOR/) });
    const { resourceTemplates } = await client.listResourceTemplates();
    expect(resourceTemplates.map((t) => t.uriTemplate)).toEqual(['notes+notes://note/{name}']);
    const note = await client.readResource({ uri: 'notes+notes://note/alpha' });
    expect(note.contents[0]).toMatchObject({ uri: 'notes+notes://note/alpha', text: 'The first note.' });

    const topics = await client.complete({
      ref: { type: 'ref/prompt', name: 'notes_summarize' },
      argument: { name: 'topic', value: 'm' },
    });
    expect(topics.completion.values).toEqual(['mcp', 'markdown', 'metrics']);
    const names = await client.complete({
      ref: { type: 'ref/resource', uri: 'notes+notes://note/{name}' },
      argument: { name: 'name', value: 'b' },
    });
    expect(names.completion.values).toEqual(['beta']);

    const logs: LoggingMessageNotification['params'][] = [];
    client.setNotificationHandler(LoggingMessageNotificationSchema, (n) => void logs.push(n.params));
    await client.callTool({ name: 'notes_log', arguments: { text: 'hello from below', level: 'notice' } });
    await vi.waitFor(() => expect(logs).toHaveLength(1));
    expect(logs[0]).toEqual({ level: 'notice', logger: 'notes/fixture', data: 'hello from below' });
  });
});

/** A stdio session in front of `entry`, and the resource URIs its updates named so far. */
async function subscriber(entry: string): Promise<{ session: StdioSession; updated: string[] }> {
  const session = await connectStdio(writeConfig(`servers:\n${entry}\n`));
  const updated: string[] = [];
  session.client.setNotificationHandler(
    ResourceUpdatedNotificationSchema,
    (n) => void updated.push(n.params.uri),
  );
  return { session, updated };
}

describe('e2e: resource subscriptions over stdio', () => {
  it("Q5: a 2025 client subscribes by exposed URI, hears the server's update with it, and unsubscribing ends the downstream subscription", async () => {
    const { session, updated } = await subscriber(fixtureEntry('notes', 'prompts-resources'));
    const { client } = session;
    try {
      expect(client.getServerCapabilities()?.resources).toEqual({ listChanged: true, subscribe: true });
      await client.subscribeResource({ uri: 'notes+notes://readme' });
      // The fixture's own view (its JSON text is the envelope's results, N3).
      const downstream = async (): Promise<unknown> =>
        (
          (await client.callTool({ name: 'notes_subscriptions', arguments: {} })).structuredContent as {
            results: unknown;
          }
        ).results;
      expect(await downstream()).toEqual(['notes://readme']);
      await client.callTool({ name: 'notes_edit_readme', arguments: { text: 'changed' } });
      await vi.waitFor(() => expect(updated).toEqual(['notes+notes://readme']));
      expect((await client.readResource({ uri: 'notes+notes://readme' })).contents[0]).toMatchObject({
        text: 'changed',
      });
      await client.unsubscribeResource({ uri: 'notes+notes://readme' });
      expect(await downstream()).toEqual([]);
      await expect(client.subscribeResource({ uri: 'nobody+notes://readme' })).rejects.toThrow(
        /Unknown resource/,
      );
    } finally {
      await client.close();
    }
  });

  it("Q5: a 2025 client subscribes to a 2026 server's resource: the gateway listens for it, and the update arrives with the exposed URI", async () => {
    const { session, updated } = await subscriber(fixtureEntry('modern', 'modern'));
    const { client } = session;
    try {
      await client.subscribeResource({ uri: 'modern+fixture://counter' });
      await client.callTool({ name: 'modern_touch', arguments: {} });
      await vi.waitFor(() => expect(updated).toEqual(['modern+fixture://counter']));
      await client.unsubscribeResource({ uri: 'modern+fixture://counter' });
    } finally {
      await client.close();
    }
  });
});
