/**
 * One view per caller (I3, I6): what a caller sees of both catalogs (its tools by expose mode,
 * prompts, resources, templates, search candidates) and may call. With the call pipeline's
 * authorization step (`core/prepare-call.ts`, which decides a tools/call right after its lookup)
 * this file is the only place the policy is applied; `core/policy.ts` decides, pure, and nothing
 * else asks it. The view itself (`CallAccess`) is resolved once per request by
 * `upstream/caller-identity.ts` through {@link Views.of}, and handed to the backends, which apply
 * it here.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { Catalog, ExposedTool } from '../core/catalog.js';
import {
  LOCAL_PRINCIPAL,
  viewOf,
  type CallAccess,
  type Policy,
  type Principal,
  type ProfileSelection,
  type Verdict,
} from '../core/policy.js';
import { codeToolDefinitions } from '../core/code-mode.js';
import { searchedMode } from '../core/options.js';
import { searchPairDefinitions, type SearchPair } from '../core/search.js';
import { FILE_URI_PREFIX } from '../core/uri-namespace.js';

/** What {@link createViews} is built from. */
export interface ViewOptions {
  /** I3: the compiled `access:` rules; absent: every caller everything. */
  readonly policy?: Policy;
  /** I6: each profile's selection, by name. */
  readonly profiles?: Readonly<Record<string, ProfileSelection>>;
  /** I3: told once per principal that no rule names it (it sees nothing). */
  readonly logger?: Pick<Logger, 'info'>;
}

/** A prompt, resource or template the caller's view does not hold. */
export type HiddenKind = 'prompt' | 'resource';

/** The callers' views; every method is pure over its arguments but {@link Views.of}'s one log line. */
export interface Views {
  /** True when views vary by principal (a policy): lists are then private to their caller (E2). */
  readonly personal: boolean;
  /** I3, I6: `principal`'s view at `profile`'s endpoint; undefined when nothing narrows it. */
  of(principal: Principal, profile: string | undefined): CallAccess | undefined;
  /** I6: `profile`'s own selection, before any access rule (what `check` hashes). */
  ofProfile(profile: string): CallAccess | undefined;
  /** I3, I6: whether the view holds exposed tool `name`. */
  holds(access: CallAccess | undefined, name: string): boolean;
  /** I3, I6: the tools/list answer for `access`, by its expose mode, with the gateway's search pair. */
  tools(access: CallAccess | undefined, catalog: Catalog, pair: SearchPair | undefined): readonly Tool[];
  /** I3, I6: every tool the view may call (search-only ones too), for the CLI's table. */
  callable(access: CallAccess | undefined, catalog: Catalog): readonly ExposedTool[];
  /** S2, I6: what `search_tools` searches for the view: every tool (a profile in search mode), or the search-mode servers'. */
  searchScope(access: CallAccess | undefined): 'all' | 'search';
  /** I3: the verdict on exposed tool `name` (`tools` names the CLI's empty-view reason). */
  verdict(access: CallAccess | undefined, name: string): Verdict;
  /** I4: the scope `principal` lacks for tool `name` (the HTTP step-up's 403), if that is all it lacks. */
  missingScope(principal: Principal, name: string): string | undefined;
  /** I3, I6: the prompts of the view, in list order. */
  prompts<T extends { readonly name: string }>(access: CallAccess | undefined, prompts: readonly T[]): T[];
  /** I3, I6: the resources of the view. */
  resources<T extends { readonly uri: string }>(access: CallAccess | undefined, resources: readonly T[]): T[];
  /** I3, I6: the resource templates of the view. */
  templates<T extends { readonly uriTemplate: string }>(
    access: CallAccess | undefined,
    templates: readonly T[],
  ): T[];
  /**
   * I3: refuses a prompt, resource or template the view does not hold like a bad name
   * (InvalidParams, `reason: access_denied`); returns when it does.
   */
  refuse(access: CallAccess | undefined, kind: HiddenKind, name: string): void;
}

/** Principals already told of having no rule (bounded: past it, nobody more is told). */
const NO_RULE_TOLD = 1024;

const ALLOWED: Verdict = { allowed: true };

/** @example const views = createViews({ policy, profiles, logger }); views.tools(views.of(p, undefined), catalog, pair); */
export function createViews(options: ViewOptions): Views {
  const { policy, profiles, logger } = options;
  const told = new Set<string>();
  const sees = (access: CallAccess, name: string): boolean => access.sees(name);
  return {
    personal: policy !== undefined,
    of(principal, profile) {
      // I3: a caller no rule names sees nothing; the operator reads why, once per principal.
      if (
        policy !== undefined &&
        logger !== undefined &&
        !told.has(principal.key) &&
        told.size < NO_RULE_TOLD
      ) {
        told.add(principal.key);
        const verdict = policy.decide(principal, '');
        if (!verdict.allowed && verdict.reason === 'no_rule')
          logger.info({ principal: principal.key }, 'no access: rule names this principal: it sees no tool');
      }
      return viewOf(policy, profiles, principal, profile);
    },
    ofProfile: (profile) => viewOf(undefined, profiles, LOCAL_PRINCIPAL, profile),
    holds: (access, name) => access === undefined || sees(access, name),
    tools(access, catalog, pair) {
      if (access === undefined) return catalog.definitions;
      const seen = catalog.tools.filter((tool) => sees(access, tool.name));
      // I3, I6: the search pair searches what the caller sees; a caller who sees nothing (no
      // rule, or confined to another profile) is not offered it either.
      if (searchedMode(access.expose) && pair !== undefined)
        return seen.length === 0
          ? []
          : [
              ...searchPairDefinitions(pair, [...new Set(seen.map((tool) => tool.server))]),
              // M1: a profile in code mode lists `run_code` too.
              ...(access.expose === 'code' ? codeToolDefinitions(pair) : []),
            ];
      if (access.expose === 'all' || access.expose === 'read_only')
        return seen.map((tool) => tool.definition);
      const pairListed = seen.length > 0;
      return catalog.definitions.filter((tool) =>
        tool.name === pair?.search || tool.name === pair?.call || tool.name === pair?.run
          ? pairListed
          : sees(access, tool.name),
      );
    },
    callable: (access, catalog) =>
      access === undefined ? catalog.tools : catalog.tools.filter((tool) => sees(access, tool.name)),
    searchScope: (access) => (searchedMode(access?.expose) ? 'all' : 'search'),
    verdict: (access, name) => access?.decide(name) ?? ALLOWED,
    missingScope(principal, name) {
      const verdict = policy?.decide(principal, name);
      return verdict !== undefined && !verdict.allowed && verdict.reason === 'insufficient_scope'
        ? verdict.scope
        : undefined;
    },
    prompts: (access, prompts) =>
      access === undefined ? [...prompts] : prompts.filter((prompt) => access.seesPrompt(prompt.name)),
    resources: (access, resources) =>
      access === undefined
        ? [...resources]
        : resources.filter((resource) => access.readsResource(resource.uri)),
    templates: (access, templates) =>
      access === undefined
        ? [...templates]
        : templates.filter((template) => access.readsResource(template.uriTemplate)),
    refuse(access, kind, name) {
      if (access === undefined) return;
      // F7, I5: the gateway's own file links are bound to their owner instead.
      if (
        kind === 'prompt'
          ? access.seesPrompt(name)
          : name.startsWith(FILE_URI_PREFIX) || access.readsResource(name)
      )
        return;
      const what = kind === 'prompt' ? 'Prompt' : 'Resource';
      throw Object.assign(new Error(`${what} "${name}" is not allowed for this caller`), {
        code: ProtocolErrorCode.InvalidParams,
        data: { [kind === 'prompt' ? 'prompt' : 'uri']: name, reason: 'access_denied' },
      });
    },
  };
}
