/**
 * U5 in the composition root: the prompt and resource index rebuilt from the pool's snapshots,
 * the {@link FeatureBackend} the upstream server serves it through (lists from memory; gets,
 * reads and completions routed by table lookup to the pool), and downstream log messages passed
 * to pino and to every upstream client with the server's name.
 *
 * A routed request's failure is a JSON-RPC error (these methods have no `isError` convention):
 * InvalidParams for an unknown name or URI (naming close matches), the downstream's own code for
 * its own JSON-RPC error, InternalError otherwise, with `data.error_type` from the closed R3 list.
 */
import { ownValue } from '../core/json.js';
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
import { buildFeatureIndex, diffFeatureIndexes } from '../core/feature-index.js';
import type { FeatureIndex, FeatureProblem } from '../core/feature-index.js';
import type { Result } from '../core/result.js';
import { namespaceUri, uriPrefix } from '../core/uri-namespace.js';
import type { Pool } from '../downstream/pool.js';
import type { FeatureBackend } from '../upstream/features.js';
import { fixedServers, type ServerSource } from './servers.js';

/** What {@link createFeatures} needs from the proxy. */
export interface FeatureDeps {
  readonly config: Config;
  /** O3: the servers now (a reload replaces them). @default `config.servers` */
  readonly servers?: ServerSource;
  readonly pool: Pool;
  readonly logger: Logger;
  /** Runs `read` now, or once the first connection round is done (bounded), like tools/list. */
  readonly afterStart: <T>(read: () => T) => T | Promise<T>;
  /** The upstream notifications (U5); wired after the upstream server exists. */
  readonly notify: () => {
    prompts(): void;
    resources(): void;
    log(params: LoggingMessageNotification['params']): void;
  };
}

/** The U5 part of a proxy. */
export interface Features {
  readonly backend: FeatureBackend;
  /** The current index (replaced on every rebuild). */
  index(): FeatureIndex;
  /** Rebuilds the index from the pool; notifies upstream clients of the lists that changed. */
  rebuild(): void;
}

/** A JSON-RPC error as the SDK sends it: `code`, `message` (no "MCP error" prefix), `data`. */
function rpcError(code: number, message: string, data?: Record<string, unknown>): Error {
  return Object.assign(new Error(message), { code, ...(data !== undefined ? { data } : {}) });
}

function unknown(what: string, name: string, suggestions: readonly string[]): Error {
  const hint = suggestions.length > 0 ? `; did you mean ${suggestions.map((s) => `"${s}"`).join(', ')}?` : '';
  return rpcError(ProtocolErrorCode.InvalidParams, `Unknown ${what} "${name}"${hint}`, {
    [what.replace(' ', '_')]: name,
    suggestions,
  });
}

/** A failed routed request as a JSON-RPC error; a success checked against the SDK's schema. */
function unwrap<T>(result: Result, schema: z.ZodType<T>, what: string): T {
  if (!result.success) {
    const own = result.errorType === 'downstream_error' ? Number(result.errorCode) : NaN;
    throw rpcError(Number.isSafeInteger(own) ? own : ProtocolErrorCode.InternalError, result.error, {
      error_type: result.errorType,
      ...(result.meta.server !== undefined ? { server: result.meta.server } : {}),
      ...result.errorData,
    });
  }
  const parsed = schema.safeParse(result.value);
  if (!parsed.success) {
    throw rpcError(
      ProtocolErrorCode.InternalError,
      `Server "${result.meta.server ?? '?'}" returned a malformed ${what} result: ${parsed.error.issues[0]?.message ?? 'invalid'}`,
      { error_type: 'downstream_error' },
    );
  }
  return parsed.data;
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
 * Builds the U5 index, its backend and the log forwarding.
 * @example const features = createFeatures({ config, pool, logger, afterStart, notify: () => upstreamNotifications });
 */
export function createFeatures(deps: FeatureDeps): Features {
  const { config, pool, logger } = deps;
  const servers = deps.servers ?? fixedServers(config.servers);
  const options: { globalPrefix?: string; separator: string; nameMaxLength: number } = {
    ...(config.prefix !== undefined ? { globalPrefix: config.prefix } : {}),
    separator: config.separator,
    nameMaxLength: config.nameMaxLength,
  };
  let current = buildFeatureIndex([], options);

  function rebuild(): void {
    const inputs = pool.snapshot().map((snapshot) => ({
      server: snapshot.name,
      prefix: servers.get(snapshot.name)?.prefix ?? snapshot.name,
      ...snapshot.features,
    }));
    const next = buildFeatureIndex(inputs, options);
    const diff = diffFeatureIndexes(current, next);
    logNewProblems(current.problems, next.problems);
    current = next;
    if (diff.prompts) {
      logger.info({ prompts: next.prompts.length }, 'prompt list changed');
      deps.notify().prompts();
    }
    if (diff.resources) {
      logger.info(
        { resources: next.resources.length, resourceTemplates: next.resourceTemplates.length },
        'resource list changed',
      );
      deps.notify().resources();
    }
  }

  function logNewProblems(before: readonly FeatureProblem[], after: readonly FeatureProblem[]): void {
    const seen = new Set(before.map((problem) => problem.message));
    // T4 for prompts and URIs: a withheld collision is an error in the log; `check` fails on it.
    for (const problem of after)
      if (!seen.has(problem.message))
        logger.error({ server: problem.server, kind: problem.kind }, problem.message);
  }

  pool.on('log', (server, params) => {
    const name = params.logger === undefined ? server : `${server}/${params.logger}`;
    const level = ownValue(PINO_LEVEL, params.level) ?? 'info';
    const text = typeof params.data === 'string' ? params.data : 'downstream log message';
    logger[level](
      { server, logger: name, ...(typeof params.data === 'string' ? {} : { data: params.data }) },
      text,
    );
    deps.notify().log({ ...params, logger: name });
  });

  const backend: FeatureBackend = {
    listPrompts: () => deps.afterStart(() => current.prompts.map((route) => route.definition)),
    listResources: () => deps.afterStart(() => current.resources.map((route) => route.definition)),
    listResourceTemplates: () =>
      deps.afterStart(() => current.resourceTemplates.map((route) => route.definition)),
    async getPrompt(name, args, { signal }) {
      await deps.afterStart(() => undefined);
      const route = current.getPrompt(name);
      if (!route) throw unknown('prompt', name, current.suggestPrompts(name));
      const result = await pool.getPrompt(route.server, route.original, args, { signal });
      return unwrap(result, GetPromptResultSchema, 'prompts/get');
    },
    async readResource(uri, { signal }) {
      await deps.afterStart(() => undefined);
      const route = current.resolveUri(uri);
      if (!route) throw unknown('resource', uri, current.suggestUris(uri));
      const result = await pool.readResource(route.server, route.uri, { signal });
      const read = unwrap(result, ReadResourceResultSchema, 'resources/read');
      // Contents name URIs as the client sees them: the one it asked for, others namespaced.
      const prefix = uriPrefix(options.globalPrefix, servers.get(route.server)?.prefix ?? route.server);
      const exposed = (own: string): string => (own === route.uri ? uri : namespaceUri(prefix, own));
      return {
        ...read,
        contents: read.contents.map((content) => ({ ...content, uri: exposed(content.uri) })),
      };
    },
    async complete(params, { signal }) {
      await deps.afterStart(() => undefined);
      const routed = route(params);
      const result = await pool.complete(routed.server, routed.params, { signal });
      // A downstream without completions has nothing to suggest: no values, not an error.
      if (!result.success && result.errorCode === String(ProtocolErrorCode.MethodNotFound))
        return { completion: { values: [], hasMore: false } };
      return unwrap(result, CompleteResultSchema, 'completion/complete');
    },
    async subscribe(uri, subscriber, { signal }) {
      await deps.afterStart(() => undefined);
      const route = current.resolveUri(uri);
      if (!route) throw unknown('resource', uri, current.suggestUris(uri));
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
      const route = current.resolveUri(uri);
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
  function route(params: CompleteRequestParams): { server: string; params: CompleteRequestParams } {
    const ref = params.ref;
    if (ref.type === 'ref/prompt') {
      const prompt = current.getPrompt(ref.name);
      if (!prompt) throw unknown('prompt', ref.name, current.suggestPrompts(ref.name));
      return { server: prompt.server, params: { ...params, ref: { ...ref, name: prompt.original } } };
    }
    const template = current.getTemplate(ref.uri);
    const target = template
      ? { server: template.server, uri: template.original }
      : current.resolveUri(ref.uri);
    if (!target) throw unknown('resource template', ref.uri, current.suggestUris(ref.uri));
    return { server: target.server, params: { ...params, ref: { ...ref, uri: target.uri } } };
  }

  return { backend, index: () => current, rebuild };
}
