/**
 * The bench downstream, the same for every target: the server of `echo-server.ts` over stdio, or
 * over Streamable HTTP with `--http`.
 *
 * Flags: `--tools N` (default 0) more catalog tools; `--http` (Streamable HTTP on 127.0.0.1, a free
 * port, printed to stderr as `listening http://127.0.0.1:<port>/mcp`); stdio otherwise.
 */
import { parseArgs } from 'node:util';
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import { serveHttp } from '../http-host.js';
import { makeEchoServer } from './echo-server.js';

const { values } = parseArgs({
  options: { tools: { type: 'string', default: '0' }, http: { type: 'boolean', default: false } },
});
const extraTools = Number(values.tools);
if (!Number.isInteger(extraTools) || extraTools < 0) {
  throw new Error(`Expected \`--tools\` to be a non-negative integer, got \`${values.tools}\``);
}

if (values.http) {
  const { url } = await serveHttp(() => makeEchoServer(extraTools));
  process.stderr.write(`listening ${url}\n`);
  process.on('SIGTERM', () => process.exit(0));
} else {
  // The SDK's stdio transport ignores end-of-input; a closed stdin is our cue to go.
  process.stdin.on('end', () => process.exit(0));
  await makeEchoServer(extraTools).connect(new StdioServerTransport());
}
