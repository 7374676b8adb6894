/**
 * M3: a run in a thread of its own (sandbox-thread.ts), one per run: while the snippet executes,
 * the gateway's event loop serves everyone else, and a thread that does not finish in time is
 * terminated whatever it is doing. Its tool calls arrive here and go to `bridge` (the call
 * pipeline); their answers go back. Run from the TypeScript sources (the unit tests), where no
 * compiled thread file exists, the run executes in this thread instead.
 */
import { Worker } from 'node:worker_threads';
import {
  SandboxError,
  type BridgeAnswer,
  type SandboxErrorKind,
  type SandboxLimits,
  type SandboxRun,
  type ToolBridge,
} from './sandbox-types.js';

/** The thread's compiled file, next to this one; none when running from the sources. */
function threadFile(): URL | undefined {
  return import.meta.url.endsWith('.js') ? new URL('./sandbox-thread.js', import.meta.url) : undefined;
}

/** What the thread says. */
type Message =
  | { readonly kind: 'call'; readonly id: number; readonly name: string; readonly args: unknown }
  | { readonly kind: 'done'; readonly run: SandboxRun }
  | {
      readonly kind: 'stopped';
      readonly error: {
        readonly kind: SandboxErrorKind;
        readonly message: string;
        readonly toolError?: { readonly type: string; readonly instruction?: string };
      };
    }
  | { readonly kind: 'failed'; readonly message: string };

/** How long past its wall bound a thread is given to stop by itself before it is terminated. */
const GRACE_MS = 1000;

/**
 * Runs `code` as {@link runSnippet} does, in a thread of its own; `signal` (the caller going
 * away) ends it early.
 * @example const run = await runIsolated(code, bridge, CODE_LIMITS, extra.signal);
 */
export function runIsolated(
  code: string,
  bridge: ToolBridge,
  limits: SandboxLimits,
  signal: AbortSignal,
): Promise<SandboxRun> {
  const file = threadFile();
  // From the sources (the unit tests) the engine is loaded here, when first needed.
  if (file === undefined)
    return import('./sandbox.js').then(({ runSnippet }) => runSnippet(code, bridge, limits));
  return new Promise((resolve, reject) => {
    const worker = new Worker(file);
    const ended = new AbortController();
    let settled = false;
    const finish = (settle: () => void): void => {
      if (settled) return;
      settled = true;
      clearTimeout(timer);
      signal.removeEventListener('abort', cancel);
      ended.abort();
      void worker.terminate();
      settle();
    };
    const timer = setTimeout(
      () => finish(() => reject(new SandboxError('wall', `the snippet ran longer than ${limits.wallMs} ms`))),
      limits.wallMs + GRACE_MS,
    );
    const cancel = (): void => finish(() => reject(new SandboxError('wall', 'the call was cancelled')));
    if (signal.aborted) cancel();
    else signal.addEventListener('abort', cancel, { once: true });
    const answer = (id: number, value: BridgeAnswer): void => {
      if (!settled) worker.postMessage({ kind: 'answer', id, answer: value });
    };
    worker.on('message', (message: Message) => {
      switch (message.kind) {
        case 'call':
          bridge(message.name, message.args, ended.signal).then(
            (value) => answer(message.id, value),
            (error: unknown) =>
              answer(message.id, {
                ok: false,
                error: {
                  type: 'normalization_error',
                  message: error instanceof Error ? error.message : String(error),
                },
              }),
          );
          return;
        case 'done':
          return finish(() => resolve(message.run));
        case 'stopped':
          return finish(() =>
            reject(new SandboxError(message.error.kind, message.error.message, message.error.toolError)),
          );
        case 'failed':
          return finish(() => reject(new Error(message.message)));
      }
    });
    worker.on('error', (error) => finish(() => reject(error)));
    worker.on('exit', () =>
      finish(() => reject(new SandboxError('memory', "the snippet's thread ended before the snippet"))),
    );
    worker.postMessage({ kind: 'run', code, limits });
  });
}
