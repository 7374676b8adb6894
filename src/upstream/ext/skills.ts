/**
 * Skills (SEP-2640) upstream (issue 47): `skills/list` and `skills/get` on the gateway's server,
 * the extension declared when a server behind it declares it, and `resources/read` of a skill
 * file routed to the skills backend (app/ext/skills.ts, behind the {@link SkillsPort}). The cache
 * fields (`ttlMs`, `cacheScope`) travel to 2026 hosts only, as the SDK's own extension does.
 */
import type { Server } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { CallAccess } from '../../core/policy.js';
import { SKILLS_EXTENSION, type SkillEntry } from '../../core/skills.js';
import { canonicalParam, type FeatureBackend } from '../features.js';
import type { ExtensionCapability, RequestScope, UpstreamExtension } from './extension.js';

/** What a skills request is given (the app's requests take more, as the pool's do). */
export interface SkillRequestOptions {
  readonly signal?: AbortSignal;
  /** X2: the caller's principal ("" when anonymous): a `skills/list` cursor is bound to it. */
  readonly principal?: string;
}

/** Cache fields of an answer (sent to 2026 hosts only). */
interface Cached {
  readonly ttlMs: number;
  readonly cacheScope: 'public' | 'private';
}

/** The skills of every server, as the app serves them (app/ext/skills.ts). */
export interface SkillsPort {
  /** Whether every such server serves `resources/directory/read` (`directoryRead: true`). */
  directoryRead(): boolean;
  /** `resources/directory/read` of an exposed skill folder: its children, exposed, in the view. */
  readDirectory(
    access: CallAccess | undefined,
    uri: string,
    cursor: string | undefined,
    options: SkillRequestOptions,
  ): Promise<Record<string, unknown>>;
  list(
    access: CallAccess | undefined,
    cursor: string | undefined,
    options: SkillRequestOptions,
  ): Promise<Cached & { readonly skills: readonly SkillEntry[]; readonly nextCursor?: string }>;
  get(
    access: CallAccess | undefined,
    uri: string,
    options: SkillRequestOptions,
  ): Promise<Cached & { readonly skill: SkillEntry }>;
  /** Whether exposed `uri` is a skill's (its reads come here). */
  owns(uri: string): boolean;
  /** resources/read of an exposed skill file, checked against its entry. */
  read(
    access: CallAccess | undefined,
    uri: string,
    options: SkillRequestOptions,
  ): Promise<Record<string, unknown>>;
}

const ListParams = z.object({ cursor: z.string().optional() }).passthrough();
const GetParams = z.object({ uri: z.string() }).passthrough();
const DirectoryParams = z.object({ uri: z.string(), cursor: z.string().optional() }).passthrough();

/** Registers `skills/list`, `skills/get` and `resources/directory/read` on `server`. */
function register(server: Server, skills: SkillsPort, scope: RequestScope): void {
  /** The cache fields for a 2026 host; none for a 2025 one. */
  const answer = <T extends Cached>({ ttlMs, cacheScope, ...rest }: T) =>
    scope.era === 'modern' ? { ...rest, ttlMs, cacheScope } : rest;
  server.setRequestHandler('skills/list', { params: ListParams }, async (params, ctx) => {
    const who = scope.who(ctx);
    // X2: a cursor is bound to the caller's principal ("" when anonymous).
    return answer(
      await skills.list(who.access, params.cursor, {
        signal: scope.signal(ctx),
        principal: who.subject ?? '',
      }),
    );
  });
  // Registered always: a server that serves no directory answers -32601 through the gateway.
  server.setRequestHandler('resources/directory/read', { params: DirectoryParams }, async (params, ctx) =>
    answer({
      ttlMs: 0,
      cacheScope: 'private' as const,
      ...(await skills.readDirectory(scope.who(ctx).access, canonicalParam(params.uri), params.cursor, {
        signal: scope.signal(ctx),
      })),
    }),
  );
  server.setRequestHandler('skills/get', { params: GetParams }, async (params, ctx) =>
    answer(
      await skills.get(scope.who(ctx).access, canonicalParam(params.uri), { signal: scope.signal(ctx) }),
    ),
  );
}

/**
 * Issue 47, X1: skills as an extension of the gateway. Declared in both eras, always (a gateway
 * with no skills server lists none), so that a host that asks once, before the servers are up,
 * knows it (stdio-front.ts); `directoryRead` when every skills server connected now serves
 * directories. Reads of skill files are answered by `skills` (checked against their entries).
 */
export function skillsExtension(skills: SkillsPort): UpstreamExtension {
  return {
    id: SKILLS_EXTENSION,
    methods: ['skills/list', 'skills/get', 'resources/directory/read'],
    capability: (): ExtensionCapability => (skills.directoryRead() ? { directoryRead: true } : {}),
    register: (server, scope) => register(server, skills, scope),
    features: (features) => ({
      ...features,
      readResource: (uri, options) =>
        skills.owns(uri)
          ? (skills.read(options.access, uri, options) as ReturnType<FeatureBackend['readResource']>)
          : features.readResource(uri, options),
    }),
  };
}
