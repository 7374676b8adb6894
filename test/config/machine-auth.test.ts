/**
 * D5, D6, D7: the machine grants of a remote server's `auth:` as written and as the transport
 * reads them: a workload identity (`jwt_bearer`), enterprise-managed authorization (`id_jag`),
 * and `dpop` on each grant; what a wrong entry is told, and which values are secrets.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { describe, expect, it } from 'vitest';
import { formatProblem, loadConfig } from '../../src/config/load.js';

const env = { HOME: '/home/test', IDP_SECRET: 'idp-secret-0123456789' };

function configFile(auth: string): string {
  const dir = mkdtempSync(path.join(tmpdir(), 'mcpn-machine-auth-'));
  const file = path.join(dir, 'config.yaml');
  writeFileSync(file, `servers:\n  r:\n    url: https://r.example/mcp\n    auth: ${auth}\n`);
  return file;
}

async function read(auth: string) {
  const file = configFile(auth);
  const result = await loadConfig(file, env);
  return {
    folder: path.dirname(file),
    errors: result.errors.map((problem) => formatProblem(problem)).join('\n'),
    auth: (result.config?.servers[0]?.transport as { auth?: unknown } | undefined)?.auth,
    secrets: result.config?.secrets ?? [],
  };
}

describe('machine grants in the config', () => {
  it('D5: jwt_bearer reads its workload JWT from a file (relative to the config) or a variable, with dpop', async () => {
    const file = await read('{ type: jwt_bearer, assertion_file: token.jwt, client_id: w, dpop: true }');
    expect(file.errors).toBe('');
    expect(file.auth).toEqual({
      type: 'jwt_bearer',
      assertion: { file: path.join(file.folder, 'token.jwt') },
      clientId: 'w',
      dpop: true,
    });
    const variable = await read('{ type: jwt_bearer, assertion_env: WORKLOAD_TOKEN, scopes: [mcp] }');
    expect(variable.auth).toEqual({
      type: 'jwt_bearer',
      assertion: { env: 'WORKLOAD_TOKEN' },
      scopes: ['mcp'],
    });
  });

  it('D6: id_jag names its IdP (token endpoint or issuer), the ID token and the client; both secrets are scrubbed', async () => {
    const { errors, auth, secrets } = await read(
      '{ type: id_jag, idp: { token_endpoint: "https://idp.example/token", client_id: gw, client_secret: "${IDP_SECRET}" }, id_token_env: USER_ID_TOKEN, client_id: mcp-client, client_secret: as-secret-0123456789 }',
    );
    expect(errors).toBe('');
    expect(auth).toEqual({
      type: 'id_jag',
      idp: { tokenEndpoint: 'https://idp.example/token', clientId: 'gw', clientSecret: env.IDP_SECRET },
      idToken: { env: 'USER_ID_TOKEN' },
      clientId: 'mcp-client',
      clientSecret: 'as-secret-0123456789',
    });
    expect(secrets).toEqual(expect.arrayContaining([env.IDP_SECRET, 'as-secret-0123456789']));
  });

  it('D7: dpop is a boolean on client_credentials and oauth too', async () => {
    const machine = await read('{ type: client_credentials, client_id: c, client_secret: s, dpop: true }');
    expect(machine.auth).toMatchObject({ type: 'client_credentials', dpop: true });
    const person = await read('{ type: oauth, dpop: true }');
    expect(person.auth).toMatchObject({ type: 'oauth', dpop: true });
    expect((await read('{ type: oauth, dpop: yes please }')).errors).toContain('dpop');
  });

  it.each([
    [
      'jwt_bearer without a token',
      '{ type: jwt_bearer }',
      'give assertion_file or assertion_env, one of the two',
    ],
    [
      'jwt_bearer with both sources',
      '{ type: jwt_bearer, assertion_file: a, assertion_env: B }',
      'give assertion_file or assertion_env, one of the two',
    ],
    [
      'a variable name that is none',
      '{ type: jwt_bearer, assertion_env: "not a name" }',
      'expected an environment variable name',
    ],
    [
      'id_jag without its IdP endpoint',
      '{ type: id_jag, idp: { client_id: gw }, id_token_file: t, client_id: c, client_secret: s }',
      'give token_endpoint or issuer, one of the two',
    ],
    [
      'id_jag without an ID token',
      '{ type: id_jag, idp: { issuer: "https://idp.example" , client_id: gw }, client_id: c, client_secret: s }',
      'give id_token_file or id_token_env, one of the two',
    ],
    [
      'id_jag without its client',
      '{ type: id_jag, idp: { issuer: "https://idp.example", client_id: gw }, id_token_file: t }',
      'client_id',
    ],
    ['a grant that does not exist', '{ type: saml }', 'jwt_bearer'],
  ])('D5/D6: %s is a located error', async (_name, auth, expected) => {
    const { errors } = await read(auth);
    expect(errors).toContain(expected);
    expect(errors).toMatch(/servers\.r\.auth|config\.yaml/);
  });
});
