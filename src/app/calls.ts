/**
 * The calls of the composition root: the {@link ToolBackend} the upstream server's call pipeline
 * runs (upstream/server.ts `route`: accept, prepare, authorize, run), and the one home of a
 * call's outcome (R4, L1, O1). Every tools/call answer gets its instruction here (R4: tool →
 * server → global → default, plus the tool's success instruction), its one end line in the log
 * (L1, with that server's child logger) and its count (O1): refusals before any downstream
 * (T7–T9), the pool's Results, and the failures the server answers itself (shutting down, its
 * outermost net, a failed input round: {@link ToolBackend.answer}).
 */
import { searchedMode } from '../core/options.js';
import { createCodeRunner } from './code/run-code.js';
import type { Logger } from 'pino';
import type { Tool } from '@modelcontextprotocol/server';
import type { Config, ServerConfig } from '../config/types.js';
import { commandLine } from '../config/command-line.js';
import type { Catalog, ExposedTool } from '../core/catalog.js';
import { LOGIN_INSTRUCTION } from '../core/instructions.js';
import { rateLimited, storeUnavailable } from '../core/refusals.js';
import { createOutcome, type CallEnded } from './outcome.js';
import { isInputRound } from '../core/input.js';
import { isCreatedTask } from '../core/tasks.js';
import { carriedMeta } from '../core/meta.js';
import { composeName, echoedName } from '../core/naming.js';
import { uriPrefix } from '../core/uri-namespace.js';
import { isForward, prepareCall, type CallCatalog, type PreparedCall } from '../core/prepare-call.js';
import type { CallAccess } from '../core/policy.js';
import { calledName, readSearchArguments, searchPairNames, type SearchPair } from '../core/search.js';
import { failure, type FailureResult, type Result } from '../core/result.js';
import type { DefinitionChange } from '../core/pins.js';
import type { Pool } from '../downstream/pool.js';
import type { Metrics } from './metrics.js';
import { fixedServers, type ServerSource } from './servers.js';
import type { ToolBackend } from '../upstream/server.js';
import type { Searches } from './searches.js';
import type { Views } from './views.js';
import type { RateLimiter } from './state/rate-limiter.js';
import type { LimitVerdict } from '../core/rate-limits.js';
import { loginThenCall, needsLogin, type Logins } from './logins/logins.js';
import type { TaskRelay } from './ext/tasks.js';

/** What {@link createToolBackend} needs from the proxy. */
export interface ToolDeps {
  readonly config: Config;
  /**
   * O3: the servers now, in config order, and one by name (a reload replaces them).
   * @default `config.servers`
   */
  readonly servers?: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  /** The catalog now (it is rebuilt on every list change, T10). */
  catalog(): Catalog;
  /**
   * P1: resolves (bounded) once no server that could hold `name` is in its first attempt, the
   * catalog then including what they listed; undefined when none is (the usual case).
   */
  settle(name: string): Promise<void> | undefined;
  /** P1: a list's wait for servers still starting, in the first moments (undefined: none). */
  settleLists(): Promise<void> | undefined;
  /** K2: a call to a remembered tool of a server still starting waits for it (undefined: not starting). */
  settleServer?(server: string): Promise<void> | undefined;
  /** K4: the change behind a withheld tool's exposed name (`pinning: hold`). */
  held?(name: string): DefinitionChange | undefined;
  /** I7: the callers' rate limits; absent: none. */
  readonly limiter?: RateLimiter;
  /** Issue 48: where the shared store is (no password), for the error when it is unreachable. */
  readonly storeWhere?: string;
  /** O1: every answer is counted here, where it is logged. */
  readonly metrics?: Metrics;
  /** D3: callers' own logins to servers behind `auth: oauth` (HTTP only). */
  readonly logins?: Logins;
  /** X5: where a call's task is kept for its caller (app/ext/tasks.ts). */
  readonly tasks?: TaskRelay;
  /** S2: rankings off the event loop; without it, the catalog ranks in this thread. */
  readonly searches?: Searches;
  /** I3, I6: the callers' views: what a caller's tools/list holds, what its search searches. */
  readonly views: Views;
  /** O4: every call's outcome, for the status page. */
  readonly onCallEnded?: CallEnded;
}

/**
 * The upstream server's tool backend: tools/list from the catalog, tools/call = prepare (lookup,
 * explicit gate, arguments) → pool → outcome.
 * @example const backend = createToolBackend({ config, pool, logger, catalog: catalogs.tools, settle: catalogs.settle });
 */
export function createToolBackend(deps: ToolDeps): ToolBackend<PreparedCall> {
  const { config, pool } = deps;
  const servers = deps.servers ?? fixedServers(config.servers);
  // R4, L1, O1, O4: every answer's one outcome step (outcome.ts).
  const steps = createOutcome({ ...deps, servers });
  const { loggerOf } = steps;
  const outcome = steps.answer;

  /** S1's pair for the servers now, worked out again only when a reload replaces them. */
  let pairOf:
    { readonly servers: readonly ServerConfig[]; readonly pair: SearchPair | undefined } | undefined;
  function searchPair(): SearchPair | undefined {
    // From the config, not the catalog: a call may come before the first catalog is built.
    const list = servers.list();
    if (pairOf?.servers !== list) {
      // I6: a profile in search mode lists the pair too.
      const modes = [...list, ...Object.values(config.profiles)].map((entry) => entry.expose);
      pairOf = {
        servers: list,
        pair: modes.some(searchedMode)
          ? searchPairNames(
              {
                globalPrefix: config.prefix,
                separator: config.separator,
                nameMaxLength: config.nameMaxLength,
              },
              modes.includes('code'),
            )
          : undefined,
      };
    }
    return pairOf.pair;
  }

  /**
   * S2: the catalog to answer `search_tools` from: its ranking of the query is made off the
   * event loop (searches.ts), so a host looping costly searches holds up nobody's calls.
   */
  async function rankedCatalog(
    args: Record<string, unknown> | undefined,
    access: CallAccess | undefined,
  ): Promise<CallCatalog> {
    const catalog = deps.catalog();
    const read = readSearchArguments(args);
    // I6: a profile in search mode searches every tool of its view (the view filters them).
    const scope = deps.views.searchScope(access);
    if ('issues' in read) return catalog;
    if (deps.searches === undefined)
      return scope === 'all' ? { ...catalog, search: catalog.searchAll } : catalog;
    const ranking = await deps.searches.rank(catalog, read.query, scope);
    return {
      get: catalog.get,
      suggest: catalog.suggest,
      ...(catalog.searchPair !== undefined ? { searchPair: catalog.searchPair } : {}),
      search: (_query, limit) => ranking.slice(0, limit),
    };
  }

  /** T9: the call named no tool. */
  function unknownTool(prepared: PreparedCall | Result): boolean {
    return !isForward(prepared) && !prepared.success && prepared.errorType === 'unknown_tool';
  }

  /** The call goes on, or its refusal (T7–T9) or own answer (S2) gets its outcome (R4, L1, O1). */
  function finishPrepare(
    prepared: PreparedCall | Result,
    name: string,
    args: Record<string, unknown> | undefined,
    requestId: string | number | undefined,
    principal?: string,
  ): PreparedCall | Result {
    if (isForward(prepared)) return prepared;
    // S4: a refusal of the call `call_tool` named is that tool's (its name, its instructions).
    const called = calledName(searchPair(), name, args);
    // T9: a name of a server that never came up is that server's failure, not a typo; K4: a
    // withheld definition is refused as such.
    const refused =
      (!prepared.success &&
        prepared.errorType === 'unknown_tool' &&
        (heldTool(deps.held, called) ?? notUp(config, servers, pool, called))) ||
      prepared;
    return outcome(refused, deps.catalog().get(called), {
      exposedName: echoedName(called),
      requestId,
      principal,
    });
  }

  /** tools/call, step 1 (T3, T7–T9, S2, P1): the call to forward, or its answer. */
  function prepare(
    name: string,
    args: Record<string, unknown> | undefined,
    requestId: string | number | undefined,
    access?: CallAccess,
    principal?: string,
  ): PreparedCall | Result | Promise<PreparedCall | Result> {
    if (name === searchPair()?.search) {
      // P1, S2: a search is a list of sorts: in the first moments it waits for servers starting.
      const searching = deps.settleLists();
      if (searching !== undefined)
        return searching.then(() => prepare(name, args, requestId, access, principal));
      return rankedCatalog(args, access).then((catalog) =>
        finishPrepare(prepareCall(catalog, name, args, access), name, args, requestId, principal),
      );
    }
    const prepared = prepareCall(deps.catalog(), name, args, access);
    // Issue 56: a call's elapsed_ms counts from its arrival, the wait for its server included.
    const arrived = Date.now();
    const waited = (after: PreparedCall | Result): PreparedCall | Result =>
      isForward(after) ? { ...after, waitedMs: Date.now() - arrived } : after;
    // K2: a remembered tool of a server still starting: the call waits for it (bounded), then
    // runs on what it listed live.
    const starting = isForward(prepared) ? deps.settleServer?.(prepared.server) : undefined;
    if (starting !== undefined)
      return starting.then(() =>
        waited(
          finishPrepare(prepareCall(deps.catalog(), name, args, access), name, args, requestId, principal),
        ),
      );
    if (!unknownTool(prepared)) return finishPrepare(prepared, name, args, requestId, principal);
    // P1: a name no tool has yet, while a server that could hold it is still starting: the call
    // waits for that server (bounded) instead of being answered unknown_tool. A server that came
    // up a moment ago has its tools in the catalog once it settled (at once).
    const again = (): PreparedCall | Result =>
      waited(
        finishPrepare(prepareCall(deps.catalog(), name, args, access), name, args, requestId, principal),
      );
    const settling = deps.settle(calledName(searchPair(), name, args));
    return settling === undefined ? again() : settling.then(again);
  }

  return {
    // M1–M5: `run_code`, where a server or a profile is in code mode (app/code/).
    code: createCodeRunner({ name: () => searchPair()?.run, logger: deps.logger }),
    calledName(name, args) {
      return calledName(searchPair(), name, args);
    },
    exposes(name) {
      // M2: `run_code` names its span too (the run's, its calls' spans under it).
      return deps.catalog().get(name) !== undefined || name === searchPair()?.run;
    },
    answer(name, result, requestId, principal) {
      // The named tool's (S4: `call_tool`'s target's) instructions, as for any of its answers.
      return outcome(result, deps.catalog().get(name), {
        exposedName: echoedName(name),
        requestId,
        ...(principal !== undefined ? { principal } : {}),
      });
    },
    listTools(access) {
      // P1: what is ready (in the first moments, once the servers starting then are up); a host
      // that lists early hears of the rest (T10). I3: what the caller may see, and the search
      // pair, which is the gateway's own. I6: a profile's own expose mode.
      const visible = (): readonly Tool[] => deps.views.tools(access, deps.catalog(), searchPair());
      const settling = deps.settleLists();
      return settling === undefined ? visible() : settling.then(visible);
    },
    prepareCall: prepare,
    async callTool(call, options) {
      const run = (): ReturnType<Pool['callTool']> =>
        pool.callTool(call.server, call.tool, call.arguments, options);
      let result = withWait(await run(), call.waitedMs);
      // D3: a caller with its own identity and no login to this server is asked to log in.
      if (
        !isInputRound(result) &&
        !isCreatedTask(result) &&
        needsLogin(result) &&
        deps.logins !== undefined &&
        options.principal !== undefined
      ) {
        const server = servers.get(call.server);
        if (server !== undefined)
          result = await loginThenCall(deps.logins, server, options.principal, options.caller, result, run);
      }
      if (isCreatedTask(result)) {
        // X5: the call goes on as a task, kept for its caller; its polls are tasks/get's.
        const task =
          (await deps.tasks?.created(result, options.principal, options.exposedName)) ?? result.task;
        const logged = { tool: options.exposedName, requestId: options.requestId, taskId: task['taskId'] };
        loggerOf(call.server).info(logged, 'call became a task');
        return { ...result, task };
      }
      if (isInputRound(result)) {
        // Q3: one round of the call, not its end (L1 logs the end).
        loggerOf(call.server).debug(
          {
            tool: options.exposedName,
            requestId: options.requestId,
            requests: Object.keys(result.inputRequests),
          },
          'input round relayed',
        );
        return result;
      }
      // S4: a call through `call_tool` is the named tool's call.
      const exposedName = call.exposedName ?? options.exposedName ?? call.entry.name;
      const forApp = call.entry.app !== undefined || exposedName !== call.entry.name;
      return outcome(exposeForApps(config, servers, result, call.entry, forApp), call.entry, {
        exposedName,
        requestId: options.requestId,
        principal: options.principal,
      });
    },
    limit(call, principal, requestId) {
      if (deps.limiter === undefined) return undefined;
      const exposedName = call.exposedName ?? call.entry.name;
      const answered = (result: FailureResult): FailureResult =>
        outcome(result, call.entry, {
          exposedName: echoedName(exposedName),
          requestId,
          ...(principal.kind === 'issuer' || principal.kind === 'token' ? { principal: principal.key } : {}),
        }) as FailureResult;
      const refusal = (verdict: LimitVerdict): FailureResult | undefined =>
        verdict.allowed ? undefined : answered(rateLimited(call, echoedName(exposedName), verdict));
      const verdict = deps.limiter.admit(principal, exposedName);
      if (!(verdict instanceof Promise)) return refusal(verdict);
      // I7, issue 48: counted in the shared store; unreachable, the call cannot be counted.
      return verdict.then(refusal, (error: unknown) =>
        answered(storeUnavailable(call, echoedName(exposedName), deps.storeWhere ?? 'store', error)),
      );
    },
    releaseCaller(instance) {
      pool.releaseCaller(instance);
    },
  };
}

/**
 * N12, U6: the result's `_meta` with its `ui://` URIs exposed; and a tool whose results belong
 * to an MCP App (it has a UI or a visibility, or an app called it by its downstream name) is
 * answered in its server's own shape, which the app's code reads.
 */
function exposeForApps<R extends Result>(
  config: Config,
  servers: ServerSource,
  result: R,
  entry: ExposedTool,
  forApp: boolean,
): R {
  let out = result;
  const own = result.meta.resultMeta;
  if (own !== undefined) {
    const server = servers.get(entry.server);
    const prefix = uriPrefix(config.prefix, server?.prefix ?? entry.server);
    const { resultMeta: _own, ...meta } = out.meta;
    const resultMeta = carriedMeta(own, prefix);
    out = { ...out, meta: resultMeta === undefined ? meta : { ...meta, resultMeta } };
  }
  if (forApp && result.original !== undefined) out = { ...out, rendering: 'original' };
  return out;
}

/**
 * T9: an unknown name under the prefix of a server that is not up and has no tools listed (it
 * never came up, or its tools were withheld) is answered `downstream_unavailable`, naming the
 * server and its last error: "did you mean <another server's tool>" would send the agent the
 * wrong way. The longest matching prefix wins (`git` and `git_hub`).
 */
function notUp(config: Config, servers: ServerSource, pool: Pool, name: string): FailureResult | undefined {
  let best: { server: ServerConfig; prefix: string } | undefined;
  for (const server of servers.list()) {
    // T1's name with an empty tool: `<global>_<server>_`, or "" for an unprefixed server.
    const prefix = composeName({
      globalPrefix: config.prefix,
      serverPrefix: server.prefix,
      separator: config.separator,
      tool: '',
    });
    if (prefix === '') continue;
    if (name.startsWith(prefix) && prefix.length > (best?.prefix.length ?? 0)) best = { server, prefix };
  }
  if (best === undefined) return undefined;
  const snapshot = pool.snapshot().find((entry) => entry.name === best.server.name);
  if (snapshot === undefined || snapshot.state === 'ready' || snapshot.tools.length > 0) return undefined;
  const why = snapshot.lastError !== undefined ? `: ${snapshot.lastError}` : '';
  return failure(
    'downstream_unavailable',
    `Server "${snapshot.name}" is ${snapshot.state} and its tools are not known yet, so "${name}" cannot be called${why}`,
    {
      meta: { server: snapshot.name },
      errorData: {
        state: snapshot.state,
        ...(snapshot.retryAfterMs !== undefined ? { retry_after_ms: snapshot.retryAfterMs } : {}),
        ...(snapshot.lastError !== undefined ? { last_error: snapshot.lastError } : {}),
        // D2, R4: not an outage: the user logs in first.
        ...(snapshot.loginRequired === true ? { reason: 'login_required' } : {}),
      },
      ...(snapshot.loginRequired === true ? { instruction: LOGIN_INSTRUCTION } : {}),
    },
  );
}

/** K4: the refusal of a call to a tool withheld for a changed definition (`pinning: hold`). */
function heldTool(held: ToolDeps['held'], name: string): Result | undefined {
  const change = held?.(name);
  if (change === undefined) return undefined;
  return failure(
    'definition_changed',
    // Issue 55: never the new text (it may carry what the hold holds back): the diff is the
    // operator's (`pins`, the log, the status page).
    `The definition of "${name}" changed since it was pinned and is withheld until an operator reviews and approves it (${commandLine(['pins', 'approve', change.server, change.name])})`,
    {
      meta: { server: change.server, tool: change.name },
      errorData: { server: change.server, tool: change.name, change: change.change },
    },
  );
}

/** Issue 56: `result` with the time its call waited for its server added to `elapsed_ms`. */
function withWait<R>(result: R, waitedMs: number | undefined): R {
  const meta = (result as { meta?: Result['meta'] }).meta;
  if (waitedMs === undefined || waitedMs <= 0 || meta === undefined) return result;
  return { ...result, meta: { ...meta, elapsedMs: (meta.elapsedMs ?? 0) + waitedMs } };
}
