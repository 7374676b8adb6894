/**
 * The benchmark harness runs end to end: every target (the downstream directly, the bare
 * passthrough, mcp-normalizer and, over HTTP, supergateway) starts, answers an echo with the message, returns the 1 MiB
 * result and lists every tool, over stdio and over Streamable HTTP. A handful of calls each;
 * nothing here looks at a timing (ratios are reported by `npm run bench`, never asserted).
 * Needs the compiled build (`npm test` builds first).
 */
import { execFile } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { promisify } from 'node:util';
import { describe, expect, it } from 'vitest';
import { kindsOf } from '../../bench/figures.js';
import { runBench } from '../../bench/run.js';
import { launch } from '../../bench/targets.js';

/** A process's session id and its children's pids, from /proc (Linux). */
function sessionOf(pid: number): number {
  const fields = readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.split(' ') ?? [];
  return Number(fields[3]);
}
function childrenOf(pid: number): number[] {
  return readFileSync(`/proc/${pid}/task/${pid}/children`, 'utf8')
    .trim()
    .split(' ')
    .filter(Boolean)
    .map(Number);
}
/** Linux with util-linux's `setsid` (`apt-get install util-linux`); skipped by name elsewhere. */
const SESSIONS_VISIBLE =
  existsSync(`/proc/${process.pid}/task/${process.pid}/children`) &&
  (process.env['PATH'] ?? '').split(':').some((dir) => existsSync(`${dir}/setsid`));

describe('bench harness', () => {
  it('U1: every target answers correctly over stdio and Streamable HTTP in a smoke run', async () => {
    const { figures, problems } = await runBench('smoke', ['echo-stdio', 'echo-http']);
    expect(problems).toEqual([]);
    const p50 = figures.filter((figure) => figure.id.endsWith('.echo.p50'));
    expect(p50.map((figure) => figure.id)).toEqual(['stdio.echo.p50', 'http.echo.p50']);
    for (const figure of figures) {
      const wire = figure.id.startsWith('http.') ? 'http' : 'stdio';
      expect(Object.keys(figure.rounds).sort(), figure.id).toEqual([...kindsOf(wire)].sort());
    }
  });

  it.runIf(SESSIONS_VISIBLE)(
    "P5: --child-session runs the passthrough's downstream in a session of its own, as ours (Linux, util-linux's setsid)",
    async () => {
      for (const childSession of [false, true]) {
        const target = await launch({
          kind: 'passthrough',
          wire: 'stdio',
          servers: 1,
          tools: 0,
          childSession,
        });
        try {
          const [child] = childrenOf(target.pid);
          expect(child, 'the passthrough has its downstream child').toBeDefined();
          const session = sessionOf(child!);
          if (childSession) expect(session).toBe(child);
          else expect(session).toBe(sessionOf(target.pid));
        } finally {
          await target.close();
        }
      }
    },
  );

  it('U1: the in-process bench runs both targets to completion and prints their figures', async () => {
    const { stdout } = await promisify(execFile)(
      process.execPath,
      ['dist/bench/inproc.js', '--rounds', '1', '--calls', '20', '--warmup', '20'],
      { timeout: 30_000 },
    );
    expect(stdout).toMatch(/^passthrough: [\d.]+ µs\/call$/m);
    expect(stdout).toMatch(/^mcp-normalizer: [\d.]+ µs\/call$/m);
    expect(stdout).toMatch(/mcp-normalizer ÷ passthrough .*: [\d.]+×/);
  });
});
