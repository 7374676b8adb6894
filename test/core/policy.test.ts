/** I2–I4: the access rules, as a table. */
import { describe, expect, it } from 'vitest';
import {
  accessOf,
  compilePolicy,
  compileProfile,
  compileUriSelection,
  viewOf,
  withinProfile,
  issuerPrincipal,
  LOCAL_PRINCIPAL,
  tokenPrincipal,
  type AccessRule,
  type Principal,
} from '../../src/core/policy.js';

const RULES: AccessRule[] = [
  { principals: ['group:admins'], allow: ['*'] },
  {
    principals: ['group:dev', 'sub:local'],
    allow: ['files_*', 'memory_*', '!memory_delete_*'],
    scopes: { 'memory_create_*': 'memory.write' },
  },
  { principals: ['client:ci-bot', 'scope:read'], allow: ['*_read'] },
];

const who = (over: Partial<Principal>): Principal => ({
  kind: 'issuer',
  key: `https://idp.example.com#${over.subject ?? 's'}`,
  subject: 's',
  groups: [],
  scopes: [],
  ...over,
});
const policy = compilePolicy(RULES);

describe('access rules', () => {
  it.each([
    ['I3: an admin may call anything', who({ groups: ['admins'] }), 'memory_delete_all', { allowed: true }],
    [
      'I3: the first matching rule decides (dev before ci-bot)',
      who({ groups: ['dev'], clientId: 'ci-bot' }),
      'db_read',
      { allowed: false, reason: 'not_allowed' },
    ],
    ['I3: dev may call an allowed glob', who({ groups: ['dev'] }), 'files_read', { allowed: true }],
    [
      'I3: ! excludes within the allow list',
      who({ groups: ['dev'] }),
      'memory_delete_x',
      { allowed: false, reason: 'not_allowed' },
    ],
    [
      'I3: a name no glob allows is refused',
      who({ groups: ['dev'] }),
      'git_status',
      { allowed: false, reason: 'not_allowed' },
    ],
    [
      'I4: a tool that needs a scope, without it',
      who({ groups: ['dev'] }),
      'memory_create_entity',
      { allowed: false, reason: 'insufficient_scope', scope: 'memory.write' },
    ],
    [
      'I4: the same tool with the scope',
      who({ groups: ['dev'], scopes: ['memory.write'] }),
      'memory_create_entity',
      { allowed: true },
    ],
    [
      'I2: sub:local (as local) matches the local operator',
      LOCAL_PRINCIPAL,
      'files_write',
      { allowed: true },
    ],
    [
      'I2: sub:local does not match an issuer’s principal whose sub is local',
      who({ subject: 'local' }),
      'files_write',
      { allowed: false, reason: 'no_rule' },
    ],
    [
      'I2: client: does not match a static token of that name',
      tokenPrincipal('ci-bot', [], []),
      'files_read',
      { allowed: false, reason: 'no_rule' },
    ],
    ['I2: client: matches the client id', who({ clientId: 'ci-bot' }), 'files_read', { allowed: true }],
    ['I2: scope: matches a scope', who({ scopes: ['read'] }), 'db_read', { allowed: true }],
    [
      'I3: no rule matches: no access',
      who({ subject: 'stranger' }),
      'files_read',
      { allowed: false, reason: 'no_rule' },
    ],
  ])('%s', (_name, principal, tool, verdict) => {
    expect(policy.decide(principal, tool)).toEqual(verdict);
  });

  it('I4: a tool that needs a scope is still listed; a refused one is not', () => {
    const dev = who({ groups: ['dev'] });
    expect(policy.sees(dev, 'memory_create_entity')).toBe(true);
    expect(policy.sees(dev, 'memory_delete_x')).toBe(false);
  });

  it('I2: a principal is matched by subject, group, scope or client id, and * matches anyone', () => {
    const anyone = compilePolicy([{ principals: ['*'], allow: ['x'] }]);
    expect(anyone.decide(who({}), 'x')).toEqual({ allowed: true });
    expect(policy.decide(LOCAL_PRINCIPAL, 'files_a')).toEqual({ allowed: true });
    expect(policy.decide(who({ clientId: 'ci-bot' }), 'a_read')).toEqual({ allowed: true });
    expect(policy.decide(who({ scopes: ['read'] }), 'a_read')).toEqual({ allowed: true });
  });

  it.each([
    ['sub:alice', issuerPrincipal('https://idp', 'alice', { groups: [], scopes: [] }), true],
    ['sub:alice', tokenPrincipal('alice', [], []), false],
    ['token:alice', tokenPrincipal('alice', [], []), true],
    ['token:alice', issuerPrincipal('https://idp', 'alice', { groups: [], scopes: [] }), false],
    ['local', LOCAL_PRINCIPAL, true],
    ['local', issuerPrincipal('https://idp', 'local', { groups: [], scopes: [] }), false],
    ['token:local', LOCAL_PRINCIPAL, false],
    ['client:bot', issuerPrincipal('https://idp', 'x', { groups: [], scopes: [], clientId: 'bot' }), true],
    ['client:bot', tokenPrincipal('bot', [], []), false],
    ['group:ci', tokenPrincipal('bot', ['ci'], []), true],
  ])('I2: the pattern %s names a principal of its own kind only (%#)', (pattern, principal, matches) => {
    const rules = compilePolicy([{ principals: [pattern], allow: ['x'] }]);
    expect(rules.decide(principal, 'x').allowed).toBe(matches);
  });

  it('I2: principals of different kinds with one subject have different keys', () => {
    const keys = [
      issuerPrincipal('https://idp', 'token', { groups: [], scopes: [] }).key,
      tokenPrincipal('token', [], []).key,
      issuerPrincipal('https://idp', 'local', { groups: [], scopes: [] }).key,
      LOCAL_PRINCIPAL.key,
      issuerPrincipal('https://other', 'alice', { groups: [], scopes: [] }).key,
      issuerPrincipal('https://idp', 'alice', { groups: [], scopes: [] }).key,
    ];
    expect(new Set(keys).size).toBe(keys.length);
  });

  it('I3: without access rules every principal may call everything', () => {
    expect(compilePolicy(undefined).decide(who({}), 'anything')).toEqual({ allowed: true });
  });

  it('I6: a profile selects exposed names with globs, ! excluding, before the caller’s policy', () => {
    const readers = compileProfile({ tools: ['memory_*', 'files_read', '!memory_delete_*'] });
    expect(['memory_read', 'files_read', 'memory_delete_x', 'git_push'].map(readers.tools)).toEqual([
      true,
      true,
      false,
      false,
    ]);
    const dev = accessOf(policy, who({ groups: ['dev'] }));
    const view = withinProfile(readers, dev);
    expect(view?.decide('git_push')).toEqual({ allowed: false, reason: 'not_in_profile' });
    expect(view?.decide('memory_read')).toEqual({ allowed: true });
    // In the profile but refused by the policy: the policy's reason.
    expect(view?.decide('files_read')).toEqual({ allowed: true });
    expect(withinProfile(compileProfile({ tools: ['git_*'] }), dev)?.decide('git_status')).toEqual({
      allowed: false,
      reason: 'not_allowed',
    });
    expect(withinProfile(readers, undefined)?.sees('memory_read')).toBe(true);
    expect(withinProfile(undefined, undefined)).toBeUndefined();
  });

  it('I6: a profile’s prompts follow its tools’ globs unless it names its own; it serves no resources unless it names them', () => {
    const plain = compileProfile({ tools: ['memory_*'] });
    expect([plain.prompts('memory_hint'), plain.prompts('git_hint'), plain.resources('m+mem://a')]).toEqual([
      true,
      false,
      false,
    ]);
    const own = compileProfile({ tools: ['memory_*'], prompts: ['git_*'], resources: ['m+mem://*'] });
    expect([own.prompts('memory_hint'), own.prompts('git_hint'), own.resources('m+mem://a/b')]).toEqual([
      false,
      true,
      true,
    ]);
  });

  it.each([
    ['*', 'files+file:///a/b.md', true],
    ['files+*', 'files+file:///a/b.md', true],
    ['files+file:///a/*', 'files+file:///a/b/c.md', true],
    ['files+file:///a/*', 'files+file:///b/c.md', false],
    ['docs+https://x.test/{page}', 'docs+https://x.test/{page}', true],
    ['docs+https://x.test/{page}', 'docs+https://x.test/home', false],
    ['a.b+*', 'aXb+c', false],
  ])('I3: the URI glob %s over %s: %s (only * is special, and it spans /)', (glob, uri, matched) => {
    expect(compileUriSelection([glob])(uri)).toBe(matched);
  });

  it('I3: resources follow the deciding rule’s own globs, none without them', () => {
    const rules = compilePolicy([
      { principals: ['group:admins'], allow: ['*'], resources: ['*'] },
      { principals: ['group:dev'], allow: ['*'], resources: ['files+*', '!files+file:///secret/*'] },
      { principals: ['*'], allow: ['*'] },
    ]);
    const reads = (principal: Principal, uri: string): boolean => rules.readsResource(principal, uri);
    expect(reads(who({ groups: ['admins'] }), 'db+sqlite://x')).toBe(true);
    expect(reads(who({ groups: ['dev'] }), 'files+file:///a')).toBe(true);
    expect(reads(who({ groups: ['dev'] }), 'files+file:///secret/k')).toBe(false);
    expect(reads(who({ groups: ['dev'] }), 'db+sqlite://x')).toBe(false);
    expect(reads(who({}), 'files+file:///a')).toBe(false);
    expect(compilePolicy(undefined).readsResource(who({}), 'x')).toBe(true);
  });

  it('I6: a rule’s profiles confine its principals to those views; /mcp is not one of them', () => {
    const rules = compilePolicy([
      { principals: ['client:ci'], allow: ['*'], profiles: ['ci'] },
      { principals: ['*'], allow: ['*'] },
    ]);
    const ci = who({ clientId: 'ci' });
    expect(accessOf(rules, ci, 'ci').decide('git_status')).toEqual({ allowed: true });
    for (const elsewhere of ['readers', undefined]) {
      const view = accessOf(rules, ci, elsewhere);
      expect(view.decide('git_status')).toEqual({ allowed: false, reason: 'profile_not_allowed' });
      expect([view.sees('git_status'), view.seesPrompt('p'), view.readsResource('r')]).toEqual([
        false,
        false,
        false,
      ]);
    }
    // No `profiles`: every view.
    expect(accessOf(rules, who({}), 'readers').decide('git_status')).toEqual({ allowed: true });
  });

  it('I3, I6: viewOf joins the profile and the policy for one principal', () => {
    const profiles = { readers: compileProfile({ tools: ['files_*'] }) };
    const dev = who({ groups: ['dev'] });
    expect(viewOf(policy, profiles, dev, 'readers')?.decide('memory_read')).toEqual({
      allowed: false,
      reason: 'not_in_profile',
    });
    expect(viewOf(policy, profiles, dev, undefined)?.decide('memory_read')).toEqual({ allowed: true });
    expect(viewOf(undefined, profiles, dev, undefined)).toBeUndefined();
  });
});
