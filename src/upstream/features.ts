/**
 * Prompts, resources, resource templates and completions on the aggregated server (CONTRACT U5).
 * Lists are served from memory (the backend's prebuilt index); gets, reads and completions are
 * routed by the backend. Unlike tools/call these methods have no `isError` convention: an unknown
 * name or URI, or a downstream failure, is a JSON-RPC error (the backend throws an error with a JSON-RPC `code`,
 * e.g. InvalidParams naming close matches).
 */
import { ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import { canonicalUri } from '../core/uri-canonical.js';
import type { CallAccess } from '../core/policy.js';
import type { Caller, InputReply, InputRound } from '../core/input.js';
import type { RequestCaller } from './caller-identity.js';
import type { RequestScope } from './scope.js';
import type {
  Server,
  CompleteRequestParams,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  ServerContext,
} from '@modelcontextprotocol/server';

/** Per-request options of the routed {@link FeatureBackend} methods. */
export interface FeatureRequestOptions {
  /** The upstream request's cancellation; its reason is always an AbortError. */
  readonly signal: AbortSignal;
  /** Q3: the retry of a relayed round (`prompts/get`, `resources/read`). */
  readonly reply?: InputReply;
  /** Q2: the host behind the request, whose capabilities a 2026 server is told. */
  readonly caller?: Caller;
  /** I3, I6: the caller's view: what it does not hold is refused (app/views.ts); absent: everything. */
  readonly access?: CallAccess;
}

/** Q5: one upstream client's resource subscriptions, told of updates by exposed URI. */
export interface Subscriber {
  notify(uri: string): void;
}

/** What the server needs for U5; the composition root wires the index and the pool behind it. */
export interface FeatureBackend {
  /**
   * prompts/list, from memory: what `access` (the caller's view) holds. May wait for the first
   * connection round, like tools/list.
   */
  listPrompts(access?: CallAccess): readonly Prompt[] | Promise<readonly Prompt[]>;
  /** resources/list, from memory, as {@link listPrompts}. */
  listResources(access?: CallAccess): readonly Resource[] | Promise<readonly Resource[]>;
  /** resources/templates/list, from memory, as {@link listPrompts}. */
  listResourceTemplates(
    access?: CallAccess,
  ): readonly ResourceTemplateType[] | Promise<readonly ResourceTemplateType[]>;
  /**
   * prompts/get by exposed name; throws a JSON-RPC error for an unknown name or a failure. Q3: a
   * 2026 server's `input_required` comes back as a round to relay.
   */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options: FeatureRequestOptions,
  ): Promise<GetPromptResult | InputRound>;
  /** resources/read by exposed URI; throws like {@link getPrompt}, and a round the same way. */
  readResource(uri: string, options: FeatureRequestOptions): Promise<ReadResourceResult | InputRound>;
  /** completion/complete by exposed reference; throws a JSON-RPC error for an unknown one. */
  complete(params: CompleteRequestParams, options: FeatureRequestOptions): Promise<CompleteResult>;
  /** Q5: resources/subscribe by exposed URI; throws like {@link readResource}. */
  subscribe(uri: string, subscriber: Subscriber, options: FeatureRequestOptions): Promise<void>;
  /** Q5: resources/unsubscribe by exposed URI; never throws for a URI not subscribed. */
  unsubscribe(uri: string, subscriber: Subscriber): Promise<void>;
  /** Q5: the subscriber's session ended: all of its subscriptions go. */
  forget(subscriber: Subscriber): void;
}

/**
 * U8: a URI a host sent, in its canonical form: what every check and the routing use. A URI that
 * has none (a skill URI with a dot segment) is refused with -32602.
 */
export function canonicalParam(uri: string): string {
  const canonical = canonicalUri(uri);
  if (typeof canonical === 'string') return canonical;
  throw new ProtocolError(ProtocolErrorCode.InvalidParams, `${canonical.refused}: it is refused`, { uri });
}

/** Registers the U5 handlers on `server`: each works out its caller once, through `scope`. */
export function registerFeatureHandlers(server: Server, backend: FeatureBackend, scope: RequestScope): void {
  /** I3: the caller's view rides with every request; the backend applies it (app/views.ts). */
  const accessOf = (who: RequestCaller): { access?: CallAccess } =>
    who.access === undefined ? {} : { access: who.access };
  if (scope.era === 'legacy') {
    // Q5: this server is one session; its subscriptions end with it.
    const subscriber: Subscriber = {
      notify: (uri) => void server.sendResourceUpdated({ uri }).catch(() => {}),
    };
    server.setRequestHandler('resources/subscribe', async (request, ctx) => {
      await backend.subscribe(canonicalParam(request.params.uri), subscriber, {
        signal: scope.signal(ctx),
        ...accessOf(scope.who(ctx)),
      });
      return {};
    });
    server.setRequestHandler('resources/unsubscribe', async (request) => {
      await backend.unsubscribe(canonicalParam(request.params.uri), subscriber);
      return {};
    });
    const previous = server.onclose;
    server.onclose = () => {
      backend.forget(subscriber);
      previous?.();
    };
  }
  server.setRequestHandler('prompts/list', async (_request, ctx) => {
    const prompts = await backend.listPrompts(scope.who(ctx).access);
    scope.listed('prompts');
    return scope.hint({ prompts: [...prompts] });
  });
  server.setRequestHandler('resources/list', async (_request, ctx) => {
    const resources = await backend.listResources(scope.who(ctx).access);
    scope.listed('resources');
    return scope.hint({ resources: [...resources] });
  });
  server.setRequestHandler('resources/templates/list', async (_request, ctx) => {
    const resourceTemplates = await backend.listResourceTemplates(scope.who(ctx).access);
    scope.listed('resources');
    return scope.hint({ resourceTemplates: [...resourceTemplates] });
  });
  /** Q2, I3: what a routed request hands the backend: its signal, a round's reply, its host and view. */
  const requestOptions = (ctx: ServerContext, reply: InputReply | undefined): FeatureRequestOptions => {
    const who = scope.who(ctx);
    return {
      signal: scope.signal(ctx),
      ...(reply !== undefined ? { reply } : {}),
      caller: who.host,
      ...accessOf(who),
    };
  };
  server.setRequestHandler('prompts/get', (request, ctx) => {
    const asked = { key: `prompt:${request.params.name}`, arguments: request.params.arguments };
    return scope.relay(ctx, asked, (reply) =>
      backend.getPrompt(request.params.name, request.params.arguments, requestOptions(ctx, reply)),
    ) as Promise<GetPromptResult>;
  });
  server.setRequestHandler('resources/read', (request, ctx) => {
    const uri = canonicalParam(request.params.uri);
    return scope.relay(ctx, { key: `resource:${uri}` }, (reply) =>
      backend.readResource(uri, requestOptions(ctx, reply)),
    ) as Promise<ReadResourceResult>;
  });
  server.setRequestHandler('completion/complete', (request, ctx) =>
    backend.complete(request.params, { signal: scope.signal(ctx), ...accessOf(scope.who(ctx)) }),
  );
}
