/**
 * The tables the CLI prints: exposed tools (`serve --http`, `check`, `tools`) and servers
 * (`check`), plus the catalog problems, one line each.
 */
import type { ServerHealth } from '../app/proxy.js';
import type { CatalogProblem, ExposedTool } from '../core/catalog.js';
import { formatTable } from './table.js';

/** What a tool's row says about it: read-only, destructive, gated behind explicit_action (T7). */
function flags(tool: ExposedTool): string {
  const annotations = tool.definition.annotations;
  const out: string[] = [];
  if (annotations?.readOnlyHint === true) out.push('read-only');
  if (annotations?.destructiveHint === true && annotations.readOnlyHint !== true) out.push('destructive');
  if (tool.gate !== undefined) out.push('explicit');
  // S1: not in tools/list; found with search_tools, run with call_tool.
  if (tool.searchOnly === true) out.push('search');
  return out.join(',');
}

/** The exposed-tool table: exposed name, server, downstream tool, flags, description. */
export function formatToolTable(tools: readonly ExposedTool[]): string {
  if (tools.length === 0) return '(no tools exposed)';
  return formatTable(tools, [
    { header: 'TOOL', value: (tool) => tool.name },
    { header: 'SERVER', value: (tool) => tool.server },
    { header: 'DOWNSTREAM', value: (tool) => tool.tool },
    { header: 'FLAGS', value: flags },
    { header: 'DESCRIPTION', value: (tool) => tool.definition.description ?? '', maxWidth: 60 },
  ]);
}

/** One row of the server table: a server's health, or a disabled server. */
export type ServerRow = Omit<ServerHealth, 'state'> & { readonly state: ServerHealth['state'] | 'disabled' };

/** The server table: name, state, protocol era and revision, exposed tools, last error. */
export function formatServerTable(servers: readonly ServerRow[]): string {
  if (servers.length === 0) return '(no servers configured)';
  return formatTable(servers, [
    { header: 'SERVER', value: (server) => server.name },
    { header: 'STATE', value: (server) => server.state },
    {
      header: 'PROTOCOL',
      value: (server) =>
        server.era === undefined ? '' : `${server.era} ${server.protocol_version ?? ''}`.trimEnd(),
    },
    { header: 'TOOLS', value: (server) => String(server.tools) },
    { header: 'ERROR', value: (server) => server.error ?? '', maxWidth: 80 },
  ]);
}

/** One line per catalog problem: `error: Name collision on ...`. */
export function formatProblems(problems: readonly CatalogProblem[]): string[] {
  return problems.map((problem) => `${problem.severity}: ${problem.message}`);
}
