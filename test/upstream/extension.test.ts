/**
 * Issue 57: extensions plug in through one seam (upstream/ext/extension.ts), and every handler
 * family works out its request's caller once, through the one scope (upstream/scope.ts).
 */
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import { GetPromptResultSchema, ResultSchema } from '@modelcontextprotocol/sdk/types.js';
import { afterEach, describe, expect, it } from 'vitest';
import * as z from 'zod/v4';
import type { CallAccess, Principal } from '../../src/core/policy.js';
import type { CallerViews } from '../../src/upstream/backend.js';
import type { UpstreamExtension } from '../../src/upstream/ext/extension.js';
import type { FeatureBackend, FeatureRequestOptions } from '../../src/upstream/features.js';
import type { RequestCaller } from '../../src/upstream/caller-identity.js';
import { fakeBackend, wireUpstream } from './fake-backend.js';

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/** Views that count how often a caller's view was worked out. */
function countingViews(): CallerViews & { asked: number } {
  const views = {
    personal: false,
    asked: 0,
    of(_principal: Principal, _profile: string | undefined): CallAccess | undefined {
      views.asked++;
      return undefined;
    },
  };
  return views;
}

/** Features with one prompt, `hello`, that record what each request was handed. */
function oneHelloPrompt(seen: FeatureRequestOptions[]): FeatureBackend {
  const refuse = (): never => {
    throw Object.assign(new Error('not here'), { code: ProtocolErrorCode.InvalidParams });
  };
  return {
    listPrompts: () => [{ name: 'hello' }],
    listResources: () => [],
    listResourceTemplates: () => [],
    getPrompt(_name, _args, options) {
      seen.push(options);
      return Promise.resolve({ messages: [{ role: 'user', content: { type: 'text', text: 'hi' } }] });
    },
    readResource: refuse,
    complete: refuse,
    subscribe: refuse,
    unsubscribe: () => Promise.resolve(),
    forget: () => {},
  };
}

describe('the extension seam and the request scope', () => {
  it('issue 57: a prompts/get works out its caller once, and hands the backend the host and view of that one value', async () => {
    const views = countingViews();
    const seen: FeatureRequestOptions[] = [];
    const { client } = await wireUpstream(fakeBackend(), cleanups, { views, features: oneHelloPrompt(seen) });
    const before = views.asked;
    const prompt = await client.request(
      { method: 'prompts/get', params: { name: 'hello' } },
      GetPromptResultSchema,
    );
    expect(prompt.messages).toHaveLength(1);
    expect(views.asked - before).toBe(1);
    expect(seen).toHaveLength(1);
    // Q2: the host as its 2025 session declared itself; its pushes are not relayed.
    expect(seen[0]?.caller?.capabilities).toEqual({});
    await expect(seen[0]?.caller?.ask({ method: 'ping' } as never)).rejects.toThrow(/not relayed/);
    await client.listTools();
    await client.listPrompts();
    expect(views.asked - before).toBe(3);
  });

  it('issue 57: an extension plugs in: declared in the eras it names, its handler registered with the scope, its methods its own', async () => {
    const callers: RequestCaller[] = [];
    const echo: UpstreamExtension = {
      id: 'com.example/echo',
      methods: ['echo/ping'],
      capability: (era) => (era === 'legacy' ? { version: 1 } : undefined),
      register(server, scope) {
        server.setRequestHandler('echo/ping', { params: z.object({ word: z.string() }) }, (params, ctx) => {
          callers.push(scope.who(ctx));
          // The same request asks again: the same value, not a second derivation.
          expect(scope.who(ctx)).toBe(callers.at(-1));
          return { echoed: params.word, era: scope.era };
        });
      },
    };
    const { client } = await wireUpstream(fakeBackend(), cleanups, { extensions: [echo] });
    const declared = client.getServerCapabilities() as { extensions?: Record<string, unknown> };
    expect(declared.extensions).toEqual({ 'com.example/echo': { version: 1 } });
    const answer = await client.request(
      { method: 'echo/ping', params: { word: 'hi' } },
      ResultSchema.extend({ echoed: z.string(), era: z.string() }),
    );
    expect(answer).toMatchObject({ echoed: 'hi', era: 'legacy' });
    expect(callers).toHaveLength(1);
    expect(callers[0]?.principal.key).toBe('anonymous');
  });

  it('issue 57: with no extension the server declares none', async () => {
    const { client } = await wireUpstream(fakeBackend(), cleanups);
    expect((client.getServerCapabilities() as { extensions?: unknown }).extensions).toBeUndefined();
  });
});
