/** I3: a principal no access: rule names sees nothing, and the operator is told so once. */
import type { AuthInfo, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { compilePolicy, issuerPrincipal } from '../../src/core/policy.js';
import { createCallerIdentity } from '../../src/upstream/caller-identity.js';

const as = (subject: string): { http: { authInfo: AuthInfo } } => ({
  http: {
    authInfo: {
      token: 't',
      clientId: '',
      scopes: [],
      extra: { principal: issuerPrincipal('https://idp', subject, { groups: [], scopes: [] }) },
    },
  },
});

describe('caller identity', () => {
  it('I3: a principal that no rule names is logged once, with its key; one a rule names is not', () => {
    const lines: unknown[] = [];
    const callers = createCallerIdentity({
      policy: compilePolicy([{ principals: ['sub:alice'], allow: ['*'] }]),
      logger: { info: (fields: unknown) => void lines.push(fields) },
    });
    const server = {} as Server;
    callers.principal(server, as('mallory'));
    callers.principal(server, as('mallory'));
    callers.principal(server, as('alice'));
    expect(lines).toEqual([{ principal: 'https://idp#mallory' }]);
  });
});
