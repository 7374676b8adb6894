/**
 * Hosts for the tests of requests from a downstream (Q1–Q4): an SDK v1 client (a 2025 host) and
 * an SDK v2 client pinned to 2026-07-28 (a 2026 host), each answering elicitation, sampling and
 * roots from its own handler, so that an answer that reached the wrong host shows.
 */
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { SkillsClient } from '@modelcontextprotocol/client/ext/skills';
import { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import {
  CreateMessageRequestSchema,
  ElicitRequestSchema,
  ListRootsRequestSchema,
} from '@modelcontextprotocol/sdk/types.js';

const MODERN = { mode: { pin: '2026-07-28' } } as const;

/** What a host answers: by the request's method, from the params it got. */
export type Answers = (
  method: string,
  params: Record<string, unknown>,
) => Record<string, unknown> | Promise<Record<string, unknown>>;

/** A form answer that names the host and echoes the question, so crossed answers show. */
export function answersAs(host: string): Answers {
  return (method, params) => {
    if (method === 'elicitation/create') {
      const schema = params['requestedSchema'] as { properties?: Record<string, unknown> } | undefined;
      if (schema?.properties?.['ok'] !== undefined) return { action: 'accept', content: { ok: true } };
      if (params['mode'] === 'url') return { action: 'accept' };
      return { action: 'accept', content: { answer: `${host} answers ${String(params['message'])}` } };
    }
    if (method === 'sampling/createMessage')
      return {
        model: `${host}-model`,
        role: 'assistant',
        content: { type: 'text', text: `${host} sampled` },
      };
    return { roots: [{ uri: `file:///${host}`, name: host }] };
  };
}

export const ALL = { elicitation: {}, sampling: {}, roots: {} };

/** A 2025 host (SDK v1) with `capabilities`, answering with `answers`. */
export function legacyHost(
  capabilities: Record<string, object>,
  answers: Answers,
  cleanup: (() => unknown)[],
): LegacyClient {
  const client = new LegacyClient({ name: 'legacy-host', version: '1.0.0' }, { capabilities });
  if ('elicitation' in capabilities)
    client.setRequestHandler(ElicitRequestSchema, async (r) => (await answers(r.method, r.params)) as never);
  if ('sampling' in capabilities)
    client.setRequestHandler(
      CreateMessageRequestSchema,
      async (r) => (await answers(r.method, r.params)) as never,
    );
  if ('roots' in capabilities)
    client.setRequestHandler(
      ListRootsRequestSchema,
      async (r) => (await answers(r.method, r.params ?? {})) as never,
    );
  cleanup.push(() => client.close());
  return client;
}

/** A 2026-07-28 host (SDK v2, pinned) answering with `answers` (the SDK runs the rounds). */
export function modernHost(
  answers: Answers,
  cleanup: (() => unknown)[],
  capabilities: Record<string, object> = ALL,
): Client {
  const client = new Client(
    { name: 'modern-host', version: '1.0.0' },
    {
      capabilities: {
        ...capabilities,
        ...('elicitation' in capabilities ? { elicitation: { form: {}, url: {} } } : {}),
      },
      versionNegotiation: MODERN,
    },
  );
  const handle = async (request: { method: string; params?: unknown }): Promise<never> =>
    (await answers(request.method, (request.params ?? {}) as Record<string, unknown>)) as never;
  if ('elicitation' in capabilities) client.setRequestHandler('elicitation/create', handle);
  if ('sampling' in capabilities) client.setRequestHandler('sampling/createMessage', handle);
  if ('roots' in capabilities) client.setRequestHandler('roots/list', handle);
  cleanup.push(() => client.close());
  return client;
}

/** A tools/call answer's envelope (format `results`), failures read out of it (F1). */
export function envelope(result: unknown): {
  results?: unknown;
  error?: string;
  error_type?: string;
  instruction?: string;
  error_data?: Record<string, unknown>;
} {
  const { results, meta_data: meta } = (
    result as { structuredContent: { results?: unknown; meta_data?: Record<string, unknown> } }
  ).structuredContent;
  if (meta?.['is_error'] !== true) return { results };
  return {
    error: (results as { error?: string }).error,
    error_type: meta['error_type'] as string,
    instruction: meta['instruction'] as string,
    error_data: meta['error_data'] as Record<string, unknown>,
  };
}

/** What a raw 2026 request carries besides its params: a bearer token, declared capabilities, an id. */
export interface RawRequestOptions {
  readonly token?: string;
  readonly capabilities?: Record<string, object>;
  readonly id?: number;
}

/** One raw 2026-07-28 POST of `method` (`params` with the per-request envelope), with `token` when given. */
export function modernRequest(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: RawRequestOptions = {},
): Promise<Response> {
  return fetch(url, {
    method: 'POST',
    headers: {
      'content-type': 'application/json',
      accept: 'application/json, text/event-stream',
      'mcp-protocol-version': '2026-07-28',
      'mcp-method': method,
      // The request's subject, as a 2026 client names it (tools and prompts by name, resources by
      // URI, tasks by id: SEP-2663).
      ...(typeof (params['name'] ?? params['uri'] ?? params['taskId']) === 'string'
        ? { 'mcp-name': String(params['name'] ?? params['uri'] ?? params['taskId']) }
        : {}),
      ...(options.token !== undefined ? { authorization: `Bearer ${options.token}` } : {}),
    },
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: options.id ?? 1,
      method,
      params: {
        ...params,
        _meta: {
          'io.modelcontextprotocol/protocolVersion': '2026-07-28',
          'io.modelcontextprotocol/clientInfo': { name: 'raw', version: '1' },
          'io.modelcontextprotocol/clientCapabilities': options.capabilities ?? {},
        },
      },
    }),
  });
}

/**
 * One raw 2026-07-28 `tools/call` over HTTP, headers and `_meta` envelope as a 2026 host sends
 * them, for tests that look at the status, headers and body themselves.
 */
export function modernToolCall(
  url: string,
  name: string,
  options: RawRequestOptions = {},
): Promise<Response> {
  return modernRequest(url, 'tools/call', { name, arguments: {} }, options);
}

/** A JSON-RPC answer as a raw 2026 request gets it. */
export type ModernAnswer = {
  result?: Record<string, unknown>;
  error?: { code: number; message: string; data?: unknown };
};

/** {@link modernRequest}, its answer read from a JSON body or the last event of an SSE stream. */
export async function modernAnswer(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: RawRequestOptions = {},
): Promise<ModernAnswer> {
  const response = await modernRequest(url, method, params, options);
  const text = await response.text();
  const json = response.headers.get('content-type')?.includes('text/event-stream')
    ? text
        .split('\n')
        .filter((line) => line.startsWith('data: '))
        .map((line) => line.slice(6))
        .pop()!
    : text;
  return JSON.parse(json) as ModernAnswer;
}

/**
 * A skills host (SEP-2640): the SDK v2 client pinned to `pin` over HTTP (with a bearer `token`
 * when given) and its `SkillsClient`. The caller closes the client.
 */
export async function skillsHost(url: string, pin: '2025-11-25' | '2026-07-28', token?: string) {
  const client = new Client(
    { name: 'skills-host', version: '1.0.0' },
    { versionNegotiation: pin === '2025-11-25' ? { mode: 'legacy' } : { mode: { pin } } },
  );
  await client.connect(
    new StreamableHTTPClientTransport(new URL(url), {
      ...(token !== undefined ? { requestInit: { headers: { authorization: `Bearer ${token}` } } } : {}),
    }),
  );
  return { client, skills: new SkillsClient(client) };
}
