/**
 * docs/deployment.md against the files it shows and the product (U7): the nginx config is the
 * shipped one and nginx accepts it; the Kubernetes manifests parse, their config loads, and the
 * paths their probes use are served by a running replica.
 */
import { spawnSync } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { parseAllDocuments } from 'yaml';
import { loadConfig } from '../../src/config/load.js';
import { serveHttp, writeConfig, fixtureEntry } from '../e2e/cli-process.js';
import { ROOT } from '../helpers/fixtures.js';
import { nginxBinary } from '../../bench/nginx.js';

const doc = readFileSync(join(ROOT, 'docs', 'deployment.md'), 'utf8');
const NGINX = join(ROOT, 'deploy', 'nginx', 'mcp-normalizer.conf');
const KUBERNETES = join(ROOT, 'deploy', 'kubernetes', 'mcp-normalizer.yaml');

function block(language: string): string {
  const found = new RegExp('```' + language + '\\n([\\s\\S]*?)\\n```').exec(doc);
  if (!found?.[1]) throw new Error(`docs/deployment.md has no ${language} block`);
  return `${found[1]}\n`;
}

interface Probe {
  readonly httpGet: { readonly path: string; readonly port: string };
}

describe('docs/deployment.md', () => {
  it('U7: its nginx block is deploy/nginx/mcp-normalizer.conf, and nginx -t accepts it', () => {
    expect(block('nginx')).toBe(readFileSync(NGINX, 'utf8'));
    const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-nginx-t-'));
    for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
    const main = join(dir, 'nginx.conf');
    writeFileSync(
      main,
      [
        `pid ${join(dir, 'nginx.pid')};`,
        'events {}',
        'http {',
        ...['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi'].map(
          (sub) => `  ${sub === 'body' ? 'client_body' : sub}_temp_path ${join(dir, sub)};`,
        ),
        `  include ${NGINX};`,
        '}',
      ].join('\n'),
    );
    const check = spawnSync(nginxBinary(), ['-t', '-c', main, '-p', dir, '-e', join(dir, 'error.log')]);
    expect(check.stderr.toString()).toContain('syntax is ok');
    expect(check.status).toBe(0);
  });

  it('U7, I1: its Kubernetes manifests are deploy/kubernetes/mcp-normalizer.yaml: they parse, the config (with identity and access rules) loads, and the probes point at paths a replica serves', async () => {
    expect(block('yaml')).toBe(readFileSync(KUBERNETES, 'utf8'));
    const documents = parseAllDocuments(readFileSync(KUBERNETES, 'utf8')).map((d) => {
      expect(d.errors).toEqual([]);
      return d.toJS() as { kind: string; data?: Record<string, string>; spec?: unknown };
    });
    expect(documents.map((d) => d.kind)).toEqual([
      'ConfigMap',
      'Secret',
      'Deployment',
      'Service',
      'Deployment',
      'PersistentVolumeClaim',
      'Service',
    ]);

    const file = join(mkdtempSync(join(tmpdir(), 'mcp-normalizer-k8s-')), 'config.yaml');
    writeFileSync(file, documents[0]?.data?.['config.yaml'] ?? '');
    const loaded = await loadConfig(file, {
      MCP_NORMALIZER_TOKEN: 'token',
      MCP_NORMALIZER_STATE_KEY: 'x'.repeat(32),
      HOSTNAME: 'mcp-normalizer-7d9f-abcde',
      MCP_NORMALIZER_REDIS_PASSWORD: 'redis-secret-0123',
    });
    expect(loaded.errors).toEqual([]);
    // I1, I3, I6: the team setup: tokens from the identity provider, rules, a profile.
    expect(loaded.config?.http.auth).toMatchObject({
      issuer: 'https://idp.example.com/realms/eng',
      admins: ['group:sre', 'token:token'],
    });
    expect(loaded.config?.access?.map((rule) => rule.principals)).toEqual([['group:sre'], ['group:dev']]);
    expect(Object.keys(loaded.config?.profiles ?? {})).toEqual(['readers']);
    // Issue 48: the store the replicas share, its password a secret (L2).
    expect(loaded.config?.store?.url).toBe('redis://:redis-secret-0123@mcp-normalizer-redis:6379');
    expect(loaded.config?.secrets).toContain('redis-secret-0123');

    const deployment = documents[2] as {
      spec: {
        template: {
          spec: {
            containers: {
              ports: { name: string }[];
              readinessProbe: Probe;
              livenessProbe: Probe;
              startupProbe: Probe;
            }[];
          };
        };
      };
    };
    const container = deployment.spec.template.spec.containers[0]!;
    const probes = [container.readinessProbe, container.livenessProbe, container.startupProbe];
    expect(probes.map((probe) => probe.httpGet.port)).toEqual(['mcp', 'mcp', 'mcp']);
    expect(container.ports.map((port) => port.name)).toContain('mcp');
    const serve = await serveHttp(
      writeConfig(['http:', '  token: tok', 'servers:', fixtureEntry('echo', 'echo')].join('\n')),
    );
    try {
      for (const probe of probes) {
        // As a kubelet asks: the pod address as Host, no token.
        const url = new URL(probe.httpGet.path, serve.healthUrl);
        const response = await fetch(url, { headers: { host: `10.244.0.7:${url.port}` } });
        expect(response.status, probe.httpGet.path).toBe(200);
      }
    } finally {
      serve.child.kill('SIGKILL');
    }
  });
});
