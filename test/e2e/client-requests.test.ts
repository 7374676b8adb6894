/**
 * Requests from a downstream to its client (Q1–Q4), with real processes: `mcp-normalizer serve`
 * as a child, a 2025 downstream that pushes its requests (fixtures/servers/asking.ts, SDK v1), a
 * 2026-07-28 downstream that answers `input_required` (fixtures/servers/modern.ts, SDK v2), and
 * hosts of both eras (SDK v1 client; SDK v2 client pinned to 2026-07-28) that answer from their
 * own handlers.
 */
import type { Client } from '@modelcontextprotocol/client';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { StdioClientTransport } from '@modelcontextprotocol/client/stdio';
import type { Client as LegacyClient } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport as LegacyStdioTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { afterEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { ALL, answersAs, envelope, legacyHost, modernHost, type Answers } from '../helpers/hosts.js';
import { fixtureEntry, serveHttp, serveStdio, writeConfig } from './cli-process.js';

const STATE_KEY = 'a-test-key-of-at-least-thirty-two-characters';
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** The gateway's config: the asking fixture (2025) and the modern fixture (2026). */
function config(asking: Record<string, unknown> = {}): string {
  return writeConfig(
    [
      'log_level: warn',
      'input_required:',
      `  state_key: ${STATE_KEY}`,
      'servers:',
      fixtureEntry('asking', 'asking', { protocol: 'legacy', ...asking }),
      fixtureEntry('modern', 'modern'),
    ].join('\n'),
  );
}

const LenientResult = z.looseObject({});

describe('requests from a downstream to its client', { timeout: 60_000 }, () => {
  it('Q3: a 2025 server asks a 2025 host and a 2026 host: form, URL, sampling and roots, each answered by its own host', async () => {
    const file = config({ client_features: ['elicitation', 'sampling', 'roots'] });
    const legacy = legacyHost(
      { elicitation: { form: {}, url: {} }, sampling: {}, roots: {} },
      answersAs('legacy'),
      cleanup,
    );
    await legacy.connect(new LegacyStdioTransport({ ...serveStdio(file), stderr: 'pipe' }));
    const modern = modernHost(answersAs('modern'), cleanup);
    await modern.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'pipe' }));
    for (const [host, client] of [
      ['legacy', legacy],
      ['modern', modern],
    ] as const) {
      const ask = await client.callTool({ name: 'asking_ask', arguments: { question: 'Your name?' } });
      expect(envelope(ask).results).toEqual({
        question: 'Your name?',
        action: 'accept',
        answer: `${host} answers Your name?`,
      });
      const url = await client.callTool({
        name: 'asking_ask_url',
        arguments: { url: 'https://example.test/x' },
      });
      expect(envelope(url).results).toEqual({ url: 'https://example.test/x', action: 'accept' });
      const sample = await client.callTool({ name: 'asking_sample', arguments: { prompt: 'hi' } });
      expect(envelope(sample).results).toMatchObject({
        model: `${host}-model`,
        content: { text: `${host} sampled` },
      });
      const roots = await client.callTool({ name: 'asking_roots', arguments: {} });
      expect(envelope(roots).results).toEqual([{ uri: `file:///${host}`, name: host }]);
    }
  });

  it('Q3: a 2026 server takes two input rounds with its own requestState, for a 2026 host and for a 2025 host', async () => {
    const file = config();
    const asked: string[] = [];
    const record =
      (answers: Answers): Answers =>
      (method, params) => {
        asked.push(`${method} ${String(params['message'] ?? '')}`);
        return answers(method, params);
      };
    const modern = modernHost(record(answersAs('modern')), cleanup);
    await modern.connect(new StdioClientTransport({ ...serveStdio(file), stderr: 'pipe' }));
    const legacy = legacyHost(ALL, record(answersAs('legacy')), cleanup);
    await legacy.connect(new LegacyStdioTransport({ ...serveStdio(file), stderr: 'pipe' }));
    for (const [host, client] of [
      ['modern', modern],
      ['legacy', legacy],
    ] as const) {
      asked.length = 0;
      const result = await client.callTool({ name: 'modern_ask', arguments: { question: 'Name?' } });
      expect(envelope(result).results).toEqual({
        question: 'Name?',
        answer: `${host} answers Name?`,
        confirmed: true,
      });
      expect(asked).toEqual([
        'elicitation/create Name?',
        `elicitation/create Is "${host} answers Name?" right?`,
      ]);
      const sample = await client.callTool({ name: 'modern_sample', arguments: { prompt: 'p' } });
      expect(envelope(sample).results).toBe(`completion: ${host} sampled`);
    }
  });

  it('Q2: a host without the capability, of either era: the 2025 server is refused at once and the host gets tool_error with an instruction', async () => {
    const legacy = legacyHost({}, answersAs('none'), cleanup);
    await legacy.connect(new LegacyStdioTransport({ ...serveStdio(config()), stderr: 'pipe' }));
    const modern = modernHost(answersAs('none'), cleanup, {});
    await modern.connect(new StdioClientTransport({ ...serveStdio(config()), stderr: 'pipe' }));
    for (const host of [legacy, modern]) {
      const result = envelope(await host.callTool({ name: 'asking_ask', arguments: { question: 'Name?' } }));
      expect(result.error_type).toBe('tool_error');
      expect(result.error).toContain('does not support elicitation/create');
      expect(result.instruction).toEqual(expect.any(String));
    }
  });

  it('Q2: a 2026 server sees only the capabilities of the host behind the call (none here), and the host gets its -32021 naming the capability', async () => {
    const host = modernHost(answersAs('none'), cleanup, {});
    await host.connect(new StdioClientTransport({ ...serveStdio(config()), stderr: 'pipe' }));
    await expect(
      host.callTool({ name: 'modern_ask', arguments: { question: 'Name?' } }),
    ).rejects.toMatchObject({
      code: -32021,
      message: expect.stringMatching(/elicitation/i),
    });
    // The connection goes on: the next call is served.
    const listed = await host.listTools();
    expect(listed.tools.map((tool) => tool.name)).toContain('modern_ask');
  });

  it('Q4: roots are offered only where client_features lists them: by default the server is told the client has none', async () => {
    const asked: string[] = [];
    const host = legacyHost(
      ALL,
      (method, params) => {
        asked.push(method);
        return answersAs('legacy')(method, params);
      },
      cleanup,
    );
    await host.connect(new LegacyStdioTransport({ ...serveStdio(config()), stderr: 'pipe' }));
    const result = envelope(await host.callTool({ name: 'asking_roots', arguments: {} }));
    // Told the client has no roots, this server asked anyway: the answer is a client's without
    // the feature (-32601), and the host was never asked.
    expect(result.error_type).toBe('tool_error');
    expect(result.error).toContain('-32601');
    expect(asked).toEqual([]);
  });
});

describe('routing between upstream clients', { timeout: 60_000 }, () => {
  /** A 2025 HTTP session answering as `name`. */
  async function session(url: string, name: string): Promise<LegacyClient> {
    const client = legacyHost({ elicitation: {} }, answersAs(name), cleanup);
    await client.connect(new LegacyHttpTransport(new URL(url)));
    return client;
  }

  /** Alice's 2025 session, whose answers wait for `release`; `asked` counts her requests. */
  async function heldSession(
    url: string,
  ): Promise<{ client: LegacyClient; asked: () => number; release: () => void }> {
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let asked = 0;
    const client = legacyHost(
      { elicitation: {} },
      async (method, params) => {
        asked++;
        await held;
        return answersAs('alice')(method, params);
      },
      cleanup,
    );
    await client.connect(new LegacyHttpTransport(new URL(url)));
    return { client, asked: () => asked, release };
  }

  async function serve(asking: Record<string, unknown>): Promise<string> {
    const serve = await serveHttp(config(asking));
    cleanup.push(() => {
      if (serve.child.exitCode === null) serve.child.kill('SIGKILL');
    });
    return serve.url;
  }

  it('Q1: two sessions asking at the same moment on an isolate_callers server each get their own question and answer', async () => {
    const url = await serve({ isolate_callers: true });
    const { client: a, asked, release } = await heldSession(url);
    const b = await session(url, 'bob');
    const first = a.callTool({ name: 'asking_ask', arguments: { question: 'for alice' } });
    first.catch(() => {}); // awaited below
    await expect.poll(asked).toBe(1);
    // Alice holds her answer while bob calls: his call waits for the lane instead of meeting
    // her request, whichever reaches the gateway first once she answers.
    const second = b.callTool({ name: 'asking_ask', arguments: { question: 'for bob' } });
    release();
    const [ra, rb] = await Promise.all([first, second]);
    expect(envelope(ra).results).toEqual({
      question: 'for alice',
      action: 'accept',
      answer: 'alice answers for alice',
    });
    expect(envelope(rb).results).toEqual({
      question: 'for bob',
      action: 'accept',
      answer: 'bob answers for bob',
    });
  });

  it('Q1: without isolate_callers, a request made while two clients have calls in flight is refused, never sent to either', async () => {
    const url = await serve({});
    const { client: a, asked, release } = await heldSession(url);
    const b = await session(url, 'bob');
    const first = a.callTool({ name: 'asking_ask', arguments: { question: 'for alice' } });
    first.catch(() => {}); // awaited below; a failed assertion before then must not leave it unhandled
    await expect.poll(asked).toBe(1);
    // Alice's call is in flight, waiting for her answer: bob's request has two possible owners.
    const rb = envelope(await b.callTool({ name: 'asking_ask', arguments: { question: 'for bob' } }));
    expect(rb.error_type).toBe('tool_error');
    expect(rb.error).toContain('isolate_callers');
    release();
    expect(envelope(await first).results).toEqual({
      question: 'for alice',
      action: 'accept',
      answer: 'alice answers for alice',
    });
    expect(asked()).toBe(1);
  });

  it('Q3: a tampered requestState is refused with -32602, one with other arguments is invalid_arguments, and a parked call asked for in another process is a clear failure', async () => {
    const one = await serve({});
    const two = await serve({});
    const connect = async (url: string): Promise<Client> => {
      const client = modernHost(answersAs('modern'), cleanup);
      await client.connect(new StreamableHTTPClientTransport(new URL(url)));
      return client;
    };
    const first = await connect(one);
    const round = (await first.request(
      { method: 'tools/call', params: { name: 'asking_ask', arguments: { question: 'Name?' } } },
      LenientResult,
      { allowInputRequired: true },
    )) as { resultType?: string; inputRequests?: Record<string, unknown>; requestState?: string };
    expect(round.resultType).toBe('input_required');
    expect(Object.values(round.inputRequests ?? {})).toEqual([
      expect.objectContaining({ method: 'elicitation/create' }),
    ]);
    const retry = (client: Client, requestState: string, question = 'Name?'): Promise<unknown> =>
      client.request(
        {
          method: 'tools/call',
          params: {
            name: 'asking_ask',
            arguments: { question },
            inputResponses: Object.fromEntries(
              Object.keys(round.inputRequests ?? {}).map((key) => [
                key,
                { action: 'accept', content: { answer: 'x' } },
              ]),
            ),
            requestState,
          },
        } as never,
        LenientResult,
        { allowInputRequired: true },
      );
    await expect(retry(first, `${round.requestState!.slice(0, -2)}xx`)).rejects.toMatchObject({
      code: -32602,
    });
    // The same key, another process: the state is genuine, the parked call is not there.
    const elsewhere = envelope(await retry(await connect(two), round.requestState!));
    expect(elsewhere.error_type).toBe('downstream_unavailable');
    expect(elsewhere.error).toContain('another replica');
    // Bound to the call's arguments (item 19): a retry that changed them is refused.
    const changed = envelope(await retry(first, round.requestState!, 'Password?'));
    expect(changed.error_type).toBe('invalid_arguments');
    expect(changed.error).toContain('was issued for other arguments');
    // The process that holds it finishes the call with the answer.
    expect(envelope(await retry(first, round.requestState!)).results).toEqual({
      question: 'Name?',
      action: 'accept',
      answer: 'x',
    });
  });
});
