/**
 * The newcomer's path (issue 12, item 6), with real processes: a server that crashes at start,
 * one that never answers, `check`, `tools`, `call` and `serve --http` as a user runs them.
 */
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, describe, expect, it } from 'vitest';
import { fixtureServer } from '../helpers/fixtures.js';
import { runCli, serveHttp, writeConfig, fixtureEntry } from './cli-process.js';

/** A server that prints a fatal line (echoing its key) and exits 3 before serving. */
function crashing(name: string, marker: string): string {
  const script = `console.error('fatal: no API key in FOO_API_KEY (got ' + process.env.FOO_API_KEY + ')'); process.exit(3) // ${marker}`;
  return [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ${JSON.stringify(['-e', script])}`,
    '    env: { FOO_API_KEY: "${SECRET_TOKEN_FOR_TEST}" }',
  ].join('\n');
}

/** A server that reads stdin and never answers. */
function silent(name: string, marker: string, extra = ''): string {
  const script = `process.stdin.resume(); setInterval(() => {}, 1000) // ${marker}`;
  return [
    `  ${name}:`,
    `    command: ${JSON.stringify(process.execPath)}`,
    `    args: ${JSON.stringify(['-e', script])}`,
    '    timeout_ms: 1500',
    '    startup_timeout_ms: 1500',
    extra,
  ]
    .filter((line) => line !== '')
    .join('\n');
}

/** A YAML server entry: the echo fixture started by `sh -c '<before>; exec node echo.js'`. */
function echoBehind(name: string, before: string): string {
  const echo = fixtureServer('echo');
  const wrapper = `${before}; exec '${echo.command}' ${echo.args.map((arg) => `'${arg}'`).join(' ')}`;
  return [`  ${name}:`, '    command: sh', `    args: ${JSON.stringify(['-c', wrapper])}`].join('\n');
}

/** Live processes whose command line contains `marker`. */
function processesWith(marker: string): number[] {
  const found: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (stat.slice(stat.lastIndexOf(')') + 2).startsWith('Z')) continue;
      if (readFileSync(`/proc/${entry}/cmdline`, 'utf8').includes(marker)) found.push(Number(entry));
    } catch {
      // Gone while we looked.
    }
  }
  return found;
}

const markers: string[] = [];
function marker(label: string): string {
  const value = `mcpn-${label}-${process.pid}-${markers.length}-${Date.now()}`;
  markers.push(value);
  return value;
}
afterEach(() => {
  for (const value of markers.splice(0)) for (const pid of processesWith(value)) process.kill(pid, 'SIGKILL');
});

const SECRET = 'sk-newcomer-0123456789';

describe('a server that crashes at start', () => {
  it('P6: check shows its exit code and its last stderr line, with the secret scrubbed (L2)', async () => {
    const file = writeConfig(
      ['servers:', crashing('broken', marker('crash')), fixtureEntry('ok', 'echo')].join('\n'),
    );
    const check = await runCli(['check', '--config', file], { SECRET_TOKEN_FOR_TEST: SECRET });
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('exited with code 3');
    expect(check.stdout).toContain('fatal: no API key in FOO_API_KEY');
    expect(check.stdout + check.stderr).not.toContain(SECRET);
    expect(check.stdout).toContain('[REDACTED]');
  });

  it('P6/T9: /healthz and the serve banner show it; a call to its tool is downstream_unavailable naming it', async () => {
    const file = writeConfig(
      ['servers:', crashing('broken', marker('crash')), fixtureEntry('ok', 'echo')].join('\n'),
    );
    const serve = await serveHttp(file, { SECRET_TOKEN_FOR_TEST: SECRET });
    try {
      const health = (await (await fetch(serve.healthUrl)).json()) as {
        servers: { name: string; error?: string }[];
      };
      const broken = health.servers.find((server) => server.name === 'broken');
      expect(broken?.error).toContain('fatal: no API key in FOO_API_KEY');
      expect(JSON.stringify(health)).not.toContain(SECRET);
      expect(serve.stderr()).toContain('exited with code 3');
    } finally {
      serve.child.kill('SIGTERM');
      await serve.exited;
    }
    const call = await runCli(['call', 'broken_anything', '--config', file], {
      SECRET_TOKEN_FOR_TEST: SECRET,
    });
    expect(call.code).toBe(1);
    const envelope = JSON.parse(call.stdout) as {
      meta_data: { error_type: string; error_data: { last_error: string } };
    };
    expect(envelope.meta_data.error_type).toBe('downstream_unavailable');
    expect(envelope.meta_data.error_data.last_error).toContain('exited with code 3');
    expect(call.stdout).not.toContain('Did you mean');
  });
});

describe('no process left behind', () => {
  it.each([
    ['check', ['check']],
    ['tools', ['tools']],
    ['call of the live server', ['call', 'ok_echo', '--args', '{"text":"hi"}']],
    ['call of the silent server', ['call', 'quiet_x']],
    ['call of the crashing one', ['call', 'broken_x']],
  ])(
    'P5: %s, with a silent server and a crashing one, leaves none of their processes',
    async (_name, args) => {
      const quiet = marker('silent');
      const broken = marker('crash');
      const file = writeConfig(
        ['servers:', silent('quiet', quiet), crashing('broken', broken), fixtureEntry('ok', 'echo')].join(
          '\n',
        ),
      );
      const run = await runCli([...args, '--config', file], { SECRET_TOKEN_FOR_TEST: SECRET });
      // 0 or 1 (a problem found, a failed call); never 3 (config) or a timeout (null).
      expect([0, 1], run.stdout + run.stderr).toContain(run.code);
      // Killed at the CLI's exit at the latest (downstream/spawn.ts): gone once the kernel has
      // delivered the SIGKILL, which under load can take a moment after the CLI itself is gone.
      await expect.poll(() => processesWith(quiet), { timeout: 3000, interval: 50 }).toEqual([]);
      await expect.poll(() => processesWith(broken), { timeout: 3000, interval: 50 }).toEqual([]);
    },
  );
});

describe('call starts only what it needs', () => {
  it("U3: call of one server's tool never starts the others", async () => {
    const flag = join(tmpdir(), `${marker('started')}.flag`);
    // The echo fixture behind a wrapper that leaves a flag when it is started.
    const file = writeConfig(
      ['servers:', echoBehind('other', `: > '${flag}'`), fixtureEntry('ok', 'echo')].join('\n'),
    );
    const call = await runCli(['call', 'ok_echo', '--args', '{"text":"hi"}', '--config', file]);
    expect(call.code, call.stderr).toBe(0);
    expect(existsSync(flag)).toBe(false);
    // An unknown name starts every server, for T9's suggestions.
    const unknown = await runCli(['call', 'nothing_here', '--config', file]);
    expect(unknown.code).toBe(1);
    expect(existsSync(flag)).toBe(true);
  });
});

describe('messages that say what is wrong and where', () => {
  it('P6: a missing cwd is named as the missing folder, not as a missing command', async () => {
    const file = writeConfig(
      [
        'servers:',
        '  py:',
        `    command: ${JSON.stringify(process.execPath)}`,
        '    args: ["-e", "1"]',
        '    cwd: /nonexistent/mcp-normalizer-test-dir',
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(
      'working directory (cwd) /nonexistent/mcp-normalizer-test-dir does not exist',
    );
  });

  it('P6: a missing command is named as such', async () => {
    const file = writeConfig(
      ['servers:', '  gone:', '    command: mcp-normalizer-no-such-command'].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.stdout).toContain(
      '"mcp-normalizer-no-such-command": no such file, and no such command on the PATH',
    );
  });

  it('P6: a wrong script path is named by what node said (Cannot find module), not by its stack', async () => {
    const file = writeConfig(
      [
        'servers:',
        '  lost:',
        `    command: ${JSON.stringify(process.execPath)}`,
        '    args: ["/nonexistent/mcp-normalizer/server.js"]',
        '    protocol: legacy',
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain("Cannot find module '/nonexistent/mcp-normalizer/server.js'");
    expect(check.stdout).not.toMatch(/\sat Module\._resolveFilename/);
  });

  it('P4: an unreachable URL is named with the reason', async () => {
    // A port that was free a moment ago: connection refused.
    const { createServer } = await import('node:net');
    const port = await new Promise<number>((resolve) => {
      const probe = createServer().listen(0, '127.0.0.1', () => {
        const address = probe.address() as { port: number };
        probe.close(() => resolve(address.port));
      });
    });
    const url = `http://127.0.0.1:${port}/mcp`;
    const file = writeConfig(['servers:', '  remote:', `    url: ${url}`, '    timeout_ms: 3000'].join('\n'));
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain(`${url}: `);
    expect(check.stdout).toContain('ECONNREFUSED');
  });

  it('U3: an option with a typo gets "did you mean"', async () => {
    const serve = await runCli(['serve', '--htttp']);
    expect(serve.code).toBe(2);
    expect(serve.stderr).toContain("Unknown option '--htttp'. Did you mean --http?");
  });

  it('C5: a misspelt key in a Claude-Desktop file is a problem in check, not "no problems"', async () => {
    const echo = fixtureServer('echo');
    const file = join(tmpdir(), `${marker('desktop')}.json`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(
      file,
      JSON.stringify({
        mcpServers: { echo: { command: echo.command, args: echo.args, enviroment: { A: '1' } } },
      }),
    );
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('did you mean "env"?');
    expect(check.stdout).toContain('FAILED: 1 problem.');
  });

  it('C5: a Claude-Desktop entry with protocol: legacy passes check (the key is ours: read, not ignored)', async () => {
    const file = join(tmpdir(), `${marker('protocol')}.json`);
    const { writeFileSync } = await import('node:fs');
    writeFileSync(file, '{"mcpServers":{"a":{"command":"node","protocol":"legacy","disabled":true}}}');
    const check = await runCli(['check', '--config', file]);
    expect(check.code, check.stdout + check.stderr).toBe(0);
    expect(check.stdout + check.stderr).not.toContain('is ignored');
  });
});

describe('servers that already prefix their tools', () => {
  it('T15: strip_prefix exposes git_status, not git_git_status, and the call reaches the tool', async () => {
    // The echo fixture renamed `git_echo` stands in for a server that prefixes its own tools.
    const echo = fixtureServer('echo');
    const file = writeConfig(
      [
        'servers:',
        '  git:',
        `    command: ${JSON.stringify(echo.command)}`,
        `    args: ${JSON.stringify(echo.args)}`,
        '    tools: { rename: { echo: git_echo }, strip_prefix: true }',
      ].join('\n'),
    );
    const tools = await runCli(['tools', '--json', '--config', file]);
    expect((JSON.parse(tools.stdout) as { name: string }[]).map((tool) => tool.name)).toEqual(['git_echo']);
    const call = await runCli(['call', 'git_echo', '--args', '{"text":"hi"}', '--config', file]);
    expect(call.code, call.stdout).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ results: 'hi' });
  });
});

describe('withheld tools', () => {
  it('T12: check lists every withheld tool of a listing, not only those the catalog saw', async () => {
    const raw = fixtureServer('probe-exit', ['--bad-tools']);
    const file = writeConfig(
      [
        'servers:',
        '  raw:',
        `    command: ${JSON.stringify(raw.command)}`,
        `    args: ${JSON.stringify(raw.args)}`,
        '    protocol: legacy',
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    const withheld = check.stdout.split('\n').filter((line) => line.startsWith('warning: Withheld tool'));
    expect(withheld, check.stdout).toHaveLength(4);
    expect(check.stdout).toContain('Withheld tool "#0" of server "raw"');
    expect(check.stdout).toContain('Withheld tool "#1" of server "raw"');
    expect(check.stdout).toContain('Withheld tool "bad_input" of server "raw"');
    expect(check.stdout).toContain('Withheld tool "array_input" of server "raw"');
  });
});

describe('start-up apart from calls', () => {
  /** The echo fixture behind `sleep 2.5`: a server that needs 2.5 s to start (a cold `npx -y`). */
  function slowStarter(extra: string): string {
    return ['servers:', echoBehind('slow', 'sleep 2.5'), extra].join('\n');
  }

  it('P1: a server that takes 2.5 s to start, with timeout_ms 1500, comes up and serves', async () => {
    // protocol: legacy, so that one `initialize` has to wait the whole 2.5 s (a probe first would
    // split the wait between two requests, each within 1.5 s).
    const file = writeConfig(slowStarter('    timeout_ms: 1500\n    protocol: legacy'));
    const call = await runCli(['call', 'slow_echo', '--args', '{"text":"late but here"}', '--config', file]);
    expect(call.code, call.stdout + call.stderr).toBe(0);
    expect(JSON.parse(call.stdout)).toMatchObject({ results: 'late but here' });
  });

  it('P1: with startup_timeout_ms 1000 the same server is down, and check says which bound it hit', async () => {
    const file = writeConfig(slowStarter('    startup_timeout_ms: 1000'));
    const check = await runCli(['check', '--config', file]);
    expect(check.code).toBe(1);
    expect(check.stdout).toContain('did not start within startup_timeout_ms (1000 ms)');
  });
});

describe('errors that are not about the protocol', () => {
  it('P6, E5: a refused address and a process that dies say so, with no protocol advice; a stdio server that serves HTTP is told to use url:', async () => {
    const node = JSON.stringify(process.execPath);
    const file = writeConfig(
      [
        'servers:',
        '  refused:',
        '    url: http://127.0.0.1:9/mcp',
        '    startup_timeout_ms: 3000',
        '  dies:',
        `    command: ${node}`,
        `    args: ["-e", "console.error('npm error 404 Not Found - GET https://registry.example/@nope%2fserver'); setTimeout(() => process.exit(1), 400)"]`,
        '    startup_timeout_ms: 3000',
        '  speaks_http:',
        `    command: ${node}`,
        `    args: ["-e", "console.log('MCP server listening on http://localhost:8123/mcp'); setInterval(() => {}, 1000)"]`,
        '    startup_timeout_ms: 2000',
      ].join('\n'),
    );
    const check = await runCli(['check', '--config', file]);
    const line = (server: string): string =>
      `${check.stdout}\n${check.stderr}`
        .split('\n')
        .find((text) => text.startsWith(`error: server "${server}"`)) ?? '';
    expect(line('refused')).toContain('ECONNREFUSED');
    expect(line('dies')).toContain('npm error 404');
    for (const server of ['refused', 'dies']) {
      expect(line(server)).not.toContain('protocol: legacy');
      expect(line(server)).not.toContain('disposable sibling probe');
    }
    expect(line('speaks_http')).toContain('MCP server listening on http://localhost:8123/mcp');
    expect(line('speaks_http')).toContain('`url: http://localhost:8123/mcp`');
  });
});
