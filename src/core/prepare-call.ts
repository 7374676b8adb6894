/**
 * The pure front half of tools/call (CONTRACT T3, T7, T8, T9): look the exposed name up, check
 * the explicit gate, validate the arguments. The order is fixed, lookup → explicit → arguments,
 * so a refused call says the most useful thing first and never reaches a downstream.
 */
import type { Catalog, ExposedTool } from './catalog.js';
import { checkExplicit, stripExplicit } from './explicit.js';
import { failure, type FailureResult } from './result.js';

/** A call that may go downstream. Fits `upstream/server`'s `PreparedForward`. */
export interface PreparedCall {
  readonly kind: 'forward';
  readonly entry: ExposedTool;
  /** The downstream server's key. */
  readonly server: string;
  /** The downstream tool's original name: what the downstream is asked to run. */
  readonly tool: string;
  /** The arguments to forward: `explicit_action` removed (T7), every other key untouched. */
  readonly arguments: Record<string, unknown>;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Arguments nested deeper than this are refused (no tool schema needs more; see below). */
export const MAX_ARGUMENT_DEPTH = 256;

/** Whether `value` nests objects or arrays deeper than `max` levels. Iterative: never overflows. */
function deeperThan(value: unknown, max: number): boolean {
  const stack: { node: unknown; depth: number }[] = [{ node: value, depth: 0 }];
  while (stack.length > 0) {
    const { node, depth } = stack.pop() as { node: unknown; depth: number };
    if (typeof node !== 'object' || node === null) continue;
    if (depth >= max) return true;
    for (const child of Array.isArray(node) ? node : Object.values(node)) {
      if (typeof child === 'object' && child !== null) stack.push({ node: child, depth: depth + 1 });
    }
  }
  return false;
}

/** How many issues are spelled out in the one-line error (all of them are in `errorData`). */
const ISSUES_IN_MESSAGE = 3;

/**
 * Decides whether a tools/call may be forwarded. Omitted arguments (`undefined`) count as `{}`,
 * as MCP allows; any other non-object is one `invalid_arguments` issue at the root.
 * @example
 * const prepared = prepareCall(catalog, 'fs_read', { path: 'a.txt' });
 * if (isFailure(prepared)) return prepared; // unknown_tool, consent_required, invalid_arguments
 */
export function prepareCall(
  catalog: Pick<Catalog, 'get' | 'suggest'>,
  exposedName: string,
  args: unknown,
): PreparedCall | FailureResult {
  const entry = catalog.get(exposedName);
  if (!entry) {
    // T9: an isError result the agent can read, with close names to try.
    const suggestions = catalog.suggest(exposedName);
    const hint =
      suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
    return failure('unknown_tool', `Unknown tool "${exposedName}".${hint}`, {
      // No downstream tool exists: `tool` is the name as called, so the log line still says what.
      meta: { tool: exposedName, source: 'proxy' },
      errorData: { tool: exposedName, suggestions },
    });
  }
  const meta = { server: entry.server, tool: entry.tool, source: 'proxy' as const };
  const given = args === undefined ? {} : args;
  let forwarded = given;
  if (entry.gate) {
    // T7: consent first; then the argument disappears before validation and forwarding.
    const refused = checkExplicit(given, entry.gate, {
      name: entry.name,
      server: entry.server,
      tool: entry.tool,
    });
    if (refused) return refused;
    forwarded = stripExplicit(given as Record<string, unknown>);
  }
  if (deeperThan(forwarded, MAX_ARGUMENT_DEPTH)) {
    // Refused here, or JSON.stringify on the way down overflows the stack and the failure reads
    // as the downstream's (`downstream_error`).
    return failure(
      'invalid_arguments',
      `Invalid arguments for "${entry.name}": nested more than ${MAX_ARGUMENT_DEPTH} levels deep.`,
      {
        meta,
        errorData: { issues: [{ path: '', message: `nested more than ${MAX_ARGUMENT_DEPTH} levels deep` }] },
      },
    );
  }
  const issues = entry.validate(forwarded);
  if (issues || !isRecord(forwarded)) {
    // T8: every issue in errorData; the first few in the message.
    const list = issues ?? [{ path: '', message: 'arguments must be an object' }];
    const shown = list.slice(0, ISSUES_IN_MESSAGE).map((i) => `${i.path || '(arguments)'}: ${i.message}`);
    const more = list.length > ISSUES_IN_MESSAGE ? ` (and ${list.length - ISSUES_IN_MESSAGE} more)` : '';
    return failure(
      'invalid_arguments',
      `Invalid arguments for "${entry.name}": ${shown.join('; ')}${more}.`,
      {
        meta,
        errorData: { issues: list },
      },
    );
  }
  return { kind: 'forward', entry, server: entry.server, tool: entry.tool, arguments: forwarded };
}
