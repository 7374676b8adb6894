/**
 * E1: which leg of `/mcp` a POST without a session belongs to, by the SDK's own classification
 * (so the branch never disagrees with the handler it leads to); and, for the O1 count, the era
 * and method of each request a message or body holds.
 */
import type { Era } from '../core/options.js';
import type { IncomingMessage } from 'node:http';
import { classifyInboundRequest } from '@modelcontextprotocol/server';
import { isRecord } from '../core/json.js';

/**
 * E1: true when a POST without a session belongs to the 2025 leg. The SDK's classification
 * (body first, then the `MCP-Protocol-Version`, `Mcp-Method` and `Mcp-Name` headers); anything it
 * does not call legacy, a malformed modern request included, goes to the modern handler, which
 * owns the error answers for those (typescript-sdk docs/serving/legacy-clients.md).
 */
export function isLegacy(req: IncomingMessage, body: unknown): boolean {
  if (claimsModernEnvelope(body)) return false;
  const outcome = classifyInboundRequest({
    httpMethod: 'POST',
    ...header('protocolVersionHeader', req.headers['mcp-protocol-version']),
    ...header('mcpMethodHeader', req.headers['mcp-method']),
    ...header('mcpNameHeader', req.headers['mcp-name']),
    body,
  });
  return outcome.kind === 'legacy';
}

/** The reserved `_meta` key whose presence is a 2026-07-28 envelope claim. */
const PROTOCOL_VERSION_META_KEY = 'io.modelcontextprotocol/protocolVersion';

/**
 * True for a body the SDK's classification can only call modern or reject, never legacy: one
 * JSON-RPC request or notification (not a batch, not a posted response) other than `initialize`
 * whose `params._meta` holds the envelope claim key (valid or not). `classifyInboundRequest`
 * answers such a body from the claim: modern, or a rejection the modern handler owns. Checking
 * this first spares every modern request a second classification (the SDK's handler classifies
 * again). A test holds the SDK to it (test/upstream/http-era.test.ts).
 */
export function claimsModernEnvelope(body: unknown): boolean {
  if (!isRecord(body) || 'result' in body || 'error' in body) return false;
  if (typeof body['method'] !== 'string' || body['method'] === 'initialize') return false;
  const params = body['params'];
  return isRecord(params) && isRecord(params['_meta']) && PROTOCOL_VERSION_META_KEY in params['_meta'];
}

function header<K extends string>(key: K, value: string | string[] | undefined): Partial<Record<K, string>> {
  const first = Array.isArray(value) ? value[0] : value;
  return first === undefined ? {} : ({ [key]: first } as Record<K, string>);
}

/** The upstream era of one request as it came (O1): the 2026 envelope, or `server/discover`. */
export function eraOfRequest(message: Record<string, unknown>): Era {
  if (message['method'] === 'server/discover') return 'modern';
  const params = message['params'];
  return isRecord(params) && isRecord(params['_meta']) && PROTOCOL_VERSION_META_KEY in params['_meta']
    ? 'modern'
    : 'legacy';
}

/** The requests (with an id and a string method) of a JSON-RPC body: one message or a batch. */
export function requestsOf(body: unknown): Record<string, unknown>[] {
  const messages = Array.isArray(body) ? body : [body];
  return messages.filter(
    (message): message is Record<string, unknown> =>
      isRecord(message) && typeof message['method'] === 'string' && message['id'] !== undefined,
  );
}
