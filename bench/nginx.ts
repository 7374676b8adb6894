/**
 * A real nginx in front of gateway replicas, for the replica tests and `npm run bench:replicas`:
 * writes a config from `deploy/nginx/mcp-normalizer.conf` (the one docs/deployment.md shows)
 * with the replicas' addresses, runs `nginx -c` in the foreground with every path in a temp
 * folder, and stops it. nginx comes from Debian (`npm test` installs it when run as root, as CI is).
 */
import { spawn, spawnSync, type ChildProcess } from 'node:child_process';
import { mkdirSync, mkdtempSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { freePort } from '../fixtures/servers/redis.js';
import { ROOT } from './targets.js';

/** A free TCP port on 127.0.0.1 (closed again: nginx binds it next). */
export { freePort };

/** The nginx binary, or an error that says how to get it. */
export function nginxBinary(): string {
  for (const candidate of ['/usr/sbin/nginx', '/usr/bin/nginx']) {
    if (spawnSync(candidate, ['-v']).status === 0) return candidate;
  }
  throw new Error('nginx is missing: apt-get install -y nginx (as root)');
}

/** One replica as nginx sees it: its session-id tag (`http.replica_id`) and address. */
export interface ReplicaAddress {
  readonly id: string;
  readonly address: string;
}

/**
 * The shipped config with the replicas filled in: the template's example upstreams are replaced
 * by one `server` line per replica (the shared pool) and one `map` line per replica (sessions).
 */
export function nginxConfig(
  replicas: readonly ReplicaAddress[],
  listen: string,
  dir: string,
  accessLog: string,
): string {
  const template = readFileSync(join(ROOT, 'deploy', 'nginx', 'mcp-normalizer.conf'), 'utf8');
  const pool = replicas.map((r) => `    server ${r.address} max_fails=1 fail_timeout=30s;`).join('\n');
  const sessions = replicas.map((r) => `    ~^${r.id}\\. ${r.address};`).join('\n');
  const site = template
    .replace(/# BEGIN POOL[\s\S]*?# END POOL/, `# BEGIN POOL\n${pool}\n    # END POOL`)
    .replace(/# BEGIN SESSIONS[\s\S]*?# END SESSIONS/, `# BEGIN SESSIONS\n${sessions}\n    # END SESSIONS`)
    .replace('listen 127.0.0.1:8080;', `listen ${listen};`);
  return [
    'daemon off;',
    'worker_processes 1;',
    `pid ${join(dir, 'nginx.pid')};`,
    `error_log ${join(dir, 'error.log')} warn;`,
    'events { worker_connections 1024; }',
    'http {',
    `  client_body_temp_path ${join(dir, 'body')};`,
    `  proxy_temp_path ${join(dir, 'proxy')};`,
    `  fastcgi_temp_path ${join(dir, 'fastcgi')};`,
    `  uwsgi_temp_path ${join(dir, 'uwsgi')};`,
    `  scgi_temp_path ${join(dir, 'scgi')};`,
    "  log_format upstream '$upstream_addr $status';",
    `  access_log ${accessLog} upstream;`,
    site,
    '}',
  ].join('\n');
}

/** A running nginx. */
export interface Nginx {
  readonly url: string;
  readonly accessLog: string;
  stop(): Promise<void>;
}

/** Starts nginx in front of `replicas`; resolves once it accepts connections. */
export async function startNginx(replicas: readonly ReplicaAddress[]): Promise<Nginx> {
  const binary = nginxBinary();
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-nginx-'));
  for (const sub of ['body', 'proxy', 'fastcgi', 'uwsgi', 'scgi']) mkdirSync(join(dir, sub));
  const port = await freePort();
  const accessLog = join(dir, 'access.log');
  const file = join(dir, 'nginx.conf');
  writeFileSync(file, nginxConfig(replicas, `127.0.0.1:${port}`, dir, accessLog));
  const check = spawnSync(binary, ['-t', '-q', '-c', file, '-p', dir, '-e', join(dir, 'error.log')]);
  if (check.status !== 0) throw new Error(`nginx -t rejected the config:\n${check.stderr.toString()}`);
  const child: ChildProcess = spawn(binary, ['-c', file, '-p', dir, '-e', join(dir, 'error.log')], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let stderr = '';
  child.stderr?.on('data', (chunk: Buffer) => (stderr += chunk.toString('utf8')));
  const exited = new Promise<void>((resolve) => child.once('exit', () => resolve()));
  const url = `http://127.0.0.1:${port}`;
  for (let attempt = 0; ; attempt++) {
    try {
      await fetch(`${url}/nginx-alive`);
      break;
    } catch {
      if (attempt > 100 || child.exitCode !== null) throw new Error(`nginx did not start: ${stderr}`);
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
  }
  return {
    url,
    accessLog,
    async stop() {
      if (child.exitCode === null) child.kill('SIGQUIT');
      await exited;
    },
  };
}
