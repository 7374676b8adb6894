/**
 * The one-shot commands of the built bin (U3): check, tools, call, --help, --version, and the
 * exit codes of docs/cli.md.
 */
import { describe, expect, it } from 'vitest';
import { DEFAULT_CONFIG, fixtureEntry, runCli, writeConfig } from './cli-process.js';

describe('mcp-normalizer CLI', () => {
  it('U3: check on config/default.yaml exits 0 and prints every server with its state and tool count', async () => {
    const run = await runCli(['check', '--config', DEFAULT_CONFIG]);
    expect(run.code, run.stderr).toBe(0);
    expect(run.stdout).toMatch(/SERVER\s+STATE\s+PROTOCOL\s+TOOLS/);
    // E5: the demo servers run on SDK v1, so the probe lands them on the 2025 protocol.
    for (const server of ['structured', 'text', 'files', 'inband', 'errors', 'annotated', 'slow', 'notes']) {
      expect(run.stdout).toMatch(new RegExp(`^${server}\\s+ready\\s+legacy 2025-\\d\\d-\\d\\d\\s+\\d+`, 'm'));
    }
    expect(run.stdout).toMatch(/TOOL\s+SERVER\s+DOWNSTREAM/);
    expect(run.stdout).toMatch(/^annotated_delete_file\s+annotated\s+delete_file\s+destructive,explicit/m);
    expect(run.stdout).toMatch(/^OK: \d+ tools from 8 servers/m);
  });

  it('T4/U3: check exits 1 on a name collision and names both tools', async () => {
    const config = writeConfig(
      [
        'servers:',
        fixtureEntry('first', 'echo', { prefix: '' }),
        fixtureEntry('second', 'slow', { prefix: '' }),
      ].join('\n'),
    );
    const run = await runCli(['check', '--config', config]);
    expect(run.code).toBe(1);
    const line = run.stdout.split('\n').find((text) => text.startsWith('error: Name collision'));
    expect(line).toContain('"echo"');
    expect(line).toContain('server "second"');
    expect(line).toContain('server "first"');
    expect(run.stdout).toMatch(/^FAILED: 1 problem/m);
  });

  it('U3: check exits 1 and names a server that cannot start', async () => {
    const config = writeConfig(
      [
        'servers:',
        fixtureEntry('ok', 'echo'),
        '  broken:',
        '    command: /nonexistent/mcp-server-binary',
      ].join('\n'),
    );
    const run = await runCli(['check', '--config', config]);
    expect(run.code).toBe(1);
    expect(run.stdout).toMatch(/^error: server "broken" is down/m);
    expect(run.stdout).toMatch(/^ok\s+ready\s+legacy \S+\s+1/m);
  });

  it('C5/U3: an invalid config exits 3 with each problem on its own line and starts nothing', async () => {
    const config = writeConfig('servers:\n  x:\n    comand: node\n');
    const run = await runCli(['check', '--config', config]);
    expect(run.code).toBe(3);
    expect(run.stderr).toMatch(/config\.yaml:3:5: .*comand/);
    expect(run.stdout).toBe('');
  });

  it('U3: tools lists the exposed tools as a table, and --json prints the tools/list definitions', async () => {
    const table = await runCli(['tools', '--config', DEFAULT_CONFIG]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^text_prose\s+text\s+prose/m);
    const json = await runCli(['tools', '--config', DEFAULT_CONFIG, '--json']);
    const tools = JSON.parse(json.stdout) as { name: string; inputSchema: unknown }[];
    expect(tools.map((tool) => tool.name)).toContain('text_prose');
  });

  it('U3: call prints the rendered envelope and exits 0; an isError result exits 1', async () => {
    const ok = await runCli(['call', 'slow_echo', '--args', '{"text":"hello"}', '--config', DEFAULT_CONFIG]);
    expect(ok.code, ok.stderr).toBe(0);
    expect(JSON.parse(ok.stdout)).toMatchObject({
      results: 'hello',
      meta_data: { server: 'slow', tool: 'echo' },
    });
    const refused = await runCli([
      'call',
      'annotated_delete_file',
      '--args',
      '{"path":"a.txt"}',
      '--config',
      DEFAULT_CONFIG,
    ]);
    expect(refused.code).toBe(1);
    expect(JSON.parse(refused.stdout)).toMatchObject({
      meta_data: { is_error: true, error_type: 'consent_required' },
    });
  });

  it('U3: usage errors exit 2: unknown command, unknown option, malformed --args', async () => {
    expect((await runCli(['frobnicate'])).code).toBe(2);
    expect((await runCli(['check', '--frob'])).code).toBe(2);
    const bad = await runCli(['call', 'x', '--args', '{not json', '--config', DEFAULT_CONFIG]);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('--args is not valid JSON');
  });

  it('U3/Q3: call --elicit answers the question a tool asks: accept with content or defaults, decline; without it the call says it cannot ask', async () => {
    const config = writeConfig(
      ['servers:', fixtureEntry('asking', 'asking', { client_features: ['elicitation'] })].join('\n'),
    );
    const ask = (...extra: string[]) =>
      runCli(['call', 'asking_ask', '--args', '{"question":"Which colour?"}', '--config', config, ...extra]);
    const given = await ask('--elicit-content', '{"answer":"blue"}');
    expect(given.code).toBe(0);
    expect(JSON.parse(given.stdout)).toMatchObject({ results: { action: 'accept', answer: 'blue' } });
    const defaults = await ask('--elicit', 'accept');
    expect(JSON.parse(defaults.stdout)).toMatchObject({ results: { action: 'accept', answer: '' } });
    const declined = await ask('--elicit', 'decline');
    expect(JSON.parse(declined.stdout)).toMatchObject({ results: { action: 'decline', answer: null } });
    const unasked = await ask();
    expect(unasked.code).toBe(1);
    expect(unasked.stdout).toMatch(/elicitation/);
    expect(unasked.stderr).toContain('run the command again with --elicit accept');
    expect(defaults.stderr).not.toContain('--elicit accept');
    expect((await ask('--elicit', 'maybe')).stderr).toContain('--elicit must be accept, decline or cancel');
  });

  it.each(['serve', 'check', 'tools', 'call', 'login', 'logout'])(
    'U3: %s --help prints its usage and exits 0',
    async (command) => {
      const run = await runCli([command, '--help']);
      expect(run.code).toBe(0);
      expect(run.stdout).toContain(`Usage: mcp-normalizer ${command}`);
    },
  );

  it('U3: --version prints the package version', async () => {
    const run = await runCli(['--version']);
    expect(run.code).toBe(0);
    expect(run.stdout.trim()).toMatch(/^\d+\.\d+\.\d+/);
  });
});
