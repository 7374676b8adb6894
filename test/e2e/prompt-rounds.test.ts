/**
 * Q3 on requests other than tools/call (SEP-2322: `input_required` is universal): a 2026 server
 * that answers `prompts/get` with `input_required` has its round relayed to the host under the
 * gateway's own signed state, and the retry with the host's answers completes the prompt; a 2025
 * host is asked through the SDK's shim. The conformance fixture's
 * `test_input_required_result_prompt` asks for a context first.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { StreamableHTTPClientTransport as LegacyHttpTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { legacyHost, modernRequest } from '../helpers/hosts.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

let gateway: HttpServe;
const stops: (() => unknown)[] = [];

beforeAll(async () => {
  gateway = await serveHttp(
    writeConfig(
      [
        'servers:',
        fixtureEntry('conformance', 'conformance', { prefix: '', client_features: ['elicitation'] }),
      ].join('\n'),
    ),
  );
}, 30_000);

afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
  if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
});

const PROMPT = 'test_input_required_result_prompt';

async function getPrompt(params: Record<string, unknown>) {
  const response = await modernRequest(gateway.url, 'prompts/get', params, {
    capabilities: { elicitation: { form: {} } },
  });
  return (await response.json()) as {
    result?: Record<string, unknown>;
    error?: { code: number; message: string };
  };
}

describe('input rounds of prompts/get', { timeout: 30_000 }, () => {
  it('Q3: a 2026 host gets the prompt’s round under the gateway’s state, and its retry completes the prompt', async () => {
    const first = await getPrompt({ name: PROMPT });
    expect(first.result).toMatchObject({
      resultType: 'input_required',
      inputRequests: { user_context: { method: 'elicitation/create' } },
    });
    const state = first.result?.['requestState'] as string;
    expect(typeof state).toBe('string');
    const answers = { user_context: { action: 'accept', content: { context: 'test context' } } };
    const done = await getPrompt({ name: PROMPT, inputResponses: answers, requestState: state });
    expect(done.result).toMatchObject({
      messages: [{ role: 'user', content: { type: 'text', text: 'Context: test context' } }],
    });
    // The state is this prompt's, with these arguments: with others, or for another
    // request, it is refused.
    const otherArgs = await getPrompt({
      name: PROMPT,
      arguments: { extra: 'x' },
      inputResponses: answers,
      requestState: state,
    });
    expect(otherArgs.error?.code).toBe(-32602);
    const crossed = await modernRequest(
      gateway.url,
      'resources/read',
      { uri: 'test://static-text', inputResponses: answers, requestState: state },
      { capabilities: { elicitation: { form: {} } } },
    );
    expect(((await crossed.json()) as { error?: { code: number } }).error?.code).toBe(-32602);
  });

  it('Q3: a 2025 host is asked through its session and gets the prompt', async () => {
    const host = legacyHost(
      { elicitation: {} },
      () => ({ action: 'accept', content: { context: 'from 2025' } }),
      stops,
    );
    await host.connect(new LegacyHttpTransport(new URL(gateway.url)));
    const prompt = await host.getPrompt({ name: PROMPT });
    expect(prompt.messages).toEqual([
      { role: 'user', content: { type: 'text', text: 'Context: from 2025' } },
    ]);
  });
});
