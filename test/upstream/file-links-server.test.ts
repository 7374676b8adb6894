/**
 * F7 in the upstream server, over InMemoryTransport with an SDK client: with a file store and no
 * downstream resources, the server still announces resources and answers resources/read from the
 * store; a result an MCP App reads in its own shape (U6) keeps its bodies and stores nothing.
 */
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import { ok, type Result } from '../../src/core/result.js';
import { createFileStore, type FileStore } from '../../src/upstream/file-store.js';
import { fakeBackend, wireUpstream } from './fake-backend.js';

const PNG = Buffer.from([0x89, 0x50, 0x4e, 0x47, 9, 8, 7]).toString('base64');
const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

async function wire(result: Result, files: FileStore): Promise<Client> {
  return (
    await wireUpstream(
      fakeBackend(() => Promise.resolve(result)),
      cleanups,
      { files },
    )
  ).client;
}

const withImage = ok('shot', {
  meta: { server: 'demo', tool: 'echo', source: 'text' },
  files: [{ name: 'image-1.png', mimeType: 'image/png', base64: PNG, kind: 'image' }],
  original: { content: [{ type: 'image', data: PNG, mimeType: 'image/png' }] },
});

describe('file links through the upstream server', () => {
  it('F7: without downstream resources the server announces resources and reads its links; the session that made a file owns it, and its close drops it', async () => {
    const files = createFileStore({ maxBytes: 1_000, ttlMs: 60_000 });
    const client = await wire(withImage, files);
    expect(client.getServerCapabilities()?.resources).toBeDefined();
    const answer = await client.request(
      { method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } },
      CallToolResultSchema,
    );
    expect(JSON.stringify(answer)).not.toContain(PNG);
    const [link] = (answer.structuredContent as { returned_file_links: { uri: string }[] })
      .returned_file_links;
    const read = await client.readResource({ uri: link?.uri ?? '' });
    expect(read.contents).toEqual([{ uri: link?.uri, mimeType: 'image/png', blob: PNG }]);
    expect(files.size().files).toBe(1);
    await client.close();
    expect(files.size().files).toBe(0);
  });

  it("F7: a result answered in its server's own shape for an MCP App (U6) keeps its bodies and stores nothing", async () => {
    const files = createFileStore({ maxBytes: 1_000, ttlMs: 60_000 });
    const client = await wire({ ...withImage, rendering: 'original' }, files);
    const answer = await client.request(
      { method: 'tools/call', params: { name: 'demo_echo', arguments: { text: 'x' } } },
      CallToolResultSchema,
    );
    expect(answer.content).toEqual([{ type: 'image', data: PNG, mimeType: 'image/png' }]);
    expect(files.size().files).toBe(0);
  });
});
