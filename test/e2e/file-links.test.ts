/**
 * Files as resources (F7) across a process boundary: `serve --http` with `output.files: resource`
 * in front of the files fixture (a 1 MiB image) and the echo fixture (N9 spill), read back by a
 * 2025 host (a session: its files are its own) and a 2026-07-28 host (no session: the link is
 * the key).
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { bigImageBytes } from '../../fixtures/servers/lib.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

async function gateway(): Promise<HttpServe> {
  const file = writeConfig(
    [
      'log_level: warn',
      'output:',
      '  files: resource',
      '  max_inline_bytes: 1024',
      'servers:',
      fixtureEntry('files', 'files'),
      fixtureEntry('echo', 'echo'),
    ].join('\n'),
  );
  const served = await serveHttp(file);
  cleanup.push(() => {
    served.child.kill();
    return served.exited;
  });
  return served;
}

async function legacyClient(url: string): Promise<LegacyClient> {
  const client = new LegacyClient({ name: 'legacy-host', version: '1.0.0' });
  await client.connect(new LegacyHttpTransport(new URL(url)));
  cleanup.push(() => client.close());
  return client;
}

async function modernClient(url: string): Promise<Client> {
  const client = new Client(
    { name: 'modern-host', version: '1.0.0' },
    { versionNegotiation: { mode: { pin: '2026-07-28' } } },
  );
  await client.connect(new StreamableHTTPClientTransport(new URL(url)));
  cleanup.push(() => client.close());
  return client;
}

interface Link {
  type: string;
  uri: string;
  name: string;
  mimeType: string;
  size: number;
}

function links(result: unknown): Link[] {
  return (result as { structuredContent: { returned_file_links: Link[] } }).structuredContent
    .returned_file_links;
}

describe('files as resources', { timeout: 60_000 }, () => {
  it('F7: a 1 MiB image result carries no base64 anywhere, and resources/read on its link returns the same bytes, in both eras', async () => {
    const served = await gateway();
    const expected = bigImageBytes().toString('base64');
    for (const client of [await legacyClient(served.url), await modernClient(served.url)]) {
      const answer = await client.callTool({ name: 'files_big_image', arguments: {} });
      const wire = JSON.stringify(answer);
      expect(wire).not.toContain(expected.slice(1000, 1100));
      expect(wire.length).toBeLessThan(4096);
      const [link] = links(answer);
      expect(link).toMatchObject({
        type: 'resource_link',
        name: 'image-1.png',
        mimeType: 'image/png',
        size: 1024 * 1024,
      });
      expect((answer as { content: unknown[] }).content).toContainEqual(link);
      const read = await client.readResource({ uri: link?.uri ?? '' });
      expect(read.contents).toEqual([{ uri: link?.uri, mimeType: 'image/png', blob: expected }]);
    }
  });

  it("F7: N9's spilled value uses the same store and reads back as the JSON text", async () => {
    const served = await gateway();
    const client = await modernClient(served.url);
    const rows = Array.from({ length: 100 }, (_, id) => ({ id, name: `row ${id}` }));
    const answer = await client.callTool({ name: 'echo_echo', arguments: { text: JSON.stringify(rows) } });
    const [link] = links(answer);
    expect(link?.mimeType).toBe('application/json');
    const read = await client.readResource({ uri: link?.uri ?? '' });
    expect(JSON.parse((read.contents[0] as { text: string }).text)).toEqual(rows);
  });

  it("F7: another session's link, and a link this process never issued, get a clear error", async () => {
    const served = await gateway();
    const owner = await legacyClient(served.url);
    const other = await legacyClient(served.url);
    const [link] = links(await owner.callTool({ name: 'files_big_image', arguments: {} }));
    await expect(other.readResource({ uri: link?.uri ?? '' })).rejects.toThrow(/belongs to another session/);
    const modern = await modernClient(served.url);
    await expect(modern.readResource({ uri: link?.uri ?? '' })).rejects.toThrow(/belongs to another session/);
    await expect(
      modern.readResource({ uri: 'mcp-normalizer://files/AAAAAAAAAAAAAAAAAAAAAA/x.png' }),
    ).rejects.toThrow(/no file with this link is held by this mcp-normalizer process/);
    // The owner still reads it.
    expect((await owner.readResource({ uri: link?.uri ?? '' })).contents).toHaveLength(1);
  });
});
