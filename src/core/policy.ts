/**
 * Who may see and call what (I3, I4): principals and the ordered access rules over exposed names.
 * Pure: a principal is what a validated token said; the rules are the config's `access:` list.
 *
 * Rules are read in order and the first rule whose `principals` match decides; a principal no
 * rule matches has no access at all. Within the deciding rule, `allow` is a list of globs over
 * exposed names, `!` excluding: a name is allowed when it matches an allow glob and no `!` glob.
 * A rule's `scopes` maps globs to the OAuth scope a matching tool needs on top (step-up, I4).
 * Prompts follow `allow` too; resources and templates follow the rule's own `resources` globs over
 * exposed URIs (none without them), and a rule's `profiles` confine its principals to those views.
 */
import picomatch from 'picomatch';
import type { ExposeMode } from './options.js';

/**
 * I2: where a principal comes from. Its {@link Principal.key} says so too, so that no kind of
 * token can take another kind's name: a JWT whose `sub` is `local`, or the name of a static
 * token, is still the issuer's principal of that subject.
 */
export type PrincipalKind = 'issuer' | 'token' | 'local' | 'anonymous';

/** The caller behind a request, from its validated token (I2). */
export interface Principal {
  readonly kind: PrincipalKind;
  /**
   * I2: what the gateway keys the principal's things by (sessions, input-round states, file
   * links, per-caller copies, logins): `<issuer>#<sub>`, `token:<name>`, `local`, `anonymous`.
   */
  readonly key: string;
  /** `sub` of the token, or the static token's name; `local` over stdio. */
  readonly subject: string;
  readonly groups: readonly string[];
  readonly scopes: readonly string[];
  /** The OAuth client the token was issued to, when it says. */
  readonly clientId?: string;
}

/** I2: the principal of an issuer's token (a JWT, or an opaque token introspected). */
export function issuerPrincipal(
  issuer: string,
  subject: string,
  claims: Pick<Principal, 'groups' | 'scopes' | 'clientId'>,
): Principal {
  return { kind: 'issuer', key: `${issuer}#${subject}`, subject, ...claims };
}

/** I2: the principal of the static token `name` (`http.auth.tokens`, `http.token` as `token`). */
export function tokenPrincipal(
  name: string,
  groups: readonly string[],
  scopes: readonly string[],
): Principal {
  return { kind: 'token', key: `token:${name}`, subject: name, groups, scopes };
}

/** The one caller of a stdio gateway (I2): it started this gateway. */
export const LOCAL_PRINCIPAL: Principal = {
  kind: 'local',
  key: 'local',
  subject: 'local',
  groups: [],
  scopes: [],
};

/** A caller over HTTP with no validated token (no `http.auth`). */
export const ANONYMOUS_PRINCIPAL: Principal = {
  kind: 'anonymous',
  key: 'anonymous',
  subject: 'anonymous',
  groups: [],
  scopes: [],
};

/** The principal a validated token's `AuthInfo` carries (upstream/identity.ts puts it there). */
export function principalOf(
  auth: { readonly extra?: Record<string, unknown> } | undefined,
): Principal | undefined {
  return auth?.extra?.['principal'] as Principal | undefined;
}

/** One `access:` rule as written. */
export interface AccessRule {
  /** `sub:<subject>`, `client:<id>` (the issuer's), `token:<name>`, `local`, `group:<name>`, `scope:<scope>`, or `*`. */
  readonly principals: readonly string[];
  /** Globs over exposed names; `!glob` excludes. */
  readonly allow: readonly string[];
  /** Glob over exposed names → the scope such a tool needs. */
  readonly scopes?: Readonly<Record<string, string>>;
  /** Globs over exposed resource and template URIs (`*`: any run of characters); absent: none. */
  readonly resources?: readonly string[];
  /** I6: the profiles the rule's principals may use; absent: every profile and the whole catalog. */
  readonly profiles?: readonly string[];
}

/** What a principal may do with one exposed name. */
export type Verdict =
  | { readonly allowed: true }
  | {
      readonly allowed: false;
      readonly reason: 'no_rule' | 'not_allowed' | 'not_in_profile' | 'profile_not_allowed';
    }
  | { readonly allowed: false; readonly reason: 'insufficient_scope'; readonly scope: string };

/** The compiled rules. */
export interface Policy {
  /** A verdict for `principal` on exposed name `name`. */
  decide(principal: Principal, name: string): Verdict;
  /** True when `principal` may see `name` in a list (it is allowed, or allowed with a scope step-up). */
  sees(principal: Principal, name: string): boolean;
  /** True when `principal` may list and read the resource or template at exposed `uri`. */
  readsResource(principal: Principal, uri: string): boolean;
  /** I6: true when `principal` may use `profile` (`undefined`: the whole catalog, `/mcp`). */
  usesProfile(principal: Principal, profile: string | undefined): boolean;
}

/** True for a principal pattern `access:` accepts. */
export function isPrincipalPattern(pattern: string): boolean {
  return (
    pattern === '*' ||
    pattern === 'local' ||
    pattern === 'anonymous' ||
    /^(sub|group|scope|client|token):.+$/.test(pattern)
  );
}

/**
 * I2: `sub:` and `client:` name the issuer's principals, `token:` a static token, `local` (or,
 * as written before, `sub:local`) the gateway's own user; `group:` and `scope:` any principal
 * that carries them.
 */
function matchesPrincipal(pattern: string, principal: Principal): boolean {
  if (pattern === '*') return true;
  if (pattern === 'local' || pattern === 'sub:local') return principal.kind === 'local';
  // Every caller without a token over HTTP (docs/identity.md), one principal.
  if (pattern === 'anonymous') return principal.kind === 'anonymous';
  const colon = pattern.indexOf(':');
  const kind = pattern.slice(0, colon);
  const value = pattern.slice(colon + 1);
  switch (kind) {
    case 'sub':
      return principal.kind === 'issuer' && principal.subject === value;
    case 'token':
      return principal.kind === 'token' && principal.subject === value;
    case 'group':
      return principal.groups.includes(value);
    case 'scope':
      return principal.scopes.includes(value);
    case 'client':
      return principal.kind === 'issuer' && principal.clientId === value;
    default:
      return false;
  }
}

/** True when one of `patterns` (as in a rule's `principals`) names `principal`. */
export function matchesAny(patterns: readonly string[], principal: Principal): boolean {
  return patterns.some((pattern) => matchesPrincipal(pattern, principal));
}

interface CompiledRule {
  readonly principals: readonly string[];
  readonly allow: (name: string) => boolean;
  readonly deny: (name: string) => boolean;
  readonly scopes: readonly { readonly match: (name: string) => boolean; readonly scope: string }[];
  readonly resources: (uri: string) => boolean;
  readonly profiles: ReadonlySet<string> | undefined;
}

const never = (): boolean => false;

/** One URI glob as a RegExp: `*` is any run of characters (`/` too), the rest is literal. */
function uriGlob(glob: string): RegExp {
  const literal = glob.split('*').map((part) => part.replace(/[.+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${literal.join('.*')}$`, 's');
}

/**
 * I3, I6: globs over exposed resource and template URIs, `!` excluding; `*` matches any run of
 * characters, `/` included (URIs are not file paths), and nothing else is special.
 * @example compileUriSelection(['docs+*', '!docs+secret:*'])('docs+https://x/a') // true
 */
export function compileUriSelection(globs: readonly string[]): (uri: string) => boolean {
  const allow = globs.filter((glob) => !glob.startsWith('!')).map(uriGlob);
  const deny = globs.filter((glob) => glob.startsWith('!')).map((glob) => uriGlob(glob.slice(1)));
  return (uri) => allow.some((re) => re.test(uri)) && !deny.some((re) => re.test(uri));
}

function compileRule(rule: AccessRule): CompiledRule {
  const allow = rule.allow.filter((glob) => !glob.startsWith('!'));
  const deny = rule.allow.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  return {
    principals: rule.principals,
    allow: allow.length > 0 ? picomatch([...allow], { dot: true }) : never,
    deny: deny.length > 0 ? picomatch(deny, { dot: true }) : never,
    scopes: Object.entries(rule.scopes ?? {}).map(([glob, scope]) => ({
      match: picomatch(glob, { dot: true }),
      scope,
    })),
    resources: rule.resources !== undefined ? compileUriSelection(rule.resources) : never,
    profiles: rule.profiles !== undefined ? new Set(rule.profiles) : undefined,
  };
}

/**
 * Compiles `rules`; `undefined` (no `access:` in the config) allows every principal everything.
 * @example compilePolicy([{ principals: ['group:dev'], allow: ['files_*', '!files_delete'] }])
 */
export function compilePolicy(rules: readonly AccessRule[] | undefined): Policy {
  if (rules === undefined) {
    return {
      decide: () => ({ allowed: true }),
      sees: () => true,
      readsResource: () => true,
      usesProfile: () => true,
    };
  }
  const compiled = rules.map(compileRule);
  const ruleFor = (principal: Principal): CompiledRule | undefined =>
    compiled.find((rule) => rule.principals.some((pattern) => matchesPrincipal(pattern, principal)));
  const decide = (principal: Principal, name: string): Verdict => {
    const rule = ruleFor(principal);
    if (rule === undefined) return { allowed: false, reason: 'no_rule' };
    if (!rule.allow(name) || rule.deny(name)) return { allowed: false, reason: 'not_allowed' };
    const needed = rule.scopes.find((entry) => entry.match(name));
    if (needed !== undefined && !principal.scopes.includes(needed.scope)) {
      return { allowed: false, reason: 'insufficient_scope', scope: needed.scope };
    }
    return { allowed: true };
  };
  return {
    decide,
    sees(principal, name) {
      const verdict = decide(principal, name);
      return verdict.allowed || verdict.reason === 'insufficient_scope';
    },
    readsResource: (principal, uri) => ruleFor(principal)?.resources(uri) ?? false,
    usesProfile(principal, profile) {
      const allowed = ruleFor(principal)?.profiles;
      // No rule: the verdicts say `no_rule`; no `profiles`: every view.
      return allowed === undefined || (profile !== undefined && allowed.has(profile));
    },
  };
}

/** One caller's view of the policy, as the call path and the lists use it. */
export interface CallAccess {
  /** The caller may see tool `name` in lists and search results. */
  sees(name: string): boolean;
  decide(name: string): Verdict;
  /** The caller may list, get and complete prompt `name`. */
  seesPrompt(name: string): boolean;
  /** The caller may list, read, subscribe to and complete the resource or template at `uri`. */
  readsResource(uri: string): boolean;
  /**
   * I6: the profile's own expose mode: `all` lists every tool of the view (search-only ones too),
   * `search` lists only the search pair, whose search ranks every tool of the view; `read_only`
   * is in {@link sees} already. Absent: as the catalog lists them.
   */
  readonly expose?: ExposeMode;
}

/** I6: a caller the policy confines to other profiles sees nothing here. */
const CLOSED: CallAccess = {
  sees: never,
  decide: () => ({ allowed: false, reason: 'profile_not_allowed' }),
  seesPrompt: never,
  readsResource: never,
};

/** `policy` for one caller at `profile`'s endpoint (`undefined`: the whole catalog). */
export function accessOf(policy: Policy, principal: Principal, profile?: string): CallAccess {
  if (!policy.usesProfile(principal, profile)) return CLOSED;
  return {
    sees: (name) => policy.sees(principal, name),
    decide: (name) => policy.decide(principal, name),
    seesPrompt: (name) => policy.sees(principal, name),
    readsResource: (uri) => policy.readsResource(principal, uri),
  };
}

/** I6: a profile as written: globs over exposed tool and prompt names and resource URIs. */
export interface ProfileGlobs {
  readonly tools: readonly string[];
  /** @default the `tools` globs */
  readonly prompts?: readonly string[];
  /** @default none */
  readonly resources?: readonly string[];
  /** @default as the catalog lists them */
  readonly expose?: ExposeMode;
}

/** I6: a profile's selection of the catalog. */
export interface ProfileSelection {
  readonly tools: (name: string) => boolean;
  readonly prompts: (name: string) => boolean;
  readonly resources: (uri: string) => boolean;
  readonly expose?: ExposeMode;
}

/** I6: a list of globs over exposed names, `!` excluding. */
export function compileSelection(globs: readonly string[]): (name: string) => boolean {
  const allow = globs.filter((glob) => !glob.startsWith('!'));
  const deny = globs.filter((glob) => glob.startsWith('!')).map((glob) => glob.slice(1));
  const allowed = allow.length > 0 ? picomatch([...allow], { dot: true }) : never;
  const denied = deny.length > 0 ? picomatch(deny, { dot: true }) : never;
  return (name) => allowed(name) && !denied(name);
}

/**
 * I6: a profile's selection: its tools (with `expose: read_only`, only those `readOnly` says are:
 * without it, none, as T11 counts an unannotated tool), its prompts (the tools' globs unless it
 * names its own), its resources and templates (none unless it names them).
 */
export function compileProfile(
  profile: ProfileGlobs,
  readOnly: (name: string) => boolean = never,
): ProfileSelection {
  const globs = compileSelection(profile.tools);
  const tools = profile.expose === 'read_only' ? (name: string) => globs(name) && readOnly(name) : globs;
  return {
    tools,
    prompts: profile.prompts !== undefined ? compileSelection(profile.prompts) : globs,
    resources: profile.resources !== undefined ? compileUriSelection(profile.resources) : never,
    ...(profile.expose !== undefined ? { expose: profile.expose } : {}),
  };
}

/**
 * I6: what a caller may see and call through a profile: the profile's selection, then the
 * caller's policy (either may be absent).
 */
export function withinProfile(
  selection: ProfileSelection | undefined,
  access: CallAccess | undefined,
): CallAccess | undefined {
  if (selection === undefined) return access;
  return {
    sees: (name) => selection.tools(name) && (access?.sees(name) ?? true),
    decide: (name) =>
      selection.tools(name)
        ? (access?.decide(name) ?? { allowed: true })
        : { allowed: false, reason: 'not_in_profile' },
    seesPrompt: (name) => selection.prompts(name) && (access?.seesPrompt(name) ?? true),
    readsResource: (uri) => selection.resources(uri) && (access?.readsResource(uri) ?? true),
    ...(selection.expose !== undefined ? { expose: selection.expose } : {}),
  };
}

/**
 * I3, I6: one caller's whole view: `principal` at `profile`'s endpoint (`undefined`: the whole
 * catalog), through that profile's selection and the policy; `undefined` when neither narrows.
 */
export function viewOf(
  policy: Policy | undefined,
  profiles: Readonly<Record<string, ProfileSelection>> | undefined,
  principal: Principal,
  profile: string | undefined,
): CallAccess | undefined {
  const access = policy === undefined ? undefined : accessOf(policy, principal, profile);
  return withinProfile(profile === undefined ? undefined : profiles?.[profile], access);
}
