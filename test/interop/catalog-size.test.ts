/**
 * The lean catalog (T6, issue 15's first acceptance line): on the default config, the gateway's
 * tools/list in front of server-everything, -filesystem and -memory is at most 1.10× the bytes of
 * the three servers' own lists added up.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connectStdio as connectGateway, writeConfig, type StdioSession } from '../e2e/cli-process.js';
import {
  connectStdio,
  REAL_PACKAGES,
  START_TIMEOUT_MS,
  stdioServer,
  tempDir,
  type DirectClient,
  type StdioSpec,
} from './real-servers.js';

let specs: Record<string, StdioSpec>;
let direct: DirectClient[] = [];
let gateway: StdioSession;

beforeAll(async () => {
  specs = {
    everything: stdioServer(REAL_PACKAGES.everything, ['stdio']),
    filesystem: stdioServer(REAL_PACKAGES.filesystem, [tempDir('size')]),
    memory: stdioServer(REAL_PACKAGES.memory),
  };
  direct = await Promise.all(Object.values(specs).map((spec) => connectStdio(spec)));
  const lines = ['servers:'];
  for (const [name, spec] of Object.entries(specs)) {
    lines.push(
      `  ${name}:`,
      `    command: ${JSON.stringify(spec.command)}`,
      `    args: ${JSON.stringify(spec.args)}`,
    );
  }
  gateway = await connectGateway(writeConfig(lines.join('\n')));
}, START_TIMEOUT_MS);

afterAll(async () => {
  await Promise.all(direct.map((client) => client.close()));
  await gateway?.client.close();
});

describe('the catalog in front of three reference servers, on the default config', () => {
  it("T6: tools/list is at most 1.10x the bytes of the servers' own lists added up", async () => {
    const own = await Promise.all(
      direct.map(async ({ client }) => JSON.stringify((await client.listTools()).tools).length),
    );
    const ownBytes = own.reduce((a, b) => a + b, 0);
    const exposed = (await gateway.client.listTools()).tools;
    const exposedBytes = JSON.stringify(exposed).length;
    expect(exposed.length).toBeGreaterThan(30);
    expect(exposedBytes / ownBytes, `${exposedBytes} bytes exposed, ${ownBytes} direct`).toBeLessThanOrEqual(
      1.1,
    );
  });
});
