/**
 * Issue 47, X5: tasks (SEP-2663) through `serve --http`, with the conformance fixture's task tools
 * (fixtures/servers/conformance-tasks.ts) behind the gateway. A 2026-07-28 host that declares the
 * extension is sent plain JSON-RPC (the SDK v2 client decodes no `resultType: "task"`): its calls
 * become tasks under the gateway's ids, which it polls, answers and cancels, and no one else
 * finds. A 2025 host (the SDK v2 client pinned to it) calls the same tools and gets their results:
 * the gateway runs the tasks for it, its elicitation answered by the host's own handler.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { modernAnswer, type ModernAnswer } from '../helpers/hosts.js';
import { describeWith } from '../helpers/peers.js';
import { startRedis, type RedisPeer } from '../helpers/redis.js';
import { serveHttp, writeConfig } from './cli-process.js';

const children: ChildProcess[] = [];
const clients: Client[] = [];
const redises: RedisPeer[] = [];
afterEach(async () => {
  for (const client of clients.splice(0)) await client.close();
  for (const child of children.splice(0)) child.kill('SIGKILL');
  for (const redis of redises.splice(0)) await redis.stop();
});

const TASKS = 'io.modelcontextprotocol/tasks';
const ALICE = 'alice-token-0123456789abcdef';
const BOB = 'bob-token-0123456789abcdef0';

function tasksEntry(): string {
  const { command, args } = fixtureServer('conformance-tasks');
  return `  jobs:\n    command: ${JSON.stringify(command)}\n    args: ${JSON.stringify(args)}`;
}

async function serve(lines: string[] = []) {
  const served = await serveHttp(writeConfig([...lines, 'servers:', tasksEntry()].join('\n')));
  children.push(served.child);
  return served;
}

/** One 2026-07-28 request, as a host that takes tasks sends it (or not: `takesTasks` false). */
async function rpc(
  url: string,
  method: string,
  params: Record<string, unknown>,
  options: { takesTasks?: boolean; token?: string } = {},
): Promise<ModernAnswer> {
  return modernAnswer(url, method, params, {
    ...(options.token !== undefined ? { token: options.token } : {}),
    ...(options.takesTasks === false ? {} : { capabilities: { extensions: { [TASKS]: {} } } }),
  });
}

/** Polls tasks/get until the task is in one of `statuses` (bounded: 100 polls). */
async function until(url: string, taskId: string, statuses: string[], token?: string) {
  for (let polls = 0; polls < 100; polls++) {
    const got = await rpc(url, 'tasks/get', { taskId }, token !== undefined ? { token } : {});
    if (got.error !== undefined || statuses.includes(String(got.result?.['status']))) return got;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  throw new Error(`task ${taskId} never reached ${statuses.join('/')}`);
}

describe('tasks through the gateway (2026-07-28 hosts)', () => {
  it('X5: the extension is declared to a 2026 host; a call becomes a task under the gateway’s id, and its result is the call’s envelope', async () => {
    // Debug: a success's end line (L1) is logged at debug.
    const served = await serve(['log_level: debug']);
    const discovered = await rpc(served.url, 'server/discover', {});
    expect((discovered.result?.['capabilities'] as { extensions?: object }).extensions).toHaveProperty([
      TASKS,
    ]);
    const created = (
      await rpc(served.url, 'tools/call', {
        name: 'jobs_slow_compute',
        arguments: { seconds: 0.3, label: 'x' },
      })
    ).result!;
    expect(created).toMatchObject({
      resultType: 'task',
      status: 'working',
      ttlMs: 300000,
      pollIntervalMs: 100,
    });
    expect(created).not.toHaveProperty('result');
    const taskId = String(created['taskId']);
    // Strongly consistent: found at once.
    expect((await rpc(served.url, 'tasks/get', { taskId })).result).toMatchObject({
      taskId,
      resultType: 'complete',
    });
    const done = (await until(served.url, taskId, ['completed'])).result!;
    expect(done['result']).toMatchObject({
      isError: false,
      structuredContent: { results: 'computed x', meta_data: { server: 'jobs', tool: 'slow_compute' } },
    });
    expect(JSON.stringify(done)).not.toContain('fixture-conformance-tasks');
    // Issue 57: the completed task's answer went through the outcome step once, however often
    // it is polled: counted as its call (O1), logged as its end (L1).
    expect((await rpc(served.url, 'tasks/get', { taskId })).result?.['result']).toEqual(done['result']);
    // O1: the book and the methods, on /metrics.
    const metrics = await (await fetch(served.url.replace(/\/mcp$/, '/metrics'))).text();
    expect(metrics).toMatch(
      /mcp_normalizer_tool_calls_total\{[^}]*tool="slow_compute"[^}]*outcome="ok"[^}]*\} 1\n/,
    );
    const ends = served
      .stderr()
      .split('\n')
      .filter((line) => line.includes('"exposedName":"jobs_slow_compute"') && line.includes('"elapsedMs"'));
    expect(ends).toHaveLength(1);
    expect(metrics).toContain('mcp_normalizer_tasks{server="jobs"} 1');
    expect(metrics).toMatch(
      /mcp_normalizer_upstream_requests_total\{era="modern",method="tasks\/get"\} [1-9]/,
    );
  });

  it('X5: a tool error is a completed task with the failure envelope; a protocol error is a failed task with its error', async () => {
    const served = await serve();
    const failing = String(
      (await rpc(served.url, 'tools/call', { name: 'jobs_failing_job', arguments: {} })).result!['taskId'],
    );
    const broken = String(
      (await rpc(served.url, 'tools/call', { name: 'jobs_protocol_error_job', arguments: {} })).result![
        'taskId'
      ],
    );
    const failed = (await until(served.url, failing, ['completed'])).result!;
    expect(failed['result']).toMatchObject({
      isError: true,
      structuredContent: { meta_data: { error_type: 'tool_error' } },
    });
    const crashed = (await until(served.url, broken, ['failed'])).result!;
    expect(crashed['error']).toMatchObject({ code: -32603, message: 'the job crashed' });
    expect(crashed).not.toHaveProperty('result');
  });

  it('X5: input_required relays the server’s requests; tasks/update answers them; tasks/cancel is acknowledged and the task ends cancelled', async () => {
    const served = await serve();
    const asking = String(
      (await rpc(served.url, 'tools/call', { name: 'jobs_confirm_delete', arguments: { filename: 'a.txt' } }))
        .result!['taskId'],
    );
    const waiting = (await until(served.url, asking, ['input_required'])).result!;
    const requests = waiting['inputRequests'] as Record<string, { method: string }>;
    expect(Object.values(requests).map((request) => request.method)).toEqual(['elicitation/create']);
    const responses = Object.fromEntries(
      Object.keys(requests).map((key) => [key, { action: 'accept', content: { confirm: 'yes' } }]),
    );
    expect(
      (await rpc(served.url, 'tasks/update', { taskId: asking, inputResponses: responses })).result,
    ).toEqual(expect.objectContaining({ resultType: 'complete' }));
    expect(JSON.stringify((await until(served.url, asking, ['completed'])).result)).toContain(
      'deleted a.txt',
    );
    const long = String(
      (await rpc(served.url, 'tools/call', { name: 'jobs_slow_compute', arguments: { seconds: 60 } }))
        .result!['taskId'],
    );
    const ack = (await rpc(served.url, 'tasks/cancel', { taskId: long })).result!;
    expect(Object.keys(ack).filter((key) => key !== '_meta')).toEqual(['resultType']);
    expect((await until(served.url, long, ['cancelled'])).result!['status']).toBe('cancelled');
  });

  it('X5: unknown tasks are -32602; a host that did not declare the extension gets -32021 on tasks/* and on a task-only tool', async () => {
    const served = await serve();
    expect((await rpc(served.url, 'tasks/get', { taskId: 'no-such-task' })).error?.code).toBe(-32602);
    for (const method of ['tasks/get', 'tasks/cancel'])
      expect((await rpc(served.url, method, { taskId: 'x' }, { takesTasks: false })).error?.code).toBe(
        -32021,
      );
    const refused = await rpc(
      served.url,
      'tools/call',
      { name: 'jobs_failing_job', arguments: {} },
      { takesTasks: false },
    );
    expect(refused.error).toMatchObject({
      code: -32021,
      data: { requiredCapabilities: { extensions: { [TASKS]: {} } } },
    });
    // A tool that can run either way runs at once for it.
    const plain = (
      await rpc(
        served.url,
        'tools/call',
        { name: 'jobs_slow_compute', arguments: { seconds: 0 } },
        { takesTasks: false },
      )
    ).result!;
    expect(plain).toMatchObject({ resultType: 'complete', isError: false });
    for (const method of ['tasks/result', 'tasks/list'])
      expect((await rpc(served.url, method, { taskId: 'x' })).error?.code).toBe(-32601);
  });

  it('X5: a task is its creator’s: another principal does not find it', async () => {
    const served = await serve([
      'http:',
      '  auth:',
      '    tokens:',
      `      alice: { token: ${ALICE} }`,
      `      bob: { token: ${BOB} }`,
    ]);
    const created = await rpc(
      served.url,
      'tools/call',
      { name: 'jobs_slow_compute', arguments: { seconds: 60 } },
      { token: ALICE },
    );
    const taskId = String(created.result!['taskId']);
    expect((await rpc(served.url, 'tasks/get', { taskId }, { token: ALICE })).result!['status']).toBe(
      'working',
    );
    for (const method of ['tasks/get', 'tasks/cancel'])
      expect((await rpc(served.url, method, { taskId }, { token: BOB })).error?.code).toBe(-32602);
    expect((await rpc(served.url, 'tasks/get', { taskId }, { token: ALICE })).result!['status']).toBe(
      'working',
    );
    await rpc(served.url, 'tasks/cancel', { taskId }, { token: ALICE });
  });
});

describe('tasks through the gateway (2025 hosts)', () => {
  it('X6: a 2025 host is not told of the extension, and calls a task-only tool as any tool: the gateway runs the task, asking the host’s own handler', async () => {
    const served = await serve();
    const client = new Client(
      { name: 'old-host', version: '1.0.0' },
      { versionNegotiation: { mode: 'legacy' }, capabilities: { elicitation: {} } },
    );
    const asked: string[] = [];
    client.setRequestHandler('elicitation/create', (request) => {
      asked.push(String(request.params.message));
      return { action: 'accept', content: { confirm: 'yes' } };
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(served.url)));
    clients.push(client);
    expect(client.getServerCapabilities()?.extensions?.[TASKS]).toBeUndefined();
    const failing = await client.callTool({ name: 'jobs_failing_job', arguments: {} });
    expect(failing).toMatchObject({
      isError: true,
      structuredContent: { meta_data: { error_type: 'tool_error' } },
    });
    expect(JSON.stringify(failing)).toContain('the job failed');
    const deleted = await client.callTool({ name: 'jobs_confirm_delete', arguments: { filename: 'b.txt' } });
    expect(asked).toEqual(['Delete b.txt?']);
    expect(JSON.stringify(deleted)).toContain('deleted b.txt');
    const crashed = await client.callTool({ name: 'jobs_protocol_error_job', arguments: {} });
    expect(crashed).toMatchObject({ isError: true });
    expect(JSON.stringify(crashed)).toContain('the job crashed');
  });
});

/** The tasks fixture over Streamable HTTP (one server both replicas reach); its URL. */
async function remoteTasks(): Promise<string> {
  const { command, args } = fixtureServer('conformance-tasks', ['--http=0']);
  const child = spawn(command, args, { stdio: ['ignore', 'ignore', 'pipe'] });
  children.push(child);
  let heard = '';
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`the tasks fixture did not listen: ${heard}`)), 10_000);
    child.stderr.on('data', (chunk: Buffer) => {
      heard += chunk.toString();
      const match = /listening (http:\S+)/.exec(heard);
      if (match?.[1] !== undefined) {
        clearTimeout(timer);
        resolve(match[1]);
      }
    });
  });
}

describeWith(['redis-server'])('tasks across replicas', () => {
  it('X5: with store.url, a task created through one replica is found through another (a remote server both reach), for its creator only', async () => {
    const redis = await startRedis();
    redises.push(redis);
    const url = await remoteTasks();
    const config = writeConfig(
      [
        `store: { url: "${redis.url}" }`,
        'http:',
        '  auth:',
        '    tokens:',
        `      alice: { token: ${ALICE} }`,
        `      bob: { token: ${BOB} }`,
        'servers:',
        '  jobs:',
        `    url: ${url}`,
      ].join('\n'),
    );
    const [a, b] = await Promise.all([serveHttp(config), serveHttp(config)]);
    children.push(a.child, b.child);
    const created = await rpc(
      a.url,
      'tools/call',
      { name: 'jobs_slow_compute', arguments: { seconds: 0.2, label: 'r' } },
      { token: ALICE },
    );
    const taskId = String(created.result!['taskId']);
    const done = (await until(b.url, taskId, ['completed'], ALICE)).result!;
    expect(done['result']).toMatchObject({ structuredContent: { results: 'computed r' } });
    expect((await rpc(b.url, 'tasks/get', { taskId }, { token: BOB })).error?.code).toBe(-32602);
  });
});
