/**
 * docs/identity.md's worked example, as written: the shipped config/examples/identity.yaml and
 * the authorization server it names (fixtures/servers/example-idp.ts, as the docs start it), with
 * a host that does what real clients do: it meets the gateway's 401, finds the issuer from the
 * RFC 9728 metadata, and asks for a token for the advertised resource (RFC 8707), through the
 * SDK v2's own ClientCredentialsProvider. Only the ports differ (free ones).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import {
  Client,
  ClientCredentialsProvider,
  StreamableHTTPClientTransport,
} from '@modelcontextprotocol/client';
import { afterAll, describe, expect, it } from 'vitest';
import { ROOT } from '../helpers/fixtures.js';
import { serveHttp, writeConfig } from './cli-process.js';

const stops: (() => unknown)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

/** The example's authorization server on a free port; its issuer. */
async function exampleIdp(): Promise<string> {
  const child = spawn(
    process.execPath,
    [join(ROOT, 'dist', 'fixtures', 'servers', 'example-idp.js'), '--port=0'],
    {
      stdio: ['ignore', 'pipe', 'ignore'],
    },
  );
  stops.push(() => child.kill('SIGTERM'));
  let out = '';
  child.stdout.setEncoding('utf8');
  return new Promise((resolve, reject) => {
    child.stdout.on('data', (chunk: string) => {
      out += chunk;
      const issuer = /^LISTENING (\S+)$/m.exec(out)?.[1];
      if (issuer !== undefined) resolve(issuer);
    });
    child.once('exit', (code) => reject(new Error(`example-idp exited (${String(code)})`)));
  });
}

describe('the identity worked example', () => {
  it('I1, I3: works as written with a host that discovers the issuer and asks for the advertised resource', async () => {
    const issuer = await exampleIdp();
    const written = readFileSync(join(ROOT, 'config', 'examples', 'identity.yaml'), 'utf8');
    expect(written).toContain('issuer: http://127.0.0.1:9400');
    expect(written).not.toMatch(/^\s*audience:/m);
    const serve = await serveHttp(writeConfig(written.replace('http://127.0.0.1:9400', issuer)));
    stops.push(() => serve.child.kill('SIGKILL'));
    const host = async (clientId: string, clientSecret: string): Promise<Client> => {
      const client = new Client({ name: 'example-host', version: '1.0.0' });
      await client.connect(
        new StreamableHTTPClientTransport(new URL(serve.url), {
          authProvider: new ClientCredentialsProvider({ clientId, clientSecret, expectedIssuer: issuer }),
        }),
      );
      stops.push(() => client.close());
      return client;
    };
    const alice = await host('alice', 'alice-example-secret');
    expect((await alice.listTools()).tools.map((tool) => tool.name).sort()).toEqual([
      'c_add',
      'c_count',
      'c_hit',
    ]);
    const added = await alice.callTool({ name: 'c_add', arguments: { a: 1, b: 2 } });
    expect(added.structuredContent).toMatchObject({ results: { sum: 3 } });
    const bob = await host('bob', 'bob-example-secret');
    expect((await bob.listTools()).tools.map((tool) => tool.name)).toEqual(['c_count']);
  }, 60_000);
});
