/**
 * Q2's refinement (SEP-2575): a 2026 server that needs a capability the 2026 host did not
 * declare answers -32021; through the gateway the host gets that error as the answer to its
 * request (HTTP 400, the data naming the capability), not a tool failure, and the gateway goes
 * on serving. The conformance fixture's `test_missing_capability` needs sampling.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { modernToolCall } from '../helpers/hosts.js';
import { fixtureEntry, serveHttp, writeConfig, type HttpServe } from './cli-process.js';

let gateway: HttpServe;

beforeAll(async () => {
  gateway = await serveHttp(
    writeConfig(
      [
        'servers:',
        fixtureEntry('conformance', 'conformance', {
          prefix: '',
          client_features: ['elicitation', 'sampling', 'roots'],
        }),
      ].join('\n'),
    ),
  );
}, 30_000);

afterAll(() => {
  if (gateway.child.exitCode === null) gateway.child.kill('SIGKILL');
});

/** One raw 2026 tools/call from a host that declares `capabilities`. */
async function call(name: string, capabilities: Record<string, object>) {
  const response = await modernToolCall(gateway.url, name, { capabilities, id: 7 });
  return { status: response.status, body: (await response.json()) as Record<string, unknown> };
}

describe('a capability the host did not declare', { timeout: 30_000 }, () => {
  it('Q2: a 2026 host without sampling gets -32021 and HTTP 400 naming it; the gateway goes on', async () => {
    const refused = await call('test_missing_capability', {});
    expect(refused.status).toBe(400);
    expect(refused.body).toMatchObject({
      id: 7,
      error: { code: -32021, data: { requiredCapabilities: { sampling: {} } } },
    });
    // With sampling declared the same call goes on: the round reaches the host (Q3).
    const asked = await call('test_missing_capability', { sampling: {} });
    expect(asked.status).toBe(200);
    expect(asked.body).toMatchObject({ result: { resultType: 'input_required' } });
    const served = await call('test_simple_text', {});
    expect(served.body).toMatchObject({ result: { content: [{ type: 'text' }] } });
    expect(gateway.child.exitCode).toBeNull();
  });
});
