/**
 * What the benches that drive the gateway as a real HTTP process share: a config file in the
 * run's scratch folder, `serve --http` on it, a 2025 session, and one raw tools/call.
 */
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';

export const ROOT = join(dirname(fileURLToPath(import.meta.url)), '..', '..');
export const CLI = join(ROOT, 'dist', 'src', 'cli', 'main.js');
/** How long one raw call may take before it counts as unanswered. */
const CALL_TIMEOUT_MS = 60_000;

export const HEADERS: Record<string, string> = {
  'content-type': 'application/json',
  accept: 'application/json, text/event-stream',
};

/** I1: every request of {@link openSession} and {@link postCall} carries this bearer token from now on. */
export function setBearer(token: string): void {
  HEADERS['authorization'] = `Bearer ${token}`;
}

/** `body` written as a config file in a fresh folder; its path. */
export function config(body: string): string {
  const dir = mkdtempSync(join(tmpdir(), 'mcp-normalizer-bench-config-'));
  const file = join(dir, 'config.yaml');
  writeFileSync(file, body);
  return file;
}

/** `serve --http` on `file`: the child, its MCP URL, and its stderr lines so far. */
export async function httpServe(
  file: string,
): Promise<{ child: ChildProcess; url: string; stderr: () => string[] }> {
  const child = spawn(process.execPath, [CLI, 'serve', '--http', '--port', '0', '--config', file], {
    stdio: ['ignore', 'ignore', 'pipe'],
  });
  let text = '';
  let bannerEnd = 0;
  child.stderr?.on('data', (chunk: Buffer) => {
    text += chunk.toString('utf8');
  });
  const url = await new Promise<string>((resolve, reject) => {
    const poll = setInterval(() => {
      const found = /MCP endpoint[^:]*:\s*(http:\/\/\S+\/mcp)/.exec(text)?.[1];
      if (found === undefined) return;
      clearInterval(poll);
      // The banner (one write, read with the URL) is for people; what follows is the log.
      bannerEnd = text.length;
      resolve(found);
    }, 20);
    child.once('exit', () => {
      clearInterval(poll);
      reject(new Error(`serve --http exited: ${text}`));
    });
  });
  return {
    child,
    url,
    stderr: () =>
      text
        .slice(bannerEnd)
        .split('\n')
        .filter((line) => line !== ''),
  };
}

/** A 2025 session on `url`; resolves with its id. */
export async function openSession(url: string): Promise<string> {
  const init = await fetch(url, {
    method: 'POST',
    headers: HEADERS,
    body: JSON.stringify({
      jsonrpc: '2.0',
      id: 0,
      method: 'initialize',
      params: {
        protocolVersion: '2025-06-18',
        capabilities: {},
        clientInfo: { name: 'chaos', version: '1' },
      },
    }),
  });
  await init.text();
  return String(init.headers.get('mcp-session-id'));
}

/** One tools/call in `session`; its JSON-RPC answer, or undefined when none came. */
export async function postCall(
  url: string,
  session: string,
  id: number,
  params: Record<string, unknown>,
): Promise<Record<string, unknown> | undefined> {
  try {
    const res = await fetch(url, {
      method: 'POST',
      headers: { ...HEADERS, 'mcp-session-id': session, 'mcp-protocol-version': '2025-06-18' },
      body: JSON.stringify({ jsonrpc: '2.0', id, method: 'tools/call', params }),
      signal: AbortSignal.timeout(CALL_TIMEOUT_MS),
    });
    const text = await res.text();
    // An SSE answer carries the JSON-RPC message on its `data:` line.
    const json = text.startsWith('{') ? text : (/^data: (.*)$/m.exec(text)?.[1] ?? '');
    return JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
}
