/**
 * The first stage of a catalog build: one server's raw listing → the tools it may serve.
 * Applies `tools.include`/`tools.exclude` (T5) and `expose: read_only` (T11), withholds malformed
 * tools with a warning naming them (T12: every per-tool verdict is made here, on the raw listing:
 * not an object, no name, a repeated name, the SDK's Tool schema, schemas that do not compile),
 * and warns about renames and overrides that match no tool (T5: likely typos).
 */
import { paramHeaderProblem } from './param-headers.js';
import { isRecord, ownValue } from './json.js';
import picomatch from 'picomatch';
import { ToolSchema } from '@modelcontextprotocol/core';
import type { CatalogProblem, CatalogServerInput } from './catalog-types.js';
import type { SchemaCompiler } from './schema-compiler.js';
import { closest } from './suggest.js';

/** A listed tool that passed the filters and the checks. */
export interface Candidate {
  readonly server: CatalogServerInput;
  readonly raw: Record<string, unknown>;
  readonly name: string;
}

function matcher(patterns: readonly string[] | undefined): ((name: string) => boolean) | undefined {
  return patterns && patterns.length > 0 ? picomatch([...patterns], { dot: true }) : undefined;
}

/** T12: why a listed tool cannot be served, or `undefined` when it can. */
function checkTool(raw: Record<string, unknown>, compiler: SchemaCompiler): string | undefined {
  // The SDK's own Tool schema: an upstream SDK client rejects a whole tools/list that one bad
  // entry breaks, so a tool we cannot list validly is withheld here instead.
  const shape = ToolSchema.safeParse(raw);
  if (!shape.success) {
    const issue = shape.error.issues[0];
    return `does not match the MCP Tool schema (${issue ? `${issue.path.join('.') || 'tool'}: ${issue.message}` : 'invalid'})`;
  }
  const headers = paramHeaderProblem(raw['inputSchema']);
  if (headers !== undefined) return headers;
  const input = compiler.check(raw['inputSchema'] as Record<string, unknown>);
  if (!input.ok) return `its inputSchema does not compile (${input.dialect}): ${input.error}`;
  if (isRecord(raw['outputSchema'])) {
    const output = compiler.check(raw['outputSchema']);
    if (!output.ok) return `its outputSchema does not compile (${output.dialect}): ${output.error}`;
  }
  return undefined;
}

/** Lists one server's servable tools, after filters (T5, T11) and checks (T12), in listing order. */
export function candidates(
  server: CatalogServerInput,
  compiler: SchemaCompiler,
  problems: CatalogProblem[],
): Candidate[] {
  const out: Candidate[] = [];
  let include: ((name: string) => boolean) | undefined;
  let exclude: ((name: string) => boolean) | undefined;
  try {
    include = matcher(server.include);
    exclude = matcher(server.exclude);
  } catch (error) {
    const detail = error instanceof Error ? error.message : String(error);
    problems.push({
      severity: 'error',
      code: 'invalid_pattern',
      server: server.server,
      message: `Invalid tools.include/exclude pattern on server "${server.server}": ${detail}; none of its tools are listed.`,
    });
    return out;
  }
  const listed = new Set<string>();
  const withhold = (tool: string, why: string): void => {
    problems.push({
      severity: 'warning',
      code: 'malformed_tool',
      server: server.server,
      tool,
      message: `Withheld tool "${tool}" of server "${server.server}": ${why}.`,
    });
  };
  server.tools.forEach((raw, index) => {
    if (!isRecord(raw) || typeof raw['name'] !== 'string' || raw['name'] === '') {
      withhold(`#${index}`, isRecord(raw) ? 'it has no string name' : 'it is not an object');
      return;
    }
    const name = raw['name'];
    // A downstream that lists one name twice cannot have both routed: the first one is kept.
    if (listed.has(name)) {
      withhold(name, 'it repeats the name of an earlier tool of the listing (the first one is kept)');
      return;
    }
    listed.add(name);
    if (include && !include(name)) return;
    if (exclude?.(name)) return;
    // T11: unannotated counts as not read-only (the spec's default).
    if (
      server.expose === 'read_only' &&
      !(isRecord(raw['annotations']) && raw['annotations']['readOnlyHint'] === true)
    )
      return;
    const why = checkTool(raw, compiler);
    if (why) {
      withhold(name, why);
      return;
    }
    out.push({ server, raw, name });
  });
  unused(server, listed, problems);
  return out;
}

/** Renames and overrides that match nothing are likely typos: say so (a listing of 0 says nothing). */
function unused(server: CatalogServerInput, listed: ReadonlySet<string>, problems: CatalogProblem[]): void {
  if (listed.size === 0) return;
  const rename = server.rename ?? {};
  const renamed = new Set([...listed].map((name) => ownValue(rename, name) ?? name));
  for (const from of Object.keys(rename)) {
    if (listed.has(from)) continue;
    const hint = closest(from, listed, { limit: 1 })[0];
    problems.push({
      severity: 'warning',
      code: 'unused_rename',
      server: server.server,
      tool: from,
      message: `tools.rename of server "${server.server}" names "${from}", which it does not list${hint ? ` (did you mean "${hint}"?)` : ''}.`,
    });
  }
  for (const key of Object.keys(server.overrides ?? {})) {
    if (renamed.has(key)) continue;
    const hint = closest(key, renamed, { limit: 1 })[0];
    problems.push({
      severity: 'warning',
      code: 'unused_override',
      server: server.server,
      tool: key,
      message: `tools.overrides of server "${server.server}" names "${key}", which matches no tool (overrides use the name after rename)${hint ? `; did you mean "${hint}"?` : ''}.`,
    });
  }
}
