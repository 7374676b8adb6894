/**
 * L2 beyond the log: a value interpolated from the environment never reaches `/healthz`, the
 * CLI's output or an envelope, even when a downstream echoes it (issue "hardening", item 1).
 * Real processes: the built CLI, a remote downstream on 127.0.0.1 whose errors echo the request's
 * Authorization header, and stdio servers that echo the secret in a result or on stderr.
 */
import { once } from 'node:events';
import { join } from 'node:path';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { afterEach, describe, expect, it } from 'vitest';
import type { HttpServe } from './cli-process.js';
import { secretForms } from '../../src/core/secrets.js';
import { mkdirSync, writeFileSync } from 'node:fs';
import { installed, tempDir } from '../interop/real-servers.js';
import { fixtureEntry, runCli, serveHttp, writeConfig } from './cli-process.js';

const TOKEN = 'sk-live-8f3a9c2e71d04b6a';
const env = { MCP_TEST_TOKEN: TOKEN };
const cleanup: (() => unknown)[] = [];
afterEach(async () => {
  for (const step of cleanup.splice(0).reverse()) await step();
});

/** A remote "MCP server" that refuses every request and quotes the Authorization header back. */
async function echoingRemote(): Promise<string> {
  const server: Server = createServer((req, res) => {
    req.resume();
    res.writeHead(500, { 'Content-Type': 'text/plain' });
    res.end(`upstream refused credentials ${req.headers.authorization ?? '(none)'}`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  cleanup.push(() => new Promise((resolve) => server.close(resolve)));
  return `http://127.0.0.1:${(server.address() as AddressInfo).port}/mcp`;
}

/** A stdio server that writes the secret on stderr across the 8 KiB cut of a log line (12 characters before it). */
function stderrAtTheCut(): string {
  const script = `process.stderr.write('x'.repeat(8180) + process.env.LEAK + ' tail\\n'); setInterval(() => {}, 1000);`;
  return [
    '  leaky:',
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ["-e", ${JSON.stringify(script)}]`,
    '    env: { LEAK: "${MCP_TEST_TOKEN}" }',
    '    timeout_ms: 2000',
    '    startup_timeout_ms: 2000',
  ].join('\n');
}

async function config(): Promise<string> {
  const url = await echoingRemote();
  return writeConfig(
    [
      'servers:',
      '  remote:',
      `    url: ${url}`,
      '    headers: { Authorization: "Bearer ${MCP_TEST_TOKEN}" }',
      // The 2025 handshake: the SDK quotes the body of a refused initialize in its error.
      '    protocol: legacy',
      '    timeout_ms: 2000',
      '    startup_timeout_ms: 2000',
      fixtureEntry('echoer', 'echo'),
      stderrAtTheCut(),
    ].join('\n'),
  );
}

const leaks = (text: string): boolean => text.includes(TOKEN) || text.includes(TOKEN.slice(0, 10));

describe('L2: no secret in any output', () => {
  it('L2: check and call print no secret, though a downstream echoes it in its error and a result echoes it back', async () => {
    const file = await config();
    const check = await runCli(['check', '--config', file, '--log-level', 'trace'], env);
    // Down after its first attempt, or already retrying (its backoff can end before `check`
    // prints, on a loaded machine): either way not up, its error shown redacted.
    expect(check.stdout).toMatch(/remote\s+(down|restarting)/);
    expect(check.stdout).toContain('[REDACTED]');
    expect(leaks(check.stdout), check.stdout).toBe(false);
    expect(leaks(check.stderr), 'the trace log').toBe(false);

    const call = await runCli(
      ['call', 'echoer_echo', '--args', JSON.stringify({ text: TOKEN }), '--config', file],
      env,
    );
    expect(call.stdout).toContain('[REDACTED]');
    expect(leaks(call.stdout), call.stdout).toBe(false);
  });

  it('L2: /healthz and the envelopes an MCP client receives carry no secret', async () => {
    const serve: HttpServe = await serveHttp(await config(), env);
    // SIGTERM, so that the gateway stops its servers (P5): the leaky one ignores its stdin and
    // outlived a SIGKILLed gateway.
    cleanup.push(async () => {
      if (serve.child.exitCode !== null) return;
      const gone = once(serve.child, 'exit');
      serve.child.kill('SIGTERM');
      const bound = setTimeout(() => serve.child.kill('SIGKILL'), 15_000);
      await gone;
      clearTimeout(bound);
    });
    const health = await (await fetch(serve.healthUrl)).text();
    expect(health).toContain('[REDACTED]');
    expect(leaks(health), health).toBe(false);

    const client = new Client({ name: 'secrets', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(serve.url)));
    cleanup.push(() => client.close());
    const result = await client.callTool({ name: 'echoer_echo', arguments: { text: `my key is ${TOKEN}` } });
    expect(leaks(JSON.stringify(result)), JSON.stringify(result)).toBe(false);
    expect(JSON.stringify(result)).toContain('my key is [REDACTED]');
    expect(leaks(serve.stderr()), 'the banner and the log').toBe(false);
  });

  it('L2: a secret in a remote URL’s query and in a Basic header, echoed back in the forms they travel in, reaches no output', async () => {
    // Characters the WHATWG URL serializer keeps (@ / +) or percent-encodes (é), and base64.
    const KEY = 'q@ery/k+y-é~0123';
    const PASSWORD = 'basic-pass/w+rd:42';
    const server: Server = createServer((req, res) => {
      req.resume();
      res.writeHead(500, { 'Content-Type': 'text/html' });
      // An error page that quotes the request line and the Authorization header as they came.
      res.end(`<p>refused ${req.url ?? ''} with ${req.headers.authorization ?? '(none)'}</p>`);
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    cleanup.push(() => new Promise((resolve) => server.close(resolve)));
    const port = (server.address() as AddressInfo).port;
    const secrets = { MCP_URL_KEY: KEY, MCP_BASIC: Buffer.from(`gateway:${PASSWORD}`).toString('base64') };
    const file = writeConfig(
      [
        'status_page: true',
        'servers:',
        '  remote:',
        `    url: "http://127.0.0.1:${port}/mcp?key=\${MCP_URL_KEY}"`,
        '    headers: { Authorization: "Basic ${MCP_BASIC}" }',
        '    protocol: legacy',
        '    timeout_ms: 2000',
        '    startup_timeout_ms: 2000',
        fixtureEntry('echoer', 'echo'),
      ].join('\n'),
    );
    const forms = [...secretForms(KEY), ...secretForms(PASSWORD), secrets.MCP_BASIC];
    const leaked = (text: string): string[] => forms.filter((form) => text.includes(form));
    const check = await runCli(['check', '--config', file, '--log-level', 'trace'], secrets);
    // Down after its first attempt, or already retrying (its backoff can end before `check`
    // prints, on a loaded machine): either way not up, its error shown redacted.
    expect(check.stdout).toMatch(/remote\s+(down|restarting)/);
    expect(`${check.stdout}${check.stderr}`).toContain('/mcp?key=');
    expect(leaked(check.stdout), check.stdout).toEqual([]);
    expect(leaked(check.stderr), 'the trace log').toEqual([]);
    const tools = await runCli(['tools', '--config', file], secrets);
    expect(leaked(`${tools.stdout}${tools.stderr}`)).toEqual([]);

    const serve: HttpServe = await serveHttp(file, secrets);
    cleanup.push(() => serve.child.kill('SIGKILL'));
    await expect
      .poll(async () => (await (await fetch(serve.healthUrl)).text()).includes('refused'))
      .toBe(true);
    const health = await (await fetch(serve.healthUrl)).text();
    const status = await (await fetch(serve.url.replace(/\/mcp$/, '/status/data'))).text();
    expect(leaked(health), health).toEqual([]);
    expect(leaked(status), status).toEqual([]);
    expect(leaked(serve.stderr()), 'the log').toEqual([]);
  });

  it('L2: the README’s filesystem example lists and reads the real paths; a secret beside it is still scrubbed', async () => {
    const home = tempDir('home');
    mkdirSync(join(home, 'notes'));
    writeFileSync(join(home, 'notes', 'a.md'), 'first note\n');
    const file = writeConfig(
      [
        'servers:',
        '  fs:',
        `    command: ${JSON.stringify(process.execPath)}`,
        `    args: [${JSON.stringify(installed('@modelcontextprotocol/server-filesystem').bin)}, '\${HOME}/notes']`,
        '    prefix: files',
        '    env: { GITHUB_TOKEN: "${MCP_TEST_TOKEN}" }',
        fixtureEntry('echoer', 'echo'),
      ].join('\n'),
    );
    const withHome = { ...env, HOME: home };
    const dirs = await runCli(['call', 'files_list_allowed_directories', '--config', file], withHome);
    expect(dirs.stdout).toContain(`${home}/notes`);
    expect(dirs.stdout).not.toContain('[REDACTED]');
    const read = await runCli(
      [
        'call',
        'files_read_text_file',
        '--args',
        JSON.stringify({ path: `${home}/notes/a.md` }),
        '--config',
        file,
      ],
      withHome,
    );
    expect(read.stdout, read.stdout + read.stderr).toContain('first note');
    const echoed = await runCli(
      ['call', 'echoer_echo', '--args', JSON.stringify({ text: `in ${home}: ${TOKEN}` }), '--config', file],
      withHome,
    );
    expect(echoed.stdout).toContain(`in ${home}: [REDACTED]`);
    expect(leaks(echoed.stdout + echoed.stderr)).toBe(false);
  });
});
