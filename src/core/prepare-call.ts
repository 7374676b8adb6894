/**
 * The pure front half of tools/call (CONTRACT T3, T7, T8, T9): look the exposed name up, check
 * the explicit gate, validate the arguments. The order is fixed, lookup → explicit → arguments,
 * so a refused call says the most useful thing first and never reaches a downstream. In search
 * mode (S2, S4) `search_tools` is answered here, and `call_tool` is unwrapped into the call it
 * names, which then goes through exactly the same steps.
 */
import type { Catalog, ExposedTool } from './catalog.js';
import { declarationOf } from './code-mode.js';
import { checkExplicit, stripExplicit } from './explicit.js';
import type { CallAccess, Verdict } from './policy.js';
import { failure, ok, type FailureResult, type Result } from './result.js';
import {
  readCallArguments,
  readSearchArguments,
  searchMatch,
  type PairIssue,
  type SearchPair,
} from './search.js';
import { deeperThan, isRecord } from './json.js';
import { withoutNullParams } from './param-headers.js';
import { ECHOED_NAME_CHARS, echoedName } from './naming.js';

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
  /** S4: the exposed name `call_tool` named (the name the call is logged and answered under). */
  readonly exposedName?: string;
  /** P1, K2: how long the call waited for its server to start before it was prepared (ms). */
  readonly waitedMs?: number;
}

/** What {@link prepareCall} reads of the catalog. */
export type CallCatalog = Pick<Catalog, 'get' | 'suggest'> & Partial<Pick<Catalog, 'searchPair' | 'search'>>;

/** Arguments nested deeper than this are refused (no tool schema needs more; see below). */
export const MAX_ARGUMENT_DEPTH = 256;

/** How many issues are spelled out in the one-line error (all of them are in `errorData`). */
const ISSUES_IN_MESSAGE = 3;

/**
 * Decides whether a tools/call may be forwarded, or answers it here. Omitted arguments
 * (`undefined`) count as `{}`, as MCP allows; any other non-object is one `invalid_arguments`
 * issue at the root. A Result is the call's answer: a refusal (T7–T9), or `search_tools`' matches.
 * @example
 * const prepared = prepareCall(catalog, 'fs_read', { path: 'a.txt' });
 * if (!isForward(prepared)) return prepared; // unknown_tool, consent_required, invalid_arguments
 */
export function prepareCall(
  catalog: CallCatalog,
  exposedName: string,
  args: unknown,
  access?: CallAccess,
): PreparedCall | Result {
  const pair = catalog.searchPair;
  if (pair !== undefined && (exposedName === pair.search || exposedName === pair.call))
    return preparePair(catalog, pair, exposedName, args, access);
  return prepareTool(catalog, exposedName, args, access);
}

/**
 * I3: the caller's policy refuses `name`: `access_denied`, saying why (no rule for the caller, not
 * in its rule's allow list, or a scope it lacks, I4).
 */
function denied(name: string, verdict: Verdict & { allowed: false }): FailureResult {
  const why =
    verdict.reason === 'insufficient_scope'
      ? `needs the scope "${verdict.scope}", which the caller's token does not have`
      : verdict.reason === 'no_rule'
        ? 'is not allowed: no access rule matches the caller'
        : verdict.reason === 'not_in_profile'
          ? 'is not in the profile this endpoint serves'
          : verdict.reason === 'profile_not_allowed'
            ? 'is not served to this caller here: its access rule names the profiles it may use'
            : "is not allowed by the caller's access rule";
  return failure('access_denied', `Tool "${name}" ${why}.`, {
    meta: { tool: name, source: 'proxy' },
    errorData: {
      reason: verdict.reason,
      ...(verdict.reason === 'insufficient_scope' ? { scope: verdict.scope } : {}),
    },
  });
}

/** S2, S4: the search pair's calls. */
function preparePair(
  catalog: CallCatalog,
  pair: SearchPair,
  exposedName: string,
  args: unknown,
  access: CallAccess | undefined,
): PreparedCall | Result {
  const meta = { tool: exposedName, source: 'proxy' as const };
  const invalid = (issues: readonly PairIssue[]): FailureResult =>
    failure(
      'invalid_arguments',
      `Invalid arguments for "${exposedName}": ${issues.map((i) => `${i.path || '(arguments)'}: ${i.message}`).join('; ')}.`,
      { meta, errorData: { issues } },
    );
  if (exposedName === pair.search) {
    const read = readSearchArguments(args);
    if ('issues' in read) return invalid(read.issues);
    // I3: the caller finds only what it may call; the rest of the ranking fills the limit.
    const matches =
      access === undefined
        ? (catalog.search?.(read.query, read.limit) ?? [])
        : (catalog.search?.(read.query, Number.MAX_SAFE_INTEGER) ?? [])
            .filter((tool) => access.sees(tool.name))
            .slice(0, read.limit);
    // M5: in code mode each match says how a snippet calls it; its declaration types the
    // arguments, so the schema beside it would say it twice.
    const match = (tool: ExposedTool): unknown => {
      if (pair.run === undefined) return searchMatch(tool);
      const { input_schema: _schema, ...rest } = searchMatch(tool);
      return {
        ...rest,
        declaration: declarationOf(tool.name, tool.definition.inputSchema, tool.outputSchema),
      };
    };
    return ok({ tools: matches.map(match) }, { meta });
  }
  const read = readCallArguments(args);
  if ('issues' in read) return invalid(read.issues);
  if (read.name === pair.search || read.name === pair.call)
    return invalid([{ path: '/name', message: `call "${read.name}" directly, not through "${pair.call}"` }]);
  const prepared = prepareTool(catalog, read.name, read.arguments, access);
  return isForward(prepared) ? { ...prepared, exposedName: read.name } : prepared;
}

/** Whether {@link prepareCall} let the call through (else it is the call's answer). */
export function isForward(prepared: PreparedCall | Result): prepared is PreparedCall {
  return (prepared as { kind?: unknown }).kind === 'forward';
}

/** T3, T7, T8, T9 for one exposed tool. */
function prepareTool(
  catalog: Pick<Catalog, 'get' | 'suggest'>,
  exposedName: string,
  args: unknown,
  access?: CallAccess,
): PreparedCall | FailureResult {
  const entry = catalog.get(exposedName);
  if (!entry) {
    // T9: an isError result the agent can read, with close names to try. A name far longer than
    // any exposed one is no typo of one (and comparing it would cost its length per tool).
    const suggestions = (
      exposedName.length > 2 * ECHOED_NAME_CHARS ? [] : catalog.suggest(exposedName)
    ).filter((name) => access === undefined || access.sees(name));
    const hint =
      suggestions.length > 0 ? ` Did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
    const shown = echoedName(exposedName);
    return failure('unknown_tool', `Unknown tool "${shown}".${hint}`, {
      // No downstream tool exists: `tool` is the name as called (cut), so the log line says what.
      meta: { tool: shown, source: 'proxy' },
      errorData: { tool: shown, suggestions },
    });
  }
  // I3, I4: after the lookup, before anything about the call is checked or forwarded.
  const verdict = access?.decide(exposedName);
  if (verdict !== undefined && !verdict.allowed) return denied(exposedName, verdict);
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
  // SEP-2243: an optional header-mirrored param sent as null is absent (no header, no key).
  if (entry.nullableParams !== undefined && isRecord(forwarded))
    forwarded = withoutNullParams(forwarded, entry.nullableParams);
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
