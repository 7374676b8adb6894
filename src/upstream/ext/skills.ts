/**
 * Skills (SEP-2640) upstream (issue 47): `skills/list` and `skills/get` on the gateway's server,
 * the extension declared when a server behind it declares it, and `resources/read` of a skill
 * file routed to the skills backend (app/skills.ts, behind the {@link SkillsPort}). The cache
 * fields (`ttlMs`, `cacheScope`) travel to 2026 hosts only, as the SDK's own extension does.
 */
import type { Server, ServerContext } from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { CallAccess } from '../core/policy.js';
import { SKILLS_EXTENSION, type SkillEntry } from '../core/skills.js';
import { canonicalParam, type FeatureBackend } from './features.js';
import type { Era } from './notifier.js';

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

/** The skills of every server, as the app serves them (app/skills.ts). */
export interface SkillsPort {
  /** Whether a connected server declares the extension (the gateway then declares it too). */
  declared(): boolean;
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

/**
 * X1: the capability to declare: the extension, always (a gateway with no skills server lists
 * none), so that a host that asks once, before the servers are up, knows it (stdio-front.ts);
 * `directoryRead` when every skills server connected now serves directories.
 */
export function skillsCapability(skills: SkillsPort | undefined): {
  extensions?: Record<string, { directoryRead?: boolean }>;
} {
  if (skills === undefined) return {};
  return { extensions: { [SKILLS_EXTENSION]: skills.directoryRead() ? { directoryRead: true } : {} } };
}

/** Registers `skills/list` and `skills/get` on `server`. */
export function registerSkillHandlers(
  server: Server,
  skills: SkillsPort,
  options: {
    readonly era: Era;
    readonly signalOf: (signal: AbortSignal) => AbortSignal;
    readonly access: (ctx: ServerContext) => CallAccess | undefined;
    /** X2: the caller's principal ("" when anonymous), which a cursor is bound to. */
    readonly caller: (ctx: ServerContext) => string;
  },
): void {
  /** The cache fields for a 2026 host; none for a 2025 one. */
  const answer = <T extends Cached>({ ttlMs, cacheScope, ...rest }: T) =>
    options.era === 'modern' ? { ...rest, ttlMs, cacheScope } : rest;
  server.setRequestHandler('skills/list', { params: ListParams }, async (params, ctx) =>
    answer(
      await skills.list(options.access(ctx), params.cursor, {
        signal: options.signalOf(ctx.mcpReq.signal),
        principal: options.caller(ctx),
      }),
    ),
  );
  // Registered always: a server that serves no directory answers -32601 through the gateway.
  server.setRequestHandler('resources/directory/read', { params: DirectoryParams }, async (params, ctx) =>
    answer({
      ttlMs: 0,
      cacheScope: 'private' as const,
      ...(await skills.readDirectory(options.access(ctx), canonicalParam(params.uri), params.cursor, {
        signal: options.signalOf(ctx.mcpReq.signal),
      })),
    }),
  );
  server.setRequestHandler('skills/get', { params: GetParams }, async (params, ctx) =>
    answer(
      await skills.get(options.access(ctx), canonicalParam(params.uri), {
        signal: options.signalOf(ctx.mcpReq.signal),
      }),
    ),
  );
}

/** `features` with reads of skill files answered by `skills` (checked against their entries). */
export function withSkills(features: FeatureBackend, skills: SkillsPort): FeatureBackend {
  return {
    ...features,
    readResource: (uri, options) =>
      skills.owns(uri)
        ? (skills.read(options.access, uri, options) as ReturnType<FeatureBackend['readResource']>)
        : features.readResource(uri, options),
  };
}
