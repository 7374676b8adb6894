/**
 * MCP Apps through the gateway (U6, T13, N11, N12), with a real MCP App:
 * `@modelcontextprotocol/server-pdf` (ext-apps' PDF viewer), direct and behind `serve` over stdio.
 * What a host does with it is what this asserts: it lists the tools and hides those whose
 * `_meta.ui.visibility` leaves out the model, reads the viewer named by `_meta.ui.resourceUri`,
 * calls `display_pdf` for the model (whose text tells the agent what to do next), and lets the
 * viewer call its own server's tools by their own names.
 */
import { join } from 'node:path';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { CallToolResultSchema } from '@modelcontextprotocol/sdk/types.js';
import type { CallToolResult, Tool } from '@modelcontextprotocol/sdk/types.js';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio, writeConfig, type StdioSession } from '../e2e/cli-process.js';
import { readFileSync } from 'node:fs';
import { ROOT, START_TIMEOUT_MS } from './real-servers.js';

const PDF = join(ROOT, 'fixtures', 'files', 'two-pages.pdf');
const PDF_URL = `file://${PDF}`;
// Its package.json is not exported, so `installed()` cannot resolve it: read it from the tree.
const PACKAGE_DIR = join(ROOT, 'node_modules', '@modelcontextprotocol', 'server-pdf');
const server = JSON.parse(readFileSync(join(PACKAGE_DIR, 'package.json'), 'utf8')) as {
  name: string;
  version: string;
};
const ARGS = [join(PACKAGE_DIR, 'dist', 'index.js'), '--stdio', PDF];

/** What a host that supports MCP Apps offers the model: tools whose visibility includes it. */
function forModel(tools: readonly Tool[]): string[] {
  return tools
    .filter((tool) => {
      const visibility = (tool._meta?.['ui'] as { visibility?: string[] } | undefined)?.visibility;
      return visibility === undefined || visibility.includes('model');
    })
    .map((tool) => tool.name);
}

function uiUri(tool: Tool | undefined): string | undefined {
  return (tool?._meta?.['ui'] as { resourceUri?: string } | undefined)?.resourceUri;
}

async function call(client: Client, name: string, args: Record<string, unknown>): Promise<CallToolResult> {
  return client.request({ method: 'tools/call', params: { name, arguments: args } }, CallToolResultSchema);
}

describe(`${server.name} ${server.version}, an MCP App, direct and through the gateway`, () => {
  let direct: Client;
  let gateway: StdioSession;
  let directTools: Tool[];
  let gatewayTools: Tool[];

  beforeAll(async () => {
    direct = new Client({ name: 'interop-direct', version: '1.0.0' });
    await direct.connect(
      new StdioClientTransport({ command: process.execPath, args: ARGS, stderr: 'ignore' }),
    );
    directTools = (await direct.listTools()).tools;
    const config = writeConfig(
      [
        'servers:',
        '  pdf:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: ${JSON.stringify(ARGS)}`,
      ].join('\n'),
    );
    gateway = await connectStdio(config);
    gatewayTools = (await gateway.client.listTools()).tools;
  }, START_TIMEOUT_MS);

  afterAll(async () => {
    await direct?.close();
    await gateway?.client.close();
  });

  it('T13/U6: every tool keeps its _meta; a host offers the model the same tools as direct', () => {
    expect(gatewayTools.map((tool) => tool.name)).toEqual(directTools.map((tool) => `pdf_${tool.name}`));
    expect(forModel(gatewayTools)).toEqual(forModel(directTools).map((name) => `pdf_${name}`));
    // server-pdf marks six tools app-only: a host does not offer them to the model, direct or not.
    expect(directTools.length - forModel(directTools).length).toBe(6);
    for (const tool of directTools) {
      const exposed = gatewayTools.find((candidate) => candidate.name === `pdf_${tool.name}`);
      const visibility = (tool._meta?.['ui'] as { visibility?: unknown } | undefined)?.visibility;
      expect((exposed?._meta?.['ui'] as { visibility?: unknown } | undefined)?.visibility, tool.name).toEqual(
        visibility,
      );
    }
  });

  it("U6: display_pdf's viewer is a ui:// resource the gateway serves, byte for byte", async () => {
    const directUri = uiUri(directTools.find((tool) => tool.name === 'display_pdf'));
    const exposedUri = uiUri(gatewayTools.find((tool) => tool.name === 'pdf_display_pdf'));
    expect(directUri).toBe('ui://pdf-viewer/mcp-app.html');
    expect(exposedUri).toBe('ui://pdf/pdf-viewer/mcp-app.html');
    const listed = (await gateway.client.listResources()).resources.map((resource) => resource.uri);
    expect(listed).toContain(exposedUri);
    const viaGateway = await gateway.client.readResource({ uri: exposedUri as string });
    const viaDirect = await direct.readResource({ uri: directUri as string });
    const [content] = viaGateway.contents;
    expect(content?.uri).toBe(exposedUri);
    expect(content?.mimeType).toBe('text/html;profile=mcp-app');
    expect((content as { text?: string }).text).toBe((viaDirect.contents[0] as { text?: string }).text);
    expect(content?._meta).toEqual(viaDirect.contents[0]?._meta);
  });

  it("N11/U6: display_pdf answers as direct: the agent's instructions in its text, the viewer's data in structuredContent", async () => {
    const viaDirect = await call(direct, 'display_pdf', { url: PDF_URL });
    const viaGateway = await call(gateway.client, 'pdf_display_pdf', { url: PDF_URL });
    const text = (result: CallToolResult) =>
      result.content.map((block) => (block.type === 'text' ? block.text : '')).join('\n');
    expect(text(viaDirect)).toContain('DO NOT call display_pdf again');
    expect(text(viaGateway)).toContain('DO NOT call display_pdf again');
    expect(viaGateway.isError).not.toBe(true);
    const structured = viaGateway.structuredContent as {
      viewUUID?: string;
      url?: string;
      totalBytes?: number;
    };
    expect(typeof structured.viewUUID).toBe('string');
    expect(structured.url).toBe(PDF_URL);
    expect(structured.totalBytes).toBe((viaDirect.structuredContent as { totalBytes: number }).totalBytes);
    // N12: the result's _meta (the viewer reads viewUUID there) travels.
    expect(viaGateway._meta?.['viewUUID']).toBe(structured.viewUUID);
  });

  it('U6: the viewer calls its app-only tool by its own name, through the gateway, and gets its shape', async () => {
    const args = { url: PDF_URL, offset: 0, byteCount: 64 };
    const viaDirect = await call(direct, 'read_pdf_bytes', args);
    const viaGateway = await call(gateway.client, 'read_pdf_bytes', args);
    expect(viaGateway.isError).not.toBe(true);
    expect(viaGateway.structuredContent).toEqual(viaDirect.structuredContent);
    expect(viaGateway.content).toEqual(viaDirect.content);
  });

  it("N11: list_pdfs (no app metadata) is enveloped, and its prose reaches the model's text as a note", async () => {
    const result = await call(gateway.client, 'pdf_list_pdfs', {});
    const envelope = result.structuredContent as {
      results: { localFiles: string[] };
      meta_data: { notes?: string[] };
    };
    expect(envelope.results.localFiles).toEqual([PDF_URL]);
    expect(envelope.meta_data.notes?.join('\n')).toContain('Available PDFs');
    expect(result.content[0]?.type === 'text' ? result.content[0].text : '').toContain('Available PDFs');
  });
});
