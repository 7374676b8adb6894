/**
 * The seam extensions plug into (issue 57): what an extension the gateway relays is
 * ({@link UpstreamExtension}: SEP-2640 skills, SEP-2663 tasks, the next one). The upstream server
 * (server.ts) names no extension: it declares and registers each one it is handed, with the one
 * {@link RequestScope} every handler family gets, and the composition root (app/proxy.ts) hands
 * them over, one line each.
 *
 * This file takes the scope from scope.ts and the feature backend from features.ts, never
 * through server.ts, or server.ts and the extensions would need each other.
 */
import type { Server, ServerCapabilities } from '@modelcontextprotocol/server';
import type { Era } from '../../core/options.js';
import type { FeatureBackend } from '../features.js';
import type { RequestScope } from '../scope.js';

export type { RequestScope } from '../scope.js';

/** What one extension declares under `capabilities.extensions[id]` (JSON). */
export type ExtensionCapability = NonNullable<ServerCapabilities['extensions']>[string];

/** An extension the gateway relays from the servers behind it to its hosts. */
export interface UpstreamExtension {
  /** As declared in `capabilities.extensions`: `io.modelcontextprotocol/skills`. */
  readonly id: string;
  /** Its request methods, counted by name (O1, app/metrics.ts). */
  readonly methods: readonly string[];
  /**
   * What to declare to a host of `era` now (under `capabilities.extensions[id]`); undefined:
   * nothing (the extension is not defined in that era).
   */
  capability(era: Era): ExtensionCapability | undefined;
  /** Registers its handlers on one connection's server of `scope.era`. */
  register(server: Server, scope: RequestScope): void;
  /** The feature backend with the extension's own resources (skill files) read by it. */
  features?(backend: FeatureBackend): FeatureBackend;
}

/** `capabilities.extensions` of every extension declared in `era`; none: nothing. */
export function declaredExtensions(
  extensions: readonly UpstreamExtension[],
  era: Era,
): Pick<ServerCapabilities, 'extensions'> {
  const declared: Record<string, ExtensionCapability> = {};
  for (const extension of extensions) {
    const capability = extension.capability(era);
    if (capability !== undefined) declared[extension.id] = capability;
  }
  return Object.keys(declared).length > 0 ? { extensions: declared } : {};
}
