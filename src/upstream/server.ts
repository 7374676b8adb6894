/**
 * The aggregated upstream MCP server (CONTRACT U1, R2, R3, T6–T10).
 *
 * Built on the SDK's low-level `Server`: it is marked deprecated in the 1.32.2 docs, but it is
 * the only SDK server that serves raw JSON Schemas verbatim (T6); `McpServer` wants zod shapes.
 * One `Server` serves one transport, so this module hands out a fresh `Server` per connection
 * (stdio, each HTTP session, each in-memory CLI client), all sharing one {@link ToolBackend}.
 *
 * This file is the ONLY importer of `render.ts` (R2): a Result becomes JSON here and nowhere else.
 */
import { Server } from '@modelcontextprotocol/server';
import type { CallerTokens } from '../core/caller-tokens.js';
import type { AuthInfo, CallToolResult, Implementation } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Result } from '../core/result.js';
import { scrubDeep, type Scrubber } from '../core/secrets.js';
import { raceTimeout, type Timers } from '../core/timers.js';
import { systemTimers } from '../wire/timers.js';
import type { CallerViews, PreparedForward, ToolBackend, UpstreamServer } from './backend.js';
import { createCallPipeline } from './call-pipeline.js';
import { createCallerIdentity, type RequestCaller } from './caller-identity.js';
import { BASE_CAPABILITIES, LIST_HINT, featureCapabilities } from './capabilities.js';
import { answerCallsDirectly, type CallHandler } from './direct-calls.js';
import { declaredExtensions, type UpstreamExtension } from './ext/extension.js';
import { registerFeatureHandlers, type FeatureBackend } from './features.js';
import { withFileLinks, type FileStore } from './file-store.js';
import { createInputRounds, type InputRounds } from './input-rounds.js';
import { createNotifier, type Era, type Notifier } from './notifier.js';
import { renderCallToolResult, type RenderOptions } from './render.js';
import { createRequestScope } from './scope.js';
import { toolCallHandler } from './tool-calls.js';

export type { Era } from './notifier.js';
export type { RenderOptions } from './render.js';
export type { CallOptions, PreparedForward, ProgressUpdate, ToolBackend, UpstreamServer } from './backend.js';

/** Options of {@link createUpstreamServer}. */
export interface UpstreamDeps<F extends PreparedForward = PreparedForward> {
  readonly backend: ToolBackend<F>;
  /**
   * The envelope format and media mode (F1–F5).
   * @example { format: 'results', media: 'artifacts' }
   */
  readonly output: RenderOptions;
  /** I6: a profile's own output settings, by profile name; others render with {@link output}. */
  readonly profileOutputs?: Readonly<Record<string, RenderOptions>>;
  readonly logger: Logger;
  /**
   * U5: prompts, resources, templates and completions. Without it the server announces (and
   * serves) tools only.
   */
  readonly features?: FeatureBackend;
  /**
   * F7: `output.files: resource`: file bodies stay in this store and results carry links, read
   * with `resources/read`. Undefined: bodies travel in the result (`inline`).
   */
  readonly files?: FileStore;
  /**
   * L2: replaces every interpolated secret in a rendered answer (a downstream can echo one into
   * its error or its data). Undefined: no secrets, nothing to do.
   */
  readonly scrub?: Scrubber;
  /**
   * The name and version announced in `initialize`.
   * @default { name: 'mcp-normalizer', version: '0.0.0' }
   */
  readonly serverInfo?: Implementation;
  /**
   * E4, T10: the list-change bus and its registry of connections, created by the composition root
   * before anything publishes on it. @default a bus of its own
   */
  readonly notifier?: Notifier;
  /**
   * E2, P1: false while lists may still grow (servers in their first connection attempt): modern
   * list results then say `ttlMs: 0`, so no host caches a partial list. @default always true
   */
  readonly listsComplete?: () => boolean;
  /** The clock of the drain's bound. @default systemTimers */
  readonly timers?: Timers;
  /** I3, I6: each caller's view (policy and profiles); absent: every caller everything. */
  readonly views?: CallerViews;
  /** I6: the profile a stdio connection serves (`serve --profile`). */
  readonly profile?: string;
  /** D8: where callers' tokens are kept for the servers that exchange them. */
  readonly callerTokens?: CallerTokens;
  /** O1: one notification sent upstream. */
  readonly onForward?: (kind: 'progress' | 'log' | 'list_changed') => void;
  /**
   * Q3: input rounds (the signing key, the round timeout and cap).
   * @default rounds with a random key, 300 s per round, 10 rounds
   */
  readonly rounds?: InputRounds;
  /**
   * Issue 47, X1, X5: the extensions relayed from the servers behind (skills, tasks; ext/), each
   * declared to the hosts of the eras it is defined in and registered on every connection.
   * @default none
   */
  readonly extensions?: readonly UpstreamExtension[];
}

/** E2: cache hints of modern list results and `server/discover` (capabilities.ts). */
const CACHE_HINTS = {
  'tools/list': LIST_HINT,
  'prompts/list': LIST_HINT,
  'resources/list': LIST_HINT,
  'resources/templates/list': LIST_HINT,
  'server/discover': LIST_HINT,
} as const;

/**
 * R2, F7, L2: a Result as one CallToolResult: file bodies into the store and links into the
 * result (not for a result an MCP App reads in its server's own shape, U6, whose bodies travel as
 * they came), rendered, then every interpolated secret scrubbed.
 */
function renderer(
  deps: Pick<UpstreamDeps, 'files' | 'scrub' | 'output'>,
): (result: Result, owner?: object, rendering?: RenderOptions) => CallToolResult {
  return (result, owner, rendering = deps.output) => {
    const kept =
      deps.files !== undefined && result.files.length > 0 && result.rendering !== 'original'
        ? deps.files.keep(result, owner)
        : result;
    const rendered = renderCallToolResult(kept, rendering);
    return deps.scrub === undefined ? rendered : scrubDeep(rendered, deps.scrub);
  };
}

/**
 * Builds the aggregated upstream server.
 * @example const upstream = createUpstreamServer({ backend, output: { format: 'results', media: 'artifacts' }, logger });
 */
export function createUpstreamServer<F extends PreparedForward>(deps: UpstreamDeps<F>): UpstreamServer {
  const { backend, output, logger } = deps;
  const serverInfo = deps.serverInfo ?? { name: 'mcp-normalizer', version: '0.0.0' };
  const notifier = deps.notifier ?? createNotifier(logger);
  const timers = deps.timers ?? systemTimers;
  const calls = new Set<Promise<unknown>>();
  let accepting = true;

  const rounds = deps.rounds ?? createInputRounds({ roundTimeoutMs: 300_000, maxRounds: 10, logger });

  /** I2, I6, Q3, P10: who is behind each request (caller-identity.ts). */
  const callers = createCallerIdentity({
    ...(deps.views !== undefined ? { views: deps.views } : {}),
    ...(deps.profile !== undefined ? { profile: deps.profile } : {}),
    ...(deps.callerTokens !== undefined ? { callerTokens: deps.callerTokens } : {}),
  });
  const personal = deps.views?.personal === true;

  const render = renderer(deps);

  /** I6: a caller's profile's own envelope, else the configured one. */
  const renderingOf = (who: RequestCaller): RenderOptions =>
    (who.profile !== undefined ? deps.profileOutputs?.[who.profile] : undefined) ?? output;

  const pipeline = createCallPipeline({
    backend,
    logger,
    accepting: () => accepting,
    render: (result, who) => render(result, who.filesOwner, renderingOf(who)),
  });

  const extensions = deps.extensions ?? [];
  /** U5: the feature backend with each extension's own resources (skill files) read by it. */
  const extended =
    deps.features === undefined
      ? undefined
      : extensions.reduce((features, extension) => extension.features?.(features) ?? features, deps.features);

  /**
   * One `Server` for either era: the same handlers serve both (the SDK encodes per era). Its
   * tools/call handler comes with it, for the stdio direct path (direct-calls.ts).
   */
  function newServer(
    era: Era,
    authInfo?: AuthInfo,
  ): { readonly server: Server; readonly onCall: CallHandler } {
    const capabilities = {
      ...BASE_CAPABILITIES,
      ...(deps.features !== undefined ? featureCapabilities(era) : {}),
      // F7: file links are read with resources/read, with or without downstream resources.
      ...(deps.features === undefined && deps.files !== undefined ? { resources: {} } : {}),
      // Issue 47, X1, X5: the extensions the gateway relays, each in the eras it is defined in.
      ...declaredExtensions(extensions, era),
    };
    // E2: modern list results and server/discover carry cache hints (the SDK puts them on 2026
    // answers only). The lists are the same for every caller, so shared caches may keep them.
    // Q3: our requestState is verified before any handler runs (-32602 when tampered with).
    const server = new Server(serverInfo, {
      capabilities,
      cacheHints: CACHE_HINTS,
      requestState: { verify: rounds.verify },
    });
    // F7, I5: whose file links these are: the session's; a sessionless caller's principal's.
    const filesOwner = (): object | undefined => callers.filesOwner(server, authInfo);
    // E2: a list that may still grow is not to be cached by a modern host (the SDK's configured
    // hint is a fallback: a handler's own wins); I3: lists that vary by caller are its own.
    const hint = <T extends object>(result: T): T => {
      if (era !== 'modern') return result;
      const growing = deps.listsComplete?.() === false;
      if (!growing && !personal) return result;
      return {
        ...result,
        ...(growing ? { ttlMs: 0 } : {}),
        ...(personal ? { cacheScope: 'private' } : {}),
      };
    };
    const scope = createRequestScope(server, era, {
      callers,
      rounds,
      hint,
      render: (result, who) => render(result, who.filesOwner, renderingOf(who)),
      listed: (kind) => notifier.listed(server, kind),
    });
    const files = deps.files;
    for (const extension of extensions) extension.register(server, scope);
    if (extended !== undefined) {
      registerFeatureHandlers(
        server,
        files === undefined ? extended : withFileLinks(extended, files, filesOwner),
        scope,
      );
    } else if (files !== undefined) {
      server.setRequestHandler('resources/read', (request) =>
        files.readAnywhere(request.params.uri, filesOwner()),
      );
    }
    // T6, T10: from memory, no downstream asked. Marked listed after the read: P1's wait's changes are in it.
    server.setRequestHandler('tools/list', async (_request, ctx) => {
      const tools = await backend.listTools(scope.who(ctx).access);
      scope.listed('tools');
      return scope.hint({ tools: [...tools] });
    });
    const onCall = toolCallHandler(server, scope, {
      resolve: (ctx) => callers.resolve(server, era, ctx),
      backend,
      rounds,
      pipeline,
      logger,
      calls,
      renderFailure: (result, who) => render(result, undefined, renderingOf(who)),
      ...(deps.onForward !== undefined ? { onForward: deps.onForward } : {}),
    });
    server.setRequestHandler('tools/call', onCall);
    return { server, onCall };
  }

  function track(server: Server, era: Era): Server {
    notifier.register(server, era);
    callers.markSession(server);
    const previous = server.onclose;
    server.onclose = () => {
      notifier.unregister(server);
      deps.files?.forget(server);
      const id = callers.idOf(server);
      // P10: the session's own copies of per-session servers stop with it.
      if (id !== undefined) backend.releaseCaller?.(id);
      previous?.();
    };
    return server;
  }

  return {
    factory: ({ era, authInfo }) => newServer(era, authInfo).server,
    bus: notifier.bus,
    track(server, era) {
      callers.markSole(server);
      return track(server, era);
    },
    async connect(transport, options) {
      const { server, onCall } = newServer('legacy');
      if (options?.direct === true || options?.sole === true) callers.markSole(server);
      track(server, 'legacy');
      try {
        await server.connect(transport);
      } catch (error) {
        // A transport that cannot start never fires onclose: forget the server here.
        notifier.unregister(server);
        throw error;
      }
      if (options?.direct === true) answerCallsDirectly(server, transport, onCall);
      return server;
    },
    notifyToolsChanged() {
      deps.onForward?.('list_changed');
      notifier.toolsChanged();
    },
    notifyPromptsChanged() {
      deps.onForward?.('list_changed');
      notifier.promptsChanged();
    },
    notifyResourcesChanged() {
      deps.onForward?.('list_changed');
      notifier.resourcesChanged();
    },
    sendLog(params) {
      deps.onForward?.('log');
      notifier.log(params);
    },
    stopAccepting() {
      accepting = false;
    },
    async drain(graceMs) {
      if (calls.size === 0) return true;
      const done = (async () => {
        while (calls.size > 0) await Promise.allSettled([...calls]);
      })();
      return (await raceTimeout(done, graceMs, timers)) === 'done';
    },
    inFlight: () => calls.size,
    async close() {
      const servers = notifier.servers();
      await Promise.allSettled(servers.map((server) => server.close()));
      for (const server of servers) notifier.unregister(server);
    },
  };
}
