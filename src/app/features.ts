/**
 * U5 in the composition root: the {@link FeatureBackend} the upstream server serves the prompt
 * and resource index through (lists from memory, held by `catalogs.ts`; gets, reads and
 * completions routed by table lookup to the pool; Q5 subscriptions), and downstream log messages
 * passed to pino and to every upstream client with the server's name.
 *
 * A routed request's failure is a JSON-RPC error (routed.ts, which the skills and the tasks answer
 * through too).
 */
import { isRecord, ownValue } from '../core/json.js';
import type { InputRound } from '../core/input.js';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CompleteRequestParams, LoggingMessageNotification } from '@modelcontextprotocol/server';
import {
  CompleteResultSchema,
  EmptyResultSchema,
  GetPromptResultSchema,
  ReadResourceResultSchema,
} from '@modelcontextprotocol/core';
import type { Logger } from 'pino';
import type { z } from 'zod';
import type { Config } from '../config/types.js';
import type { FeatureIndex } from '../core/feature-index.js';
import type { Result } from '../core/result.js';
import { carriedMeta } from '../core/meta.js';
import { namespaceUri, uriPrefix } from '../core/uri-namespace.js';
import type { Pool } from '../downstream/pool.js';
import type { FeatureBackend } from '../upstream/features.js';
import { requestError, rpcError, unknown } from './routed.js';
import { fixedServers, type ServerSource } from './servers.js';
import type { Views } from './views.js';

/** What {@link createFeatures} needs from the proxy. */
export interface FeatureDeps {
  readonly config: Config;
  /** O3: the servers now (a reload replaces them). @default `config.servers` */
  readonly servers?: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  /** The prompt and resource index now (rebuilt on every list change, U5). */
  index(): FeatureIndex;
  /**
   * P1: resolves (bounded) once no server is in its first attempt, the index then including what
   * they listed; undefined when none is. A name not found yet is looked up again after it.
   */
  settle(): Promise<void> | undefined;
  /** P1: a list's wait for servers still starting, in the first moments (undefined: none). */
  settleLists(): Promise<void> | undefined;
  /** U5: a downstream log message to every upstream client that asked for logs. */
  log(params: LoggingMessageNotification['params']): void;
  /** I3, I6: the callers' views, applied to every list and request. */
  readonly views: Views;
}

/** The U5 part of a proxy. */
export interface Features {
  readonly backend: FeatureBackend;
}

/** Q3: a 2026 server's `input_required` answer, to relay to the caller's host; else undefined. */
function inputRoundOf(result: Result, server: string, subject: string): InputRound | undefined {
  if (!result.success || !isRecord(result.value) || result.value['resultType'] !== 'input_required')
    return undefined;
  const { inputRequests, requestState } = result.value;
  return {
    kind: 'input_required',
    inputRequests: isRecord(inputRequests) ? inputRequests : {},
    ...(typeof requestState === 'string' ? { requestState } : {}),
    server,
    tool: subject,
  };
}

/** A failed routed request as a JSON-RPC error; a success checked against the SDK's schema. */
function unwrap<T>(result: Result, schema: z.ZodType<T>, what: string, prefix = ''): T {
  if (!result.success) throw requestError(result, result.errorData);
  const parsed = schema.safeParse(result.value);
  if (!parsed.success) {
    throw rpcError(
      ProtocolErrorCode.InternalError,
      `Server "${result.meta.server ?? '?'}" returned a malformed ${what} result: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      { error_type: 'downstream_error' },
    );
  }
  return carried(parsed.data, prefix);
}

/**
 * N12 for prompts, reads and completions: the result's `_meta` as {@link carriedMeta} carries it
 * (reserved keys and `progressToken` left out, `ui://` URIs exposed under `prefix`), so what the
 * host's SDK parses is valid for it whatever the downstream wrote there.
 */
function carried<T>(result: T, prefix: string): T {
  if (typeof result !== 'object' || result === null || !('_meta' in result)) return result;
  const { _meta: meta, ...rest } = result as T & { _meta: unknown };
  const kept = carriedMeta(meta, prefix);
  return (kept === undefined ? rest : { ...rest, _meta: kept }) as T;
}

const PINO_LEVEL: Readonly<Record<string, 'debug' | 'info' | 'warn' | 'error'>> = {
  debug: 'debug',
  info: 'info',
  notice: 'info',
  warning: 'warn',
  error: 'error',
  critical: 'error',
  alert: 'error',
  emergency: 'error',
};

/**
 * Builds the U5 backend and the log forwarding.
 * @example const features = createFeatures({ config, pool, logger, index: catalogs.features, settle: () => catalogs.settle(), log });
 */
export function createFeatures(deps: FeatureDeps): Features {
  const { config, pool, logger, views } = deps;
  const servers = deps.servers ?? fixedServers(config.servers);
  const options = { globalPrefix: config.prefix };
  /** U6: the URI prefix a server's resources are exposed under. */
  const prefixOf = (server: string): string =>
    uriPrefix(options.globalPrefix, servers.get(server)?.prefix ?? server);

  /** P1: a list from the index, once the servers starting in the first moments are up. */
  function listed<T>(read: (index: FeatureIndex) => T): T | Promise<T> {
    const settling = deps.settleLists();
    return settling === undefined ? read(deps.index()) : settling.then(() => read(deps.index()));
  }

  /** `find` in the index now, else (a server still starting) once it settled. */
  async function lookup<T>(find: (index: FeatureIndex) => T | undefined): Promise<T | undefined> {
    const found = find(deps.index());
    if (found !== undefined) return found;
    // A server that came up a moment ago: the index has it once settled (at once).
    await deps.settle();
    return find(deps.index());
  }

  pool.on('log', (server, params) => {
    const name = params.logger === undefined ? server : `${server}/${params.logger}`;
    const level = ownValue(PINO_LEVEL, params.level) ?? 'info';
    const text = typeof params.data === 'string' ? params.data : 'downstream log message';
    logger[level](
      { server, logger: name, ...(typeof params.data === 'string' ? {} : { data: params.data }) },
      text,
    );
    deps.log({ ...params, logger: name });
  });

  const backend: FeatureBackend = {
    listPrompts: (access) =>
      listed((index) =>
        views.prompts(
          access,
          index.prompts.map((route) => route.definition),
        ),
      ),
    listResources: (access) =>
      listed((index) =>
        views.resources(
          access,
          index.resources.map((route) => route.definition),
        ),
      ),
    listResourceTemplates: (access) =>
      listed((index) =>
        views.templates(
          access,
          index.resourceTemplates.map((route) => route.definition),
        ),
      ),
    async getPrompt(name, args, { signal, reply, caller, access }) {
      views.refuse(access, 'prompt', name);
      const route = await lookup((index) => index.getPrompt(name));
      if (!route) throw unknown('prompt', name, deps.index().suggestPrompts(name));
      const result = await pool.getPrompt(route.server, route.original, args, {
        signal,
        ...(reply !== undefined ? { reply } : {}),
        ...(caller !== undefined ? { caller } : {}),
      });
      const round = inputRoundOf(result, route.server, name);
      if (round !== undefined) return round;
      return unwrap(result, GetPromptResultSchema, 'prompts/get', prefixOf(route.server));
    },
    async readResource(uri, { signal, reply, caller, access }) {
      views.refuse(access, 'resource', uri);
      const route = await lookup((index) => index.resolveUri(uri));
      if (!route) throw unknown('resource', uri, deps.index().suggestUris(uri));
      const result = await pool.readResource(route.server, route.uri, {
        signal,
        ...(reply !== undefined ? { reply } : {}),
        ...(caller !== undefined ? { caller } : {}),
      });
      const round = inputRoundOf(result, route.server, uri);
      if (round !== undefined) return round;
      const prefix = prefixOf(route.server);
      const read = unwrap(result, ReadResourceResultSchema, 'resources/read', prefix);
      // Contents name URIs as the client sees them: the one it asked for, others namespaced.
      const exposed = (own: string): string => (own === route.uri ? uri : namespaceUri(prefix, own));
      return {
        ...read,
        contents: read.contents.map((content) => ({ ...content, uri: exposed(content.uri) })),
      };
    },
    async complete(params, { signal, access }) {
      const { ref } = params;
      views.refuse(
        access,
        ref.type === 'ref/prompt' ? 'prompt' : 'resource',
        ref.type === 'ref/prompt' ? ref.name : ref.uri,
      );
      const routed = await lookup((index) => route(index, params));
      if (routed === undefined) throw unknownReference(deps.index(), params.ref);
      const result = await pool.complete(routed.server, routed.params, { signal });
      // A downstream without completions has nothing to suggest: no values, not an error.
      if (!result.success && result.errorCode === String(ProtocolErrorCode.MethodNotFound))
        return { completion: { values: [], hasMore: false } };
      return unwrap(result, CompleteResultSchema, 'completion/complete', prefixOf(routed.server));
    },
    async subscribe(uri, subscriber, { signal, access }) {
      views.refuse(access, 'resource', uri);
      const route = await lookup((index) => index.resolveUri(uri));
      if (!route) throw unknown('resource', uri, deps.index().suggestUris(uri));
      const key = subscriptionKey(route.server, route.uri);
      let subscription = subscriptions.get(key);
      if (subscription === undefined) {
        // The first subscriber subscribes downstream; a failure there is this request's error.
        const result = await pool.subscribe(route.server, route.uri, { signal });
        unwrap(result, EmptyResultSchema, 'resources/subscribe');
        subscription = subscriptions.get(key) ?? {
          server: route.server,
          uri: route.uri,
          exposed: uri,
          subscribers: new Set(),
        };
        subscriptions.set(key, subscription);
      }
      subscription.subscribers.add(subscriber);
    },
    async unsubscribe(uri, subscriber) {
      const route = deps.index().resolveUri(uri);
      const subscription = route && subscriptions.get(subscriptionKey(route.server, route.uri));
      if (subscription?.subscribers.delete(subscriber) === true) await release(subscription);
    },
    forget(subscriber) {
      for (const subscription of subscriptions.values())
        if (subscription.subscribers.delete(subscriber)) void release(subscription);
    },
  };

  /** Q5: one downstream subscription and the upstream clients that asked for it. */
  interface Subscription {
    readonly server: string;
    /** The downstream's own URI. */
    readonly uri: string;
    /** The URI the upstream clients subscribed to. */
    readonly exposed: string;
    readonly subscribers: Set<{ notify(uri: string): void }>;
  }
  const subscriptions = new Map<string, Subscription>();
  const subscriptionKey = (server: string, uri: string): string => `${server}\n${uri}`;

  /** The last subscriber left: the downstream subscription ends (a failure is only logged). */
  async function release(subscription: Subscription): Promise<void> {
    if (subscription.subscribers.size > 0) return;
    subscriptions.delete(subscriptionKey(subscription.server, subscription.uri));
    const result = await pool.unsubscribe(subscription.server, subscription.uri);
    if (!result.success)
      logger.warn(
        { server: subscription.server, uri: subscription.uri, error: result.error },
        'unsubscribe failed',
      );
  }

  pool.on('resourceUpdated', (server, uri) => {
    const subscription = subscriptions.get(subscriptionKey(server, uri));
    for (const subscriber of subscription?.subscribers ?? []) subscriber.notify(subscription!.exposed);
  });

  // A restarted server has forgotten its subscriptions: they are made again once it is back.
  pool.on('stateChanged', (server, state) => {
    if (state !== 'ready') return;
    for (const subscription of subscriptions.values()) {
      if (subscription.server !== server) continue;
      void pool.subscribe(server, subscription.uri).then((result) => {
        if (!result.success)
          logger.warn({ server, uri: subscription.uri, error: result.error }, 'resubscribe failed');
      });
    }
  });

  /** U5: completions route by reference: a prompt by exposed name, a template by exposed URI. */
  function route(
    index: FeatureIndex,
    params: CompleteRequestParams,
  ): { server: string; params: CompleteRequestParams } | undefined {
    const ref = params.ref;
    if (ref.type === 'ref/prompt') {
      const prompt = index.getPrompt(ref.name);
      return (
        prompt && { server: prompt.server, params: { ...params, ref: { ...ref, name: prompt.original } } }
      );
    }
    const template = index.getTemplate(ref.uri);
    const target = template ? { server: template.server, uri: template.original } : index.resolveUri(ref.uri);
    return target && { server: target.server, params: { ...params, ref: { ...ref, uri: target.uri } } };
  }

  /** The error for a completion reference that names nothing. */
  function unknownReference(index: FeatureIndex, ref: CompleteRequestParams['ref']): Error {
    return ref.type === 'ref/prompt'
      ? unknown('prompt', ref.name, index.suggestPrompts(ref.name))
      : unknown('resource template', ref.uri, index.suggestUris(ref.uri));
  }

  return { backend };
}
