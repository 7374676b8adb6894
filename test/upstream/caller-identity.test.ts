/** I2, P10, Q3, F7: who is behind a request, worked out once: its principal and its keys. */
import type { AuthInfo, Server } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { issuerPrincipal } from '../../src/core/policy.js';
import { createCallerIdentity } from '../../src/upstream/caller-identity.js';

const as = (subject: string): { http: { authInfo: AuthInfo }; mcpReq: object } => ({
  http: {
    authInfo: {
      token: 't',
      clientId: '',
      scopes: [],
      extra: { principal: issuerPrincipal('https://idp', subject, { groups: [], scopes: [] }) },
    },
  },
  mcpReq: {},
});
const server = (): Server => ({ getClientCapabilities: () => ({ roots: {} }) }) as unknown as Server;

describe('caller identity', () => {
  it('I2, P10, Q3: a stdio connection is the local user on the shared copy, its rounds its own', () => {
    const callers = createCallerIdentity({});
    const stdio = server();
    callers.markSole(stdio);
    callers.markSession(stdio);
    const who = callers.resolve(stdio, 'legacy', { mcpReq: {} });
    expect(who.principal.key).toBe('local');
    expect(who.subject).toBeUndefined();
    expect(who.instance).toBeUndefined();
    expect(who.roundKey).toBe(callers.idOf(stdio));
    expect(who.filesOwner).toBe(stdio);
    expect(who.capabilities).toEqual({ roots: {} });
  });

  it('P10, Q3: a 2025 session has its own copy and rounds, whoever its token names', () => {
    const callers = createCallerIdentity({});
    const session = server();
    callers.markSession(session);
    const who = callers.resolve(session, 'legacy', as('alice'));
    expect(who.subject).toBe('https://idp#alice');
    expect(who.instance).toBe(callers.idOf(session));
    expect(who.roundKey).toBe(who.instance);
  });

  it('P10, Q3, F7: a sessionless 2026 request is its principal; anonymous ones share', () => {
    const callers = createCallerIdentity({});
    const alice = callers.resolve(server(), 'modern', as('alice'));
    expect(alice.instance).toBe('principal:https://idp#alice');
    expect(alice.roundKey).toBe('principal:https://idp#alice');
    expect(alice.filesOwner).toBe(callers.resolve(server(), 'modern', as('alice')).filesOwner);
    expect(alice.filesOwner).not.toBe(callers.resolve(server(), 'modern', as('bob')).filesOwner);
    const anonymous = callers.resolve(server(), 'modern', { mcpReq: {} });
    expect(anonymous.principal.key).toBe('anonymous');
    expect([anonymous.instance, anonymous.roundKey, anonymous.filesOwner]).toEqual([
      undefined,
      '',
      undefined,
    ]);
  });
});
