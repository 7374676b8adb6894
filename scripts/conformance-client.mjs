#!/usr/bin/env node
/**
 * The client role of the MCP conformance suite, played by mcp-normalizer's own CLI (issue 30):
 * the suite starts this with the scenario's server URL appended and MCP_CONFORMANCE_SCENARIO,
 * MCP_CONFORMANCE_PROTOCOL_VERSION and (for some scenarios) MCP_CONFORMANCE_CONTEXT set. It
 * writes a config with that server, logs in when the scenario is an auth one (`login
 * --no-browser`, with a scripted browser that follows the authorization server's redirects back
 * to the command's loopback listener), then makes the calls the scenario names (its context's
 * `toolCalls`), else lists the tools (`tools --json`) and calls each (`call --elicit accept`)
 * with arguments made from its schema. Everything it runs is the product's CLI; its
 * own output goes to stderr for the suite's record.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..');
const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
const url = process.argv.at(-1);
const scenario = process.env.MCP_CONFORMANCE_SCENARIO ?? '';
const version = process.env.MCP_CONFORMANCE_PROTOCOL_VERSION ?? '2026-07-28';
const context = JSON.parse(process.env.MCP_CONFORMANCE_CONTEXT || '{}');
const CIMD_URL = 'https://conformance-test.local/client-metadata.json';
const say = (text) => process.stderr.write(`[conformance-client] ${text}\n`);
const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-conformance-client-'));

/** A token the scenario hands over, written to a file of its own (the config reads it from there). */
function tokenFile(name, token) {
  const file = join(dir, name);
  writeFileSync(file, `${token}\n`, { mode: 0o600 });
  return file;
}

/** Scenarios whose token comes without a person's login (a machine grant). */
const MACHINE = ['auth/client-credentials', 'auth/wif-jwt-bearer', 'auth/enterprise-managed-authorization'];
const machine = MACHINE.some((prefix) => scenario.startsWith(prefix));

/** The `auth` of the server for this scenario (YAML lines), or none. */
function authLines() {
  if (!scenario.startsWith('auth/')) return [];
  if (scenario === 'auth/wif-jwt-bearer') {
    // D5: the workload's JWT, as a platform would mount it.
    return [
      '    auth:',
      '      type: jwt_bearer',
      `      assertion_file: ${JSON.stringify(tokenFile('workload.jwt', context.valid_jwt ?? ''))}`,
      ...(context.client_id !== undefined ? [`      client_id: ${JSON.stringify(context.client_id)}`] : []),
    ];
  }
  if (scenario === 'auth/enterprise-managed-authorization') {
    // D6: the user's ID token from the enterprise IdP, exchanged there for an ID-JAG.
    return [
      '    auth:',
      '      type: id_jag',
      '      idp:',
      `        token_endpoint: ${JSON.stringify(context.idp_token_endpoint ?? '')}`,
      `        client_id: ${JSON.stringify(context.idp_client_id ?? '')}`,
      `      id_token_file: ${JSON.stringify(tokenFile('id.jwt', context.idp_id_token ?? ''))}`,
      `      client_id: ${JSON.stringify(context.client_id ?? '')}`,
      `      client_secret: ${JSON.stringify(context.client_secret ?? '')}`,
    ];
  }
  if (scenario.startsWith('auth/client-credentials')) {
    return [
      '    auth:',
      '      type: client_credentials',
      `      client_id: ${JSON.stringify(context.client_id ?? '')}`,
      ...(context.private_key_pem !== undefined
        ? [
            `      private_key: ${JSON.stringify(context.private_key_pem)}`,
            `      signing_algorithm: ${JSON.stringify(context.signing_algorithm ?? 'ES256')}`,
          ]
        : [`      client_secret: ${JSON.stringify(context.client_secret ?? '')}`]),
    ];
  }
  const lines = ['    auth:', '      type: oauth'];
  // D7: the DPoP scenarios' servers want sender-constrained tokens.
  if (scenario.startsWith('auth/dpop')) lines.push('      dpop: true');
  if (context.client_id !== undefined) lines.push(`      client_id: ${JSON.stringify(context.client_id)}`);
  if (context.client_secret !== undefined)
    lines.push(`      client_secret: ${JSON.stringify(context.client_secret)}`);
  // The suite's authorization servers that support Client ID Metadata Documents expect this one
  // (the reference clients are configured with it); the others are met by dynamic registration.
  if (context.client_id === undefined) lines.push(`      client_metadata_url: ${JSON.stringify(CIMD_URL)}`);
  return lines;
}

const config = join(dir, 'config.yaml');
writeFileSync(
  config,
  [
    'log_level: warn',
    'token_store: tokens.json',
    'servers:',
    '  s:',
    `    url: ${JSON.stringify(url)}`,
    '    prefix: ""',
    `    protocol: ${version === '2026-07-28' ? '"2026-07-28"' : 'legacy'}`,
    // Questions a tool asks reach `call`, which accepts them (`--elicit accept`: each field's default).
    '    client_features: [elicitation]',
    ...authLines(),
    '',
  ].join('\n'),
);

/** Runs the CLI with `args`; resolves with its exit code and output. */
function cli(args, onStderr) {
  return new Promise((resolve) => {
    const child = spawn(process.execPath, [CLI, ...args, '--config', config], {
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (chunk) => (stdout += chunk));
    child.stderr.setEncoding('utf8').on('data', (chunk) => {
      stderr += chunk;
      process.stderr.write(chunk);
      onStderr?.(stderr);
    });
    child.on('exit', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The scripted browser: follows the authorization server's redirects until the login's listener answers. */
async function browse(start) {
  let next = start;
  for (let hop = 0; hop < 10; hop++) {
    const response = await fetch(next, { redirect: 'manual' });
    const location = response.headers.get('location');
    say(`browser: GET ${next.split('?')[0]} -> ${response.status}`);
    if (location === null) return;
    next = new URL(location, next).href;
  }
}

async function login() {
  let browsing;
  const done = await cli(['login', 's', '--no-browser', '--timeout', '30'], (stderr) => {
    const found = /^\s+(https?:\/\/\S+)$/m.exec(stderr)?.[1];
    if (found !== undefined && browsing === undefined)
      browsing = browse(found).catch((e) => say(`browser: ${e}`));
  });
  await browsing;
  return done;
}

/** Arguments for a tool from its input schema: a value of each property's type. */
function argumentsFor(schema) {
  const values = { number: 1, integer: 1, string: 'test', boolean: true, object: {}, array: [] };
  const args = {};
  for (const [name, property] of Object.entries(schema?.properties ?? {})) {
    const type = Array.isArray(property?.type) ? property.type[0] : property?.type;
    args[name] = values[type] ?? 'test';
  }
  return args;
}

/** One call through the CLI; a step-up (D2) that asks for a new login gets it, then the call again. */
async function call(name, args) {
  const called = await cli(['call', name, '--args', JSON.stringify(args), '--elicit', 'accept']);
  say(
    `call ${name}: exit ${called.code}${called.code === 0 ? '' : `: ${called.stdout.replace(/\s+/g, ' ').slice(0, 400)}`}`,
  );
  if (/needs a new login/.test(called.stderr + called.stdout)) {
    await login();
    await cli(['call', name, '--args', JSON.stringify(args), '--elicit', 'accept']);
  }
}

async function callEverything() {
  // The Skills host scenarios (SEP-2640): list the skills, then (to verify) load each as a host
  // does, its SKILL.md checked before any other file is read.
  if (scenario.startsWith('sep-2640-client-')) {
    const verify = scenario !== 'sep-2640-client-no-prefetch';
    const listed = await cli(['skills', '--json', ...(verify ? ['--verify'] : [])]);
    say(`skills${verify ? ' --verify' : ''}: exit ${listed.code}`);
    return;
  }
  // A scenario that says which calls to make (MCP_CONFORMANCE_CONTEXT.toolCalls) gets those.
  if (Array.isArray(context.toolCalls)) {
    for (const { name, arguments: args } of context.toolCalls) await call(name, args ?? {});
    return;
  }
  const listed = await cli(['tools', '--json']);
  let tools = [];
  try {
    tools = JSON.parse(listed.stdout);
  } catch {
    say(`tools --json gave no list (exit ${listed.code})`);
  }
  for (const tool of Array.isArray(tools) ? tools : (tools.tools ?? []))
    await call(tool.name, argumentsFor(tool.inputSchema));
}

if (scenario.startsWith('auth/') && !machine) {
  const result = await login();
  say(`login: exit ${result.code}`);
}
await callEverything();
