/** I2–I4: the access rules, as a table. */
import { describe, expect, it } from 'vitest';
import {
  accessOf,
  compilePolicy,
  compileSelection,
  withinProfile,
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

const who = (over: Partial<Principal>): Principal => ({ subject: 's', groups: [], scopes: [], ...over });
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
    ['I2: sub: matches the subject', who({ subject: 'local' }), 'files_write', { allowed: true }],
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
    expect(policy.decide(who({ subject: 'local' }), 'files_a')).toEqual({ allowed: true });
    expect(policy.decide(who({ clientId: 'ci-bot' }), 'a_read')).toEqual({ allowed: true });
    expect(policy.decide(who({ scopes: ['read'] }), 'a_read')).toEqual({ allowed: true });
  });

  it('I3: without access rules every principal may call everything', () => {
    expect(compilePolicy(undefined).decide(who({}), 'anything')).toEqual({ allowed: true });
  });

  it('I6: a profile selects exposed names with globs, ! excluding, before the caller’s policy', () => {
    const readers = compileSelection(['memory_*', 'files_read', '!memory_delete_*']);
    expect(['memory_read', 'files_read', 'memory_delete_x', 'git_push'].map(readers)).toEqual([
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
    expect(withinProfile(compileSelection(['git_*']), dev)?.decide('git_status')).toEqual({
      allowed: false,
      reason: 'not_allowed',
    });
    expect(withinProfile(readers, undefined)?.sees('memory_read')).toBe(true);
    expect(withinProfile(undefined, undefined)).toBeUndefined();
  });
});
