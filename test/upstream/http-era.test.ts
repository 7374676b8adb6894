/**
 * E1: the shortcut in front of the SDK's classification (src/upstream/http-era.ts). A body that
 * claims the 2026-07-28 envelope skips `classifyInboundRequest`; this table holds the SDK to what
 * the shortcut assumes: every such body, under every header combination, is modern or rejected,
 * never legacy. Bodies the shortcut does not take get the SDK's verdict unchanged.
 */
import type { IncomingMessage } from 'node:http';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { describe, expect, it } from 'vitest';
import { claimsModernEnvelope, isLegacy } from '../../src/upstream/http-era.js';

const ENVELOPE = {
  'io.modelcontextprotocol/protocolVersion': '2026-07-28',
  'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
  'io.modelcontextprotocol/clientCapabilities': {},
};

/** Bodies that carry the claim key: valid, malformed, or naming another version. */
const CLAIMING: { name: string; body: Record<string, unknown> }[] = [
  {
    name: 'a modern tools/call',
    body: { jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name: 'x', _meta: ENVELOPE } },
  },
  {
    name: 'server/discover',
    body: { jsonrpc: '2.0', id: 'd', method: 'server/discover', params: { _meta: ENVELOPE } },
  },
  {
    name: 'a notification',
    body: { jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: 1, _meta: ENVELOPE } },
  },
  {
    name: 'a claim naming a 2025 version',
    body: {
      jsonrpc: '2.0',
      id: 2,
      method: 'tools/list',
      params: { _meta: { ...ENVELOPE, 'io.modelcontextprotocol/protocolVersion': '2025-06-18' } },
    },
  },
  {
    name: 'a claim that is not a string',
    body: {
      jsonrpc: '2.0',
      id: 3,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': 7 } },
    },
  },
  {
    name: 'a claim without the rest of the envelope',
    body: {
      jsonrpc: '2.0',
      id: 4,
      method: 'tools/list',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': '2026-07-28' } },
    },
  },
  {
    name: 'a notification whose claim is not a string',
    body: {
      jsonrpc: '2.0',
      method: 'notifications/x',
      params: { _meta: { 'io.modelcontextprotocol/protocolVersion': null } },
    },
  },
  {
    name: 'a body that is not JSON-RPC',
    body: { jsonrpc: '1.0', id: 5, method: 'tools/list', params: { _meta: ENVELOPE } },
  },
  {
    name: 'a request with a null id',
    body: { jsonrpc: '2.0', id: null, method: 'ping', params: { _meta: ENVELOPE } },
  },
];

/** Header combinations a client may send, agreeing with the body or not. */
const HEADERS: Record<string, string>[] = [
  {},
  { 'mcp-protocol-version': '2026-07-28' },
  { 'mcp-protocol-version': '2025-06-18' },
  { 'mcp-protocol-version': ' 2026-07-28 ', 'mcp-method': 'tools/call', 'mcp-name': 'x' },
  { 'mcp-method': 'initialize' },
  { 'mcp-protocol-version': '2026-07-28', 'mcp-method': 'other', 'mcp-name': 'y' },
];

/** Bodies the shortcut leaves to the SDK. */
const NOT_CLAIMING: { name: string; body: unknown }[] = [
  {
    name: 'initialize with a modern claim',
    body: { jsonrpc: '2.0', id: 1, method: 'initialize', params: { _meta: ENVELOPE } },
  },
  {
    name: 'a 2025 initialize',
    body: {
      jsonrpc: '2.0',
      id: 1,
      method: 'initialize',
      params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
    },
  },
  { name: 'a 2025 tools/list', body: { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} } },
  { name: 'a batch', body: [{ jsonrpc: '2.0', id: 1, method: 'tools/list', params: { _meta: ENVELOPE } }] },
  {
    name: 'a posted response',
    body: { jsonrpc: '2.0', id: 1, result: {}, method: 'x', params: { _meta: ENVELOPE } },
  },
  {
    name: 'a posted error',
    body: {
      jsonrpc: '2.0',
      id: 1,
      error: { code: 1, message: 'm' },
      method: 'x',
      params: { _meta: ENVELOPE },
    },
  },
  { name: 'an array _meta', body: { jsonrpc: '2.0', id: 1, method: 'x', params: { _meta: [] } } },
  { name: 'null', body: null },
];

function request(headers: Record<string, string>): IncomingMessage {
  return { headers } as unknown as IncomingMessage;
}

function sdkVerdict(body: unknown, headers: Record<string, string>): string {
  return classifyInboundRequest({
    httpMethod: 'POST',
    ...(headers['mcp-protocol-version'] !== undefined
      ? { protocolVersionHeader: headers['mcp-protocol-version'] }
      : {}),
    ...(headers['mcp-method'] !== undefined ? { mcpMethodHeader: headers['mcp-method'] } : {}),
    ...(headers['mcp-name'] !== undefined ? { mcpNameHeader: headers['mcp-name'] } : {}),
    body,
  }).kind;
}

describe('the era shortcut', () => {
  it.each(CLAIMING)('E1: $name claims the envelope, and the SDK never calls it legacy', ({ body }) => {
    expect(claimsModernEnvelope(body)).toBe(true);
    for (const headers of HEADERS) {
      expect(sdkVerdict(body, headers)).not.toBe('legacy');
      expect(isLegacy(request(headers), body)).toBe(false);
    }
  });

  it.each(NOT_CLAIMING)('E1: $name is left to the SDK, whose verdict isLegacy returns', ({ body }) => {
    expect(claimsModernEnvelope(body)).toBe(false);
    for (const headers of HEADERS) {
      expect(isLegacy(request(headers), body)).toBe(sdkVerdict(body, headers) === 'legacy');
    }
  });

  it('E1: a 2025 request is still legacy and a 2025 initialize still opens the legacy leg', () => {
    expect(isLegacy(request({}), { jsonrpc: '2.0', id: 2, method: 'tools/list', params: {} })).toBe(true);
    expect(
      isLegacy(request({}), {
        jsonrpc: '2.0',
        id: 1,
        method: 'initialize',
        params: { protocolVersion: '2025-06-18', capabilities: {}, clientInfo: { name: 'c', version: '1' } },
      }),
    ).toBe(true);
  });
});
