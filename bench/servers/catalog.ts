/**
 * A bench downstream with a real-sized vocabulary: the tools/list of the 17 real servers recorded
 * in fixtures/catalogs/ (397 tools, each named `<server>_<tool>` so no two collide), repeated under
 * new names (`<name>_<copy>`) until `--tools N`
 * (default 2000). Every call answers `ok` at once. Stdio only.
 */
import { readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { parseArgs } from 'node:util';
import { Server } from '@modelcontextprotocol/sdk/server/index.js';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { CallToolRequestSchema, ListToolsRequestSchema, type Tool } from '@modelcontextprotocol/sdk/types.js';

const { values } = parseArgs({ options: { tools: { type: 'string', default: '2000' } } });
const size = Number(values.tools);
if (!Number.isInteger(size) || size < 1) {
  throw new Error(`Expected \`--tools\` to be a positive integer, got \`${values.tools}\``);
}

const dir = join(dirname(fileURLToPath(import.meta.url)), '..', '..', '..', 'fixtures', 'catalogs');
const recorded = readdirSync(dir)
  .filter((file) => file.endsWith('.json'))
  .sort()
  .flatMap((file) => {
    const entry = JSON.parse(readFileSync(join(dir, file), 'utf8')) as { server: string; tools: Tool[] };
    return entry.tools.map((tool) => ({ ...tool, name: `${entry.server}_${tool.name}` }));
  });
const tools: Tool[] = Array.from({ length: size }, (_, i) => {
  const tool = recorded[i % recorded.length] as Tool;
  const copy = Math.floor(i / recorded.length);
  return copy === 0 ? tool : { ...tool, name: `${tool.name}_${copy}` };
});

const server = new Server({ name: 'catalog', version: '1.0.0' }, { capabilities: { tools: {} } });
server.setRequestHandler(ListToolsRequestSchema, () => ({ tools }));
server.setRequestHandler(CallToolRequestSchema, () => ({ content: [{ type: 'text', text: 'ok' }] }));
process.stdin.on('end', () => process.exit(0));
await server.connect(new StdioServerTransport());
