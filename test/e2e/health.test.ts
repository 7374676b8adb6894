/**
 * O4, P4: a remote server that dies is shown down within its `health_interval_ms`, with the
 * reason and since when, and "since" holds through its restarts. A real HTTP fixture on
 * 127.0.0.1, killed under a running `serve --http`.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { startHttpFixture } from '../helpers/fixtures.js';
import { serveHttp, writeConfig } from './cli-process.js';

const stops: (() => unknown)[] = [];
afterAll(async () => {
  for (const stop of stops.splice(0).reverse()) await stop();
});

interface Row {
  name: string;
  state: string;
  error?: string;
  down_since?: string;
}

describe('a remote server that dies', () => {
  it('O4, P4: is down within health_interval_ms with its reason and since when, not at the next call', async () => {
    const fixture = await startHttpFixture('raw', ['--http']);
    stops.push(() => fixture.stop());
    const serve = await serveHttp(
      writeConfig(
        [
          'status_page: true',
          'servers:',
          '  r:',
          `    url: ${fixture.url}`,
          '    protocol: legacy',
          '    health_interval_ms: 300',
        ].join('\n'),
      ),
    );
    stops.push(() => serve.child.kill('SIGKILL'));
    const row = async (): Promise<Row | undefined> =>
      ((await (await fetch(serve.healthUrl)).json()) as { servers: Row[] }).servers.find(
        (s) => s.name === 'r',
      );
    await expect.poll(async () => (await row())?.state).toBe('ready');
    fixture.stop();
    // No call is made: the health ping finds it gone.
    await expect.poll(async () => (await row())?.state, { timeout: 10_000 }).not.toBe('ready');
    const down = await row();
    expect(down?.error).toMatch(/ECONNREFUSED|unreachable|fetch failed/);
    expect(Date.parse(down?.down_since ?? '')).toBeGreaterThan(0);
    // Restarts come and go; "down since" stays where it began, on /healthz and on the page.
    const data = async () =>
      (
        (await (await fetch(serve.healthUrl.replace('/healthz', '/status/data'))).json()) as {
          servers: { name: string; since: number; restarts: number }[];
        }
      ).servers.find((s) => s.name === 'r');
    const first = await data();
    await expect
      .poll(async () => (await data())?.restarts, { timeout: 10_000 })
      .toBeGreaterThan(first?.restarts ?? 0);
    expect((await data())?.since).toBe(first?.since);
    expect((await row())?.down_since).toBe(down?.down_since);
  }, 30_000);
});
