/**
 * M1–M5, code mode end to end: `serve` over stdio in front of two fixture servers with `expose:
 * code`; an SDK client lists the search pair and `run_code`, finds tools with their
 * declarations, and runs one snippet that calls three tools on two servers and returns what it
 * joins. Inside a snippet a call is the caller's own: the access rules, the rate limits and the
 * explicit gate apply as to a call from the model, and each is counted and logged as one.
 */
import { afterEach, describe, expect, it } from 'vitest';
import { envelope } from '../helpers/hosts.js';
import {
  connectStdio,
  fixtureEntry,
  modernHttpClient,
  serveHttpLines,
  writeConfig,
  type StdioSession,
} from './cli-process.js';

const sessions: StdioSession[] = [];
const stops: (() => unknown)[] = [];
afterEach(async () => {
  for (const session of sessions.splice(0)) await session.client.close();
  for (const stop of stops.splice(0).reverse()) await stop();
});

async function gateway(extra: string[] = []): Promise<StdioSession> {
  const config = writeConfig(
    ['expose: code', ...extra, 'servers:', fixtureEntry('c', 'counter'), fixtureEntry('f', 'annotated')].join(
      '\n',
    ),
  );
  const session = await connectStdio(config, {}, ['--log-level', 'debug']);
  sessions.push(session);
  return session;
}

async function run(session: StdioSession, code: string) {
  return envelope(await session.client.callTool({ name: 'run_code', arguments: { code } }));
}

describe('code mode', () => {
  it('M1, M2, M4, M5: the pair and run_code are listed; one snippet calls three tools on two servers and joins them', async () => {
    const session = await gateway();
    const { tools } = await session.client.listTools();
    expect(tools.map((tool) => tool.name)).toEqual(['search_tools', 'call_tool', 'run_code']);
    const found = envelope(
      await session.client.callTool({ name: 'search_tools', arguments: { query: 'add two numbers' } }),
    );
    const add = (found.results as { tools: { name: string; declaration?: string }[] }).tools.find(
      (tool) => tool.name === 'c_add',
    );
    expect(add).toEqual({
      name: 'c_add',
      description: 'Adds two numbers.',
      declaration: 'tools.c_add(args: { a: number; b: number }): Promise<unknown>',
    });

    const joined = await run(
      session,
      `const [sum, file] = await Promise.all([tools.c_add({ a: 2, b: 3 }), tools.f_read_file({ path: '/etc/motd' })]);
       const counted = await tools.c_count({});
       console.log('two servers, three calls');
       return { sum: sum.sum, file, calls: counted.calls };`,
    );
    expect(joined.error).toBeUndefined();
    expect(joined.results).toEqual({
      result: { sum: 5, file: 'contents of /etc/motd', calls: 1 },
      logs: ['two servers, three calls'],
      calls: 3,
    });
    // Each call of the snippet is logged as a call, and the run as one more.
    await expect
      .poll(
        () =>
          session
            .stderr()
            .split('\n')
            .filter((line) => line.includes('"call_end"')).length,
      )
      .toBeGreaterThanOrEqual(5);
  }, 60_000);

  it('M2: inside a snippet a refused tool is refused as outside, a rate limit counts its calls, a destructive tool needs its explicit argument', async () => {
    const session = await gateway([
      'access:',
      "  - principals: ['local']",
      "    allow: ['c_*', 'f_*', '!f_touch']",
      'rate_limits:',
      "  - principals: ['local']",
      "    tools: ['c_hit']",
      '    calls: 2',
      '    per_s: 3600',
    ]);
    const refusals = await run(
      session,
      `const out = {};
       for (const [name, call] of [
         ['touch', () => tools.f_touch({ path: '/x' })],
         ['delete', () => tools.c_delete_all({})],
       ]) {
         try { await call(); out[name] = 'ran'; } catch (e) { out[name] = e.error_type; }
       }
       out.explicit = await tools.c_delete_all({ explicit_action: 'C_DELETE_ALL' });
       out.hits = [];
       for (let i = 0; i < 3; i++) {
         try { out.hits.push(await tools.c_hit({})); } catch (e) { out.hits.push(e.error_type); }
       }
       return out;`,
    );
    expect(refusals.error).toBeUndefined();
    expect(refusals.results).toMatchObject({
      result: {
        touch: 'access_denied',
        delete: 'consent_required',
        explicit: 'deleted everything',
        hits: ['hit 2', 'hit 3', 'rate_limited'],
      },
    });
  }, 60_000);

  it('M3: while a snippet computes, its own thread runs it and the gateway answers other calls', async () => {
    const session = await gateway();
    const order: string[] = [];
    const looping = run(session, 'while (true) {}').then((answer) => {
      order.push('run_code');
      return answer;
    });
    // Sent after the run's request, on the same connection: it reaches the gateway second.
    const beside = await session.client.callTool({ name: 'c_add', arguments: { a: 2, b: 2 } });
    order.push('c_add');
    expect(envelope(beside).results).toEqual({ sum: 4 });
    expect(await looping).toMatchObject({ error_type: 'timeout', error_data: { stopped: 'cpu' } });
    expect(order).toEqual(['c_add', 'run_code']);
  }, 60_000);

  it('M3: a snippet that reads a file or is not JavaScript is stopped with a clear error; the gateway goes on serving', async () => {
    const session = await gateway();
    // A loop's own stop is the test above (its two seconds of CPU are spent once).
    const file = await run(session, "return require('fs').readFileSync('/etc/passwd', 'utf8');");
    expect(file).toMatchObject({ error_type: 'tool_error', error_data: { stopped: 'thrown' } });
    expect(file.error).toMatch(/'require' is not defined/);
    const syntax = await run(session, 'return (;');
    expect(syntax.error_type).toBe('invalid_arguments');
    const after = await session.client.callTool({ name: 'c_add', arguments: { a: 1, b: 1 } });
    expect(envelope(after).results).toEqual({ sum: 2 });
  }, 60_000);

  it('M1, M2: over HTTP a 2026 host at a profile in code mode runs a snippet; /mcp lists the tools themselves', async () => {
    const served = await serveHttpLines(
      [
        'profiles:',
        "  coder: { tools: ['c_*', 'f_read_file'], expose: code }",
        'servers:',
        fixtureEntry('c', 'counter'),
        fixtureEntry('f', 'annotated'),
      ],
      stops,
    );
    const coder = await modernHttpClient(`${served.url}/coder`);
    stops.push(() => coder.close());
    expect((await coder.listTools()).tools.map((tool) => tool.name)).toEqual([
      'search_tools',
      'call_tool',
      'run_code',
    ]);
    const answer = await coder.callTool({
      name: 'run_code',
      arguments: {
        code: `const sum = await tools.c_add({ a: 1, b: 2 });
               let touched; try { await tools.f_touch({ path: '/x' }); } catch (e) { touched = e.error_type; }
               return { sum: sum.sum, touched };`,
      },
    });
    expect(envelope(answer).results).toMatchObject({
      result: { sum: 3, touched: 'access_denied' },
      calls: 2,
    });
    const plain = await modernHttpClient(served.url);
    stops.push(() => plain.close());
    const names = (await plain.listTools()).tools.map((tool) => tool.name);
    expect(names).toContain('c_add');
    expect(names).not.toContain('run_code');
  }, 60_000);

  it("M4: the files a snippet's calls return come back with the run, as files of its answer, each name once", async () => {
    const config = writeConfig(['expose: code', 'servers:', fixtureEntry('d', 'files')].join('\n'));
    const session = await connectStdio(config);
    sessions.push(session);
    const answer = await session.client.callTool({
      name: 'run_code',
      arguments: { code: 'const a = await tools.d_screenshot({}); await tools.d_screenshot({}); return a;' },
    });
    const { structuredContent } = answer as { structuredContent: Record<string, unknown> };
    expect(envelope(answer).results).toMatchObject({ result: 'A screenshot of the dashboard.', calls: 2 });
    const names = structuredContent['returned_file_names'] as string[];
    expect(names).toHaveLength(2);
    expect(new Set(names).size).toBe(2);
    // As a direct call of the tool renders its file: a name and its contents, in order.
    const direct = (await session.client.callTool({ name: 'd_screenshot', arguments: {} })) as {
      structuredContent: Record<string, unknown>;
    };
    expect(structuredContent['returned_file_contents']).toEqual([
      ...(direct.structuredContent['returned_file_contents'] as unknown[]),
      ...(direct.structuredContent['returned_file_contents'] as unknown[]),
    ]);
  }, 60_000);

  it('M5: a tool that declared its output is typed by it, and its structured result is what the snippet gets', async () => {
    const config = writeConfig(['expose: code', 'servers:', fixtureEntry('w', 'structured')].join('\n'));
    const session = await connectStdio(config);
    sessions.push(session);
    const found = envelope(
      await session.client.callTool({ name: 'search_tools', arguments: { query: 'current weather' } }),
    );
    const weather = (found.results as { tools: { name: string; declaration: string }[] }).tools.find(
      (tool) => tool.name === 'w_weather',
    );
    expect(weather?.declaration).toBe(
      'tools.w_weather(args: { city?: string }): Promise<{ city: string; temperature_c: number; conditions: string }>',
    );
    const ran = await run(
      session,
      "const w = await tools.w_weather({ city: 'Porto' }); return [w.city, w.temperature_c];",
    );
    expect(ran.results).toMatchObject({ result: ['Porto', 21] });
  }, 60_000);
});
