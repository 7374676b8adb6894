/**
 * What the aggregated server announces (U5, E1, E2), in one light module: the server and the
 * stdio front (stdio-front.ts) both answer from it, and the front loads nothing heavier than
 * this file, so that a host's opening message is answered before the SDK has even loaded.
 */
import type { ServerCapabilities } from '@modelcontextprotocol/server';
import type { Era } from '../core/options.js';
import { SKILLS_EXTENSION } from '../core/skills.js';
import { TASKS_EXTENSION } from '../core/tasks.js';

/** The one protocol revision of the modern era (the SDK's `server/discover` answer lists it). */
export const MODERN_PROTOCOL_VERSION = '2026-07-28';

/**
 * The 2025-era revisions the SDK negotiates in `initialize`, newest first: a request for one of
 * them is answered with it, any other with the first (`SUPPORTED_PROTOCOL_VERSIONS` of
 * `@modelcontextprotocol/core`; test/upstream/stdio-front.test.ts holds the two equal).
 */
export const LEGACY_PROTOCOL_VERSIONS: readonly string[] = Object.freeze([
  '2025-11-25',
  '2025-06-18',
  '2025-03-26',
  '2024-11-05',
  '2024-10-07',
]);

/**
 * E2: cache hints of modern list results and `server/discover`. Ten seconds bounds how stale a
 * client without a listen stream may see a list; `public` because no list varies by caller.
 */
export const LIST_HINT = Object.freeze({ ttlMs: 10_000, cacheScope: 'public' } as const);

/**
 * U5: the capabilities of the prompts and resources features: only what is built (P8's spirit
 * upstream): list_changed for both lists, completions, and (Q5) resource `subscribe` to a 2025
 * client only; the 2026 listen stream's `resourceSubscriptions` are not built.
 */
export function featureCapabilities(era: Era): ServerCapabilities {
  return era === 'legacy' ? LEGACY_FEATURES : MODERN_FEATURES;
}
const MODERN_FEATURES: ServerCapabilities = Object.freeze({
  prompts: { listChanged: true },
  resources: { listChanged: true },
  completions: {},
});
const LEGACY_FEATURES: ServerCapabilities = Object.freeze({
  ...MODERN_FEATURES,
  resources: { listChanged: true, subscribe: true },
});

/** What every aggregated server announces besides its features: tools that change, and logging. */
export const BASE_CAPABILITIES: ServerCapabilities = Object.freeze({
  tools: { listChanged: true },
  logging: {},
});

/**
 * X1, X5: the extensions the gateway relays, declared whatever is connected behind it (a host
 * that asks once, before any server is up, must know them): Skills in both eras, Tasks to 2026
 * hosts (SEP-2663 is not defined in 2025). The live server adds `directoryRead` to Skills once
 * every skills server serves directories (upstream/skills.ts); the stdio front cannot know it.
 */
export function extensionCapabilities(era: Era): Pick<ServerCapabilities, 'extensions'> {
  return { extensions: era === 'modern' ? MODERN_EXTENSIONS : LEGACY_EXTENSIONS };
}
const LEGACY_EXTENSIONS = Object.freeze({ [SKILLS_EXTENSION]: {} });
const MODERN_EXTENSIONS = Object.freeze({ ...LEGACY_EXTENSIONS, [TASKS_EXTENSION]: {} });

/** The gateway's capabilities in `era`, features on (as `createProxy` always serves them). */
export function gatewayCapabilities(era: Era): ServerCapabilities {
  return { ...BASE_CAPABILITIES, ...featureCapabilities(era), ...extensionCapabilities(era) };
}
