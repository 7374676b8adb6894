/**
 * The loader end to end on files: valid fixtures load (C1, C2, C6), defaults are applied (C3,
 * C6), Claude-Desktop files map (C2), the global prefix comes from config or env (T1), and
 * interpolation feeds typed keys (C4).
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadConfig } from '../../src/config/load.js';
import { ServerSchema } from '../../src/config/schema.js';
import type { Config } from '../../src/config/types.js';

const valid = path.resolve(import.meta.dirname, '../../fixtures/configs/valid');
const env = { HOME: '/home/test', REMOTE_TOKEN: 'remote-secret-token' };

async function load(file: string, environment: Record<string, string> = env): Promise<Config> {
  const result = await loadConfig(file, environment);
  expect(result.errors.map((p) => formatProblem(p))).toEqual([]);
  if (result.config === undefined) throw new Error('no config');
  return result.config;
}

/** Writes `text` as a config file in a fresh temp folder and returns its path. */
function configFile(text: string, name = 'config.yaml'): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpn-config-'));
  const file = path.join(dir, name);
  writeFileSync(file, text);
  return file;
}

describe('loadConfig on the valid fixtures', () => {
  it('C6, L2: the contract example validates as written with REMOTE_TOKEN set', async () => {
    const config = await load(path.join(valid, 'contract-c6.yaml'));
    expect(config.prefix).toBe('acme');
    expect(config.servers.map((s) => s.name)).toEqual(['fs', 'remote', 'memory']);
    const [fs, remote] = config.servers;
    expect(fs?.prefix).toBe('files');
    expect(fs?.timeoutMs).toBe(20_000);
    expect(fs?.transport).toEqual({
      type: 'stdio',
      command: 'npx',
      args: ['-y', '@modelcontextprotocol/server-filesystem', '/home/test/notes'],
      env: { NODE_ENV: 'production' },
      maxMessageBytes: 64 * 1024 * 1024,
    });
    expect(fs?.tools.rename).toEqual({ read_text_file: 'read' });
    expect(fs?.tools.overrides['read']?.instruction).toBe('Quote the note; do not summarise it.');
    expect(remote?.transport).toEqual({
      type: 'streamable-http',
      url: 'http://127.0.0.1:8931/mcp',
      headers: { Authorization: 'Bearer remote-secret-token' },
    });
    expect(remote?.expose).toBe('read_only');
    expect(remote?.tools.overrides['delete_record']?.requireExplicit).toBe(true);
    expect(config.http).toEqual({
      host: '127.0.0.1',
      port: 3333,
      allowedHosts: ['localhost', '127.0.0.1'],
      sessionIdleMs: 1_800_000,
      maxSessions: 1000,
      legacy: 'sessions',
    });
    expect(config.instructions.timeout).toMatch(/retry at most once/);
    // L2: the token is a secret everywhere; ${HOME} only in the log.
    expect(config.secrets).toContain('remote-secret-token');
    expect(config.secrets).not.toContain('/home/test');
    expect(config.logSecrets).toEqual(expect.arrayContaining(['remote-secret-token', '/home/test']));
  });

  it('C4, C6: without REMOTE_TOKEN the contract example fails, naming the variable and file:line:col', async () => {
    const result = await loadConfig(path.join(valid, 'contract-c6.yaml'), { HOME: '/home/test' });
    expect(result.config).toBeUndefined();
    expect(result.errors.map((p) => formatProblem(p, valid))).toEqual([
      'contract-c6.yaml:45:31: servers.remote.headers.Authorization: environment variable "REMOTE_TOKEN" is not set: set it, or give a default with ${REMOTE_TOKEN:-default}',
    ]);
  });

  it('C3, C6: a minimal config gets every contract default', async () => {
    const config = await load(path.join(valid, 'minimal.yaml'), {});
    expect(config).toMatchObject({
      separator: '_',
      nameMaxLength: 64,
      logLevel: 'info',
      output: { format: 'results', media: 'artifacts', maxInlineBytes: 65_536, describeArguments: false },
      explicitDestructive: true,
      strictArguments: false,
      expose: 'all',
      instructions: {},
      http: {
        host: '127.0.0.1',
        port: 3333,
        allowedHosts: ['localhost', '127.0.0.1', '[::1]'],
        sessionIdleMs: 1_800_000,
        maxSessions: 1000,
      },
      redactKeys: ['password', 'token', 'secret', 'api_key', 'apikey', 'authorization', 'access_token'],
      secrets: [],
    });
    expect(config.prefix).toBeUndefined();
    expect(config.http.token).toBeUndefined();
    expect(config.servers[0]).toMatchObject({
      name: 'echo',
      prefix: 'echo',
      enabled: true,
      timeoutMs: 60_000,
      concurrency: 8,
      maxQueue: 256,
      withholdAfterMs: 300_000,
      inbandErrors: true,
      protocol: 'auto',
      expose: 'all',
      tools: { include: [], exclude: [], rename: {}, overrides: {} },
      source: { file: path.join(valid, 'minimal.yaml'), line: 3, column: 3 },
    });
  });

  it('C2: servers_dir files load in name order, with the defaults block and their own keys', async () => {
    const config = await load(path.join(valid, 'servers-dir/config.yaml'));
    expect(config.logLevel).toBe('debug');
    expect(config.servers.map((s) => [s.name, s.prefix, s.timeoutMs, s.transport.type])).toEqual([
      ['a-search', 'a-search', 5000, 'sse'],
      ['b-notes', 'notes', 15_000, 'stdio'],
    ]);
    expect(config.servers[1]?.transport).toMatchObject({
      cwd: path.join(valid, 'servers-dir/servers/notes'),
    });
  });

  it('C2: a Claude-Desktop mcpServers file works unchanged; foreign keys are warned about', async () => {
    const result = await loadConfig(path.join(valid, 'claude-desktop.json'), env);
    expect(result.errors).toEqual([]);
    const servers = result.config?.servers ?? [];
    expect(servers.map((s) => [s.name, s.enabled, s.transport.type])).toEqual([
      ['filesystem', true, 'stdio'],
      ['remote', true, 'streamable-http'],
      ['legacy', true, 'sse'],
      ['paused', false, 'stdio'],
    ]);
    expect(servers[2]?.transport).toEqual({ type: 'sse', url: 'http://127.0.0.1:8932/sse', headers: {} });
    expect(result.warnings.map((p) => formatProblem(p, valid))).toEqual([
      'claude-desktop.json:20:7: mcpServers.paused.autoApprove: key "autoApprove" is not used by mcp-normalizer and is ignored',
    ]);
  });
});

describe('config/examples', () => {
  const examples = path.resolve(import.meta.dirname, '../../config/examples');
  it.each(['claude-desktop.json', 'http.yaml', 'servers-dir/config.yaml'])(
    'C1, C2: %s loads',
    async (name) => {
      const config = await load(path.join(examples, name), {
        HOME: '/home/test',
        MCP_NORMALIZER_TOKEN: 'tok-abcdef',
      });
      expect(config.servers.length).toBeGreaterThan(0);
    },
  );

  it('C4: http.yaml takes its port and token from the environment', async () => {
    const config = await load(path.join(examples, 'http.yaml'), {
      MCP_NORMALIZER_PORT: '0',
      MCP_NORMALIZER_TOKEN: 'tok-abcdef',
    });
    expect(config.http).toMatchObject({ port: 0, token: 'tok-abcdef' });
  });
});

describe('loadConfig on inline configs', () => {
  it.each([
    ['http', 'streamable-http'],
    ['streamable-http', 'streamable-http'],
    ['streamableHttp', 'streamable-http'],
    ['sse', 'sse'],
  ])('C2: mcpServers type "%s" maps to transport %s', async (type, transport) => {
    const file = configFile(
      JSON.stringify({ mcpServers: { r: { url: 'http://127.0.0.1:1/mcp', type } } }),
      'mcp.json',
    );
    const config = await load(file);
    expect(config.servers[0]?.transport.type).toBe(transport);
  });

  /** A valid value for each key of our server schema (a new key needs one here: the test says so). */
  const SAMPLES: Record<string, unknown> = {
    command: 'node',
    args: ['server.js'],
    env: { A: 'b' },
    cwd: '/tmp',
    max_message_bytes: 1_048_576,
    url: undefined,
    transport: undefined,
    headers: undefined,
    prefix: 'p',
    enabled: true,
    timeout_ms: 1000,
    startup_timeout_ms: 5000,
    concurrency: 2,
    max_queue: 10,
    withhold_after_ms: 1000,
    health_interval_ms: 2000,
    tools: { include: ['*'] },
    instructions: { timeout: 'Retry once.' },
    inband_errors: false,
    protocol: 'legacy',
    expose: 'read_only',
    client_features: ['elicitation'],
    isolate_callers: true,
    instances: 'per_session',
    max_instances: 4,
    instance_idle_ms: 1000,
  };

  it.each(Object.keys(ServerSchema.shape))(
    'C2/C5: our server key %s in a mcpServers entry is read, never reported as ignored',
    async (key) => {
      expect([...Object.keys(SAMPLES), 'auth'], `add a sample value for "${key}"`).toContain(key);
      const entry =
        SAMPLES[key] === undefined
          ? {
              url: 'http://127.0.0.1:1/mcp',
              ...(key === 'transport' ? { transport: 'sse' } : {}),
              ...(key === 'headers' ? { headers: { A: 'b' } } : {}),
              ...(key === 'auth'
                ? { auth: { type: 'client_credentials', client_id: 'c', client_secret: 's' } }
                : {}),
            }
          : { command: 'node', [key]: SAMPLES[key] };
      const result = await loadConfig(
        configFile(JSON.stringify({ mcpServers: { a: entry } }), 'mcp.json'),
        env,
      );
      expect(result.errors.map((p) => formatProblem(p))).toEqual([]);
      expect(result.warnings.map((p) => formatProblem(p))).toEqual([]);
    },
  );

  it('D1: client_credentials takes client_secret or private_key (with its algorithm), one of the two; both are secrets', async () => {
    const body = (auth: string) =>
      `servers:\n  r:\n    url: https://r.example/mcp\n    auth: { type: client_credentials, client_id: c, ${auth} }\n`;
    const keyed = await load(
      configFile(body('private_key: "-----BEGIN PRIVATE KEY-----x", signing_algorithm: RS256')),
    );
    expect(keyed.servers[0]?.transport).toMatchObject({
      auth: {
        type: 'client_credentials',
        clientId: 'c',
        privateKey: { pem: '-----BEGIN PRIVATE KEY-----x', algorithm: 'RS256' },
      },
    });
    expect(keyed.secrets).toContain('-----BEGIN PRIVATE KEY-----x');
    const defaulted = await load(configFile(body('private_key: k')));
    expect(defaulted.servers[0]?.transport).toMatchObject({ auth: { privateKey: { algorithm: 'ES256' } } });
    for (const auth of ['client_secret: s, private_key: k', 'scopes: [a]']) {
      const result = await loadConfig(configFile(body(auth)), env);
      expect(result.errors.map((p) => formatProblem(p)).join('\n')).toContain(
        'give client_secret (a shared secret) or private_key',
      );
    }
  });

  it.each([
    ['the shorthand auth: oauth', 'auth: oauth', { type: 'oauth' }],
    [
      'a pre-registered client with a fixed callback port',
      'auth: { type: oauth, client_id: cli, client_secret: sec, scopes: [mcp], callback_port: 8765 }',
      { type: 'oauth', clientId: 'cli', clientSecret: 'sec', scopes: ['mcp'], callbackPort: 8765 },
    ],
    [
      'a client metadata document',
      'auth: { type: oauth, client_metadata_url: "https://me.example/client.json" }',
      { type: 'oauth', clientMetadataUrl: 'https://me.example/client.json' },
    ],
  ])(
    'D2: %s is read, its logins kept in the XDG state folder unless token_store says',
    async (_name, auth, expected) => {
      const body = `servers:\n  r:\n    url: https://r.example/mcp\n    ${auth}\n`;
      const xdg = await load(configFile(body), { ...env, XDG_STATE_HOME: '/state' });
      expect(xdg.servers[0]?.transport).toMatchObject({
        auth: { ...expected, tokenStore: '/state/mcp-normalizer/tokens.json' },
      });
      const home = await load(configFile(body));
      expect(home.servers[0]?.transport).toMatchObject({
        auth: { tokenStore: '/home/test/.local/state/mcp-normalizer/tokens.json' },
      });
      const file = configFile(`token_store: logins/t.json\n${body}`);
      const own = await load(file);
      expect(own.servers[0]?.transport).toMatchObject({
        auth: { tokenStore: path.join(path.dirname(file), 'logins', 't.json') },
      });
    },
  );

  it.each([
    [
      'an http client metadata URL',
      'auth: { type: oauth, client_metadata_url: "http://me.example/c.json" }',
      'client_metadata_url',
    ],
    ['a callback port out of range', 'auth: { type: oauth, callback_port: 70000 }', 'callback_port'],
    ['an unknown auth type', 'auth: password', ': expected `oauth`, or an object'],
  ])('D2: %s is a located error', async (_name, auth, key) => {
    const result = await loadConfig(
      configFile(`servers:\n  r:\n    url: https://r.example/mcp\n    ${auth}\n`),
      env,
    );
    // file:line:column: path: message, on the line of the key.
    expect(result.errors.map((p) => formatProblem(p)).join('\n')).toMatch(
      new RegExp(`:4:\\d+: servers\\.r\\.auth\\S*${key}`),
    );
  });

  it('C5: the mcpServers entry that failed check (protocol beside disabled) passes, with protocol applied', async () => {
    const file = configFile(
      '{"mcpServers":{"a":{"command":"node","protocol":"legacy","disabled":true}}}',
      'c.json',
    );
    const result = await loadConfig(file, env);
    // Only the reminder that every server is disabled: no key reported as ignored.
    expect(result.warnings.filter((warning) => warning.ignoredKey === true)).toEqual([]);
    expect(result.config?.servers[0]).toMatchObject({ protocol: 'legacy', enabled: false });
  });

  it('C2: a main file may combine mcpServers with our own top-level keys', async () => {
    const file = configFile(
      'log_level: warn\nmcpServers:\n  a: { command: node }\nservers:\n  b: { command: node }\n',
    );
    const config = await load(file);
    expect(config.logLevel).toBe('warn');
    expect(config.servers.map((s) => s.name)).toEqual(['b', 'a']);
  });

  it.each([
    ['T1: the config prefix wins over MCP_TOOL_PREFIX', 'prefix: cfg\n', { MCP_TOOL_PREFIX: 'env' }, 'cfg'],
    ['T1: MCP_TOOL_PREFIX applies when the config has no prefix', '', { MCP_TOOL_PREFIX: 'env' }, 'env'],
    ['T1: no prefix anywhere means none', '', {}, undefined],
    ['T1: an empty MCP_TOOL_PREFIX means none', '', { MCP_TOOL_PREFIX: '' }, undefined],
  ])('%s', async (_name, head, environment, expected) => {
    const config = await load(configFile(`${head}servers:\n  a: { command: node }\n`), environment);
    expect(config.prefix).toBe(expected);
  });

  it('T1: prefix "" exposes a server unprefixed; other servers keep their key', async () => {
    const config = await load(
      configFile('servers:\n  a: { command: node, prefix: "" }\n  b: { command: node }\n'),
    );
    expect(config.servers.map((s) => s.prefix)).toEqual(['', 'b']);
  });

  it('C6: the defaults block applies unless a server sets its own', async () => {
    const text =
      'defaults: { timeout_ms: 1000, concurrency: 2, max_queue: 0, withhold_after_ms: 5, inband_errors: false }\n' +
      'expose: read_only\nservers:\n  a: { command: node }\n  b: { command: node, timeout_ms: 7, inband_errors: true, expose: all }\n';
    const [a, b] = (await load(configFile(text))).servers;
    expect([
      a?.timeoutMs,
      a?.concurrency,
      a?.maxQueue,
      a?.withholdAfterMs,
      a?.inbandErrors,
      a?.expose,
    ]).toEqual([1000, 2, 0, 5, false, 'read_only']);
    expect([b?.timeoutMs, b?.inbandErrors, b?.expose]).toEqual([7, true, 'all']);
  });

  it('C3/P7: max_message_bytes is a stdio server key, 64 MiB unless set', async () => {
    const text = 'servers:\n  a: { command: node }\n  b: { command: node, max_message_bytes: 1024 }\n';
    const [a, b] = (await load(configFile(text))).servers;
    expect(a?.transport.type === 'stdio' && a.transport.maxMessageBytes).toBe(64 * 1024 * 1024);
    expect(b?.transport.type === 'stdio' && b.transport.maxMessageBytes).toBe(1024);
  });

  it('C4: an interpolated number or boolean is read as one where the schema expects it', async () => {
    // Block style: in a flow map `{ … }` a plain ${VAR} must be quoted (its braces are YAML syntax).
    const text =
      'http:\n  port: ${PORT:-3333}\n  token: ${MCP_NORMALIZER_TOKEN:-}\nservers:\n  a:\n    command: node\n    enabled: ${ON}\n';
    const config = await load(configFile(text), { PORT: '0', ON: 'false' });
    expect(config.http.port).toBe(0);
    expect(config.http.token).toBeUndefined();
    expect(config.servers[0]?.enabled).toBe(false);
  });

  it('C4, L2: an interpolated string that is not a number is a type error that hides the value', async () => {
    const file = configFile('http:\n  port: ${PORT}\nservers:\n  a: { command: node }\n');
    const result = await loadConfig(file, { PORT: 'eighty' });
    expect(result.errors.map((p) => formatProblem(p, path.dirname(file)))).toEqual([
      'config.yaml:2:9: http.port: expected number, got string "[REDACTED]"',
    ]);
  });

  it('C5: warnings do not stop the start: unprefixed twins, overrides before rename, open host', async () => {
    const text =
      'http: { host: 0.0.0.0 }\nservers:\n  a: { command: node, prefix: "" }\n' +
      '  b:\n    command: node\n    prefix: ""\n    tools: { rename: { read_file: read }, overrides: { read_file: { description: x } } }\n';
    const file = configFile(text);
    const result = await loadConfig(file, {});
    expect(result.config).toBeDefined();
    expect(result.warnings.map((p) => formatProblem(p, path.dirname(file)))).toEqual([
      'config.yaml:6:13: servers.b.prefix: servers "a" and "b" both expose their tools unprefixed: tools with the same name are withheld (T4)',
      'config.yaml:7:56: servers.b.tools.overrides.read_file: override "read_file" names the tool before its rename: overrides are keyed by the new name, write "read"',
      'config.yaml:1:15: http.host: serve --http on "0.0.0.0" without "http.token" accepts calls from any host that can reach it: set a token',
    ]);
  });

  it('C5: a missing config file is one problem, not a crash', async () => {
    const result = await loadConfig(path.join(tmpdir(), 'does-not-exist-mcpn.yaml'), {});
    expect(result.config).toBeUndefined();
    expect(result.errors.map((p) => p.message)).toEqual(['cannot read config file: file not found']);
  });

  it('C5: a missing servers_dir is an error at the key', async () => {
    const file = configFile('servers_dir: ./nope\n');
    const result = await loadConfig(file, {});
    expect(result.errors.map((p) => formatProblem(p, path.dirname(file)))).toEqual([
      'config.yaml:1:14: servers_dir: servers_dir "./nope" is not a readable folder: create it or fix the path',
    ]);
  });
});

describe('JSON with comments and empty files', () => {
  it('C2/C5: a JSON config with // and /* */ comments (VS Code mcp.json style) loads; a // inside a string stays', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-normalizer-jsonc-'));
    const file = path.join(dir, 'mcp.json');
    writeFileSync(
      file,
      [
        '{',
        '  // my servers',
        '  "mcpServers": {',
        '    /* the remote one */ "web": { "url": "http://127.0.0.1:9/mcp" },',
        '    "local": { "command": "node", "args": ["a // b"] }',
        '  }',
        '}',
      ].join('\n'),
    );
    const result = await loadConfig(file, {});
    expect(result.errors).toEqual([]);
    const web = result.config?.servers.find((server) => server.name === 'web');
    expect(web?.transport).toMatchObject({ url: 'http://127.0.0.1:9/mcp' });
    const local = result.config?.servers.find((server) => server.name === 'local');
    expect(local?.transport).toMatchObject({ args: ['a // b'] });
  });

  it('C5: a mistake after a comment is still located on its own line and column', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-normalizer-jsonc-'));
    const file = path.join(dir, 'mcp.json');
    writeFileSync(file, ['{', '  // comment', '  "mcpServers": { "a": { "command": 7 } }', '}'].join('\n'));
    const result = await loadConfig(file, {});
    expect(result.errors.map((problem) => [problem.line, problem.column])).toEqual([[3, 37]]);
  });
});

describe('many problems', () => {
  it('C5: 50,000 unknown keys give the first 100 problems, located, and one line for the rest', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-normalizer-many-'));
    const file = path.join(dir, 'config.yaml');
    const lines = ['servers:', '  a:', '    command: node'];
    for (let i = 0; i < 50_000; i++) lines.push(`    junk_${i}: ${i}`);
    writeFileSync(file, lines.join('\n'));
    const result = await loadConfig(file, {});
    expect(result.errors).toHaveLength(101);
    expect(result.errors[0]).toMatchObject({ line: 4, column: 5 });
    expect(result.errors[100]?.message).toMatch(/^and 49900 more problems in this file/);
  });

  it('C5: a key repeated in a large map is still a duplicate-key error at the repeat', async () => {
    const dir = mkdtempSync(path.join(tmpdir(), 'mcp-normalizer-many-'));
    const file = path.join(dir, 'config.yaml');
    const env = Array.from({ length: 5_000 }, (_, i) => `      K${i}: v`);
    writeFileSync(
      file,
      ['servers:', '  a:', '    command: node', '    env:', ...env, '      K7: again'].join('\n'),
    );
    const result = await loadConfig(file, {});
    expect(result.errors.map((problem) => formatProblem(problem, dir))).toEqual([
      `config.yaml:5005:7: YAML syntax error: duplicate key "K7": remove one of them`,
    ]);
  });
});

describe('identity rules in the config', () => {
  it.each([
    [
      'I2: sub: naming a static token',
      "http:\n  auth:\n    tokens: { robot: { token: 'robot-token-0123456789' } }\naccess:\n  - principals: ['sub:robot']\n    allow: ['*']\n",
      '"sub:robot" names the static token "robot": write "token:robot"',
    ],
    [
      'I2: client: naming http.token in admins',
      "http:\n  token: 'http-token-0123456789'\n  auth:\n    issuer: https://idp.example.com\n    admins: ['client:token']\n",
      '"client:token" names the static token "token": write "token:token"',
    ],
    [
      'I3: an access glob that does not compile',
      "access:\n  - principals: ['*']\n    allow: ['c_(']\n",
      'invalid glob pattern "c_("',
    ],
    [
      'I6: a profile glob that does not compile',
      "profiles:\n  p: { tools: ['!x_['] }\n",
      'invalid glob pattern "!x_["',
    ],
    [
      'I7: a rate limit naming a static token as sub:',
      "http:\n  auth:\n    tokens: { alice: { token: 'alice-token-0123456789' } }\nrate_limits:\n  - principals: ['sub:alice']\n    calls: 5\n    per_s: 60\n",
      '"sub:alice" names the static token "alice": write "token:alice"',
    ],
    [
      'I7: a rate limit glob that does not compile',
      "rate_limits:\n  - principals: ['*']\n    tools: ['c_(']\n    calls: 5\n    per_s: 60\n",
      'invalid glob pattern "c_("',
    ],
    [
      'I7: a rate limit window of 0 seconds',
      "rate_limits:\n  - principals: ['*']\n    calls: 5\n    per_s: 0\n",
      'rate_limits[0].per_s: expected a number > 0, got number 0',
    ],
    [
      'I3: an access resources glob that does not compile',
      "access:\n  - principals: ['*']\n    allow: ['*']\n    resources: ['files+[']\n",
      'invalid glob pattern "files+["',
    ],
  ])('%s is a located error', async (_label, text, message) => {
    const file = configFile(`${text}servers:\n  c: { command: node, args: [x.js] }\n`);
    const result = await loadConfig(file, env);
    const problems = result.errors.map((problem) => formatProblem(problem));
    expect(problems).toEqual([expect.stringContaining(message)]);
    expect(problems[0]).toMatch(/config\.yaml:\d+:\d+/);
  });
});

describe('principals in rate limits', () => {
  it('I7: anonymous is a principal a rate limit (and an access rule) may name', async () => {
    const file = configFile(
      "rate_limits:\n  - principals: ['anonymous']\n    calls: 5\n    per_s: 60\naccess:\n  - principals: ['anonymous']\n    allow: ['*']\nservers:\n  c: { command: node, args: [x.js] }\n",
    );
    const result = await loadConfig(file, env);
    expect(result.errors).toEqual([]);
    expect(result.config?.rateLimits?.[0]?.principals).toEqual(['anonymous']);
  });
});
