/**
 * M3: the sandbox's thread. A run executes here, off the gateway's event loop, so a snippet
 * that computes (up to its CPU bound) holds up nobody else's calls; its tool calls come back to
 * the main thread, which sends them through the call pipeline (isolated.ts). Messages on one port:
 * - in: `{ kind: 'run', code, limits }` once, then `{ kind: 'answer', id, answer }` per tool call;
 * - out: `{ kind: 'call', id, name, args }` per tool call, then `{ kind: 'done', run }`,
 *   `{ kind: 'stopped', error }` (a SandboxError's kind, message and tool error) or
 *   `{ kind: 'failed', message }`.
 */
import { parentPort } from 'node:worker_threads';
import { runSnippet } from './sandbox.js';
import { SandboxError, type BridgeAnswer, type SandboxLimits } from './sandbox-types.js';

type Request =
  | { readonly kind: 'run'; readonly code: string; readonly limits: SandboxLimits }
  | { readonly kind: 'answer'; readonly id: number; readonly answer: BridgeAnswer };

const waiting = new Map<number, (answer: BridgeAnswer) => void>();
let nextId = 0;

function bridge(name: string, args: unknown, signal: AbortSignal): Promise<BridgeAnswer> {
  return new Promise((resolve) => {
    const id = nextId++;
    waiting.set(id, resolve);
    signal.addEventListener('abort', () => waiting.delete(id), { once: true });
    parentPort?.postMessage({ kind: 'call', id, name, args });
  });
}

parentPort?.on('message', (request: Request) => {
  if (request.kind === 'answer') {
    waiting.get(request.id)?.(request.answer);
    waiting.delete(request.id);
    return;
  }
  runSnippet(request.code, bridge, request.limits).then(
    (run) => parentPort?.postMessage({ kind: 'done', run }),
    (error: unknown) =>
      parentPort?.postMessage(
        error instanceof SandboxError
          ? {
              kind: 'stopped',
              error: { kind: error.kind, message: error.message, toolError: error.toolError },
            }
          : { kind: 'failed', message: error instanceof Error ? error.message : String(error) },
      ),
  );
});
