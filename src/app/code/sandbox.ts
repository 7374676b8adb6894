/**
 * Issue 59, code mode's sandbox: a snippet (the body of an async function) runs in QuickJS
 * compiled to WebAssembly (`quickjs-emscripten`), a JavaScript engine of its own inside this
 * process, not V8: it has no `require`, no `process`, no file system, no network, no clock
 * beyond `Date`, nothing of the host but the two functions given here. Inside it `tools.<name>(
 * args)` is an async function that asks `bridge` (the gateway's call pipeline, in the caller's
 * name) and returns the result or throws the error (`error_type`, `message`, `instruction`);
 * `console.log` keeps lines for the answer.
 *
 * Why this engine: `node:vm` shares V8's heap and is no security boundary; `isolated-vm` is a
 * native addon (a compiler at install, a V8 version of its own); QuickJS in WebAssembly is pure
 * npm (MIT, ~1 MB of WASM), starts a run in ~20–50 ms, and interrupts execution by itself; its
 * memory is bounded twice (its own limit, and a WebAssembly memory that cannot grow further).
 *
 * Every bound is a {@link SandboxError} with its kind, and the gateway is unharmed: CPU time
 * (the time spent executing the snippet, waits for tools excluded), wall time (waits included),
 * memory, the size of what it returns and logs, the number of tool calls and of calls in flight.
 */
import {
  SandboxError,
  type BridgeAnswer,
  type SandboxLimits,
  type SandboxRun,
  type ToolBridge,
} from './sandbox-types.js';
import {
  newQuickJSWASMModuleFromVariant,
  newVariant,
  RELEASE_SYNC,
  type QuickJSContext,
  type QuickJSHandle,
} from 'quickjs-emscripten';

/** A WebAssembly memory, as the engine's variant takes one. */
type WasmMemory = NonNullable<NonNullable<Parameters<typeof newVariant>[1]>['wasmMemory']>;

/** The WebAssembly memory constructor (the `lib` of this project types the namespace, not its values). */
const WasmMemory = (
  globalThis as unknown as {
    WebAssembly: { Memory: new (descriptor: { initial: number; maximum: number }) => WasmMemory };
  }
).WebAssembly.Memory;

/** A WebAssembly page: 64 KiB. */
const PAGE = 64 * 1024;
/** What the engine needs besides the snippet's heap (its own code and structures). */
const ENGINE_BYTES = 8 * 1024 * 1024;

/**
 * The engine of one run, in a WebAssembly memory of its own that cannot grow past the run's
 * bound: the engine's own limit does not count every allocation (a typed array's bytes are
 * not), and without a cap a snippet grew the process by gigabytes. ~20–50 ms per run.
 */
function engineFor(limits: SandboxLimits) {
  const maximum = Math.ceil((limits.memoryBytes + ENGINE_BYTES) / PAGE);
  const wasmMemory = new WasmMemory({ initial: Math.min(maximum, 256), maximum });
  return newQuickJSWASMModuleFromVariant(newVariant(RELEASE_SYNC, { wasmMemory }));
}

/** The snippet's world: `tools`, `console`, and its body in an async function. */
function program(code: string): string {
  return `"use strict";
const tools = new Proxy({}, { get: (_, name) => typeof name !== 'string' ? undefined : async (args) => {
  const answer = JSON.parse(await __call(name, JSON.stringify(args === undefined ? {} : args)));
  if (answer.ok) return answer.value;
  const error = new Error(answer.error.message);
  error.error_type = answer.error.type;
  if (answer.error.instruction !== undefined) error.instruction = answer.error.instruction;
  throw error;
} });
const console = { log: (...parts) => __log(parts.map((part) => typeof part === 'string' ? part : JSON.stringify(part)).join(' ')) };
console.info = console.warn = console.error = console.log;
(async function () {
${code}
})().then((value) => JSON.stringify(value === undefined ? null : value), (error) => {
  throw error;
});`;
}

/** The message, kind and tool error of what the engine threw. */
function thrown(vm: QuickJSContext, handle: QuickJSHandle, phase: 'compile' | 'run'): SandboxError {
  const dumped = vm.dump(handle) as
    { name?: unknown; message?: unknown; error_type?: unknown; instruction?: unknown } | unknown;
  const error = (typeof dumped === 'object' && dumped !== null ? dumped : { message: String(dumped) }) as {
    name?: unknown;
    message?: unknown;
    error_type?: unknown;
    instruction?: unknown;
  };
  const message = typeof error.message === 'string' ? error.message : String(dumped);
  if (error.name === 'InternalError' && message === 'out of memory')
    return new SandboxError('memory', 'the snippet used more memory than it may');
  if (phase === 'compile' && error.name === 'SyntaxError')
    return new SandboxError('syntax', `the snippet is not valid JavaScript: ${message}`);
  const toolError =
    typeof error.error_type === 'string'
      ? {
          type: error.error_type,
          ...(typeof error.instruction === 'string' ? { instruction: error.instruction } : {}),
        }
      : undefined;
  const name = typeof error.name === 'string' ? error.name : 'Error';
  return new SandboxError('thrown', `the snippet threw ${name}: ${message}`, toolError);
}

/**
 * Runs `code` with `bridge` as its tools, within `limits`.
 * @example const run = await runSnippet('return await tools.echo({ text: "hi" })', bridge, limits);
 */
export async function runSnippet(
  code: string,
  bridge: ToolBridge,
  limits: SandboxLimits,
): Promise<SandboxRun> {
  const quickjs = await engineFor(limits);
  const runtime = quickjs.newRuntime();
  const vm = runtime.newContext();
  const ended = new AbortController();
  const logs: string[] = [];
  let output = 0;
  let calls = 0;
  let inFlight = 0;
  /** The first bound passed; the run stops with it. */
  let stopped: SandboxError | undefined;
  let executing = 0;
  let sliceStart = 0;
  const used = (): number => executing + (sliceStart > 0 ? performance.now() - sliceStart : 0);
  const stop = (error: SandboxError): void => {
    stopped ??= error;
    ended.abort(error);
  };
  /** Runs `work` inside the engine, its time counted against the CPU bound. */
  const inside = <T>(work: () => T): T => {
    sliceStart = performance.now();
    try {
      return work();
    } finally {
      executing += performance.now() - sliceStart;
      sliceStart = 0;
    }
  };
  const pump = (): void => {
    if (ended.signal.aborted) return;
    const jobs = inside(() => runtime.executePendingJobs());
    if (jobs.error !== undefined) {
      stop(thrown(vm, jobs.error, 'run'));
      jobs.error.dispose();
    }
  };
  runtime.setMemoryLimit(limits.memoryBytes);
  runtime.setMaxStackSize(512 * 1024);
  runtime.setInterruptHandler(() => {
    if (used() <= limits.cpuMs && !ended.signal.aborted) return false;
    stop(new SandboxError('cpu', `the snippet ran longer than ${limits.cpuMs} ms of CPU time`));
    return true;
  });
  const keep = (text: string): boolean => {
    output += Buffer.byteLength(text);
    if (output <= limits.outputBytes) return true;
    stop(new SandboxError('output', `the snippet's answer and logs passed ${limits.outputBytes} bytes`));
    return false;
  };
  const log = vm.newFunction('__log', (line) => {
    const text = vm.getString(line);
    if (keep(text)) logs.push(text);
  });
  const call = vm.newFunction('__call', (nameHandle, argsHandle) => {
    const name = vm.getString(nameHandle);
    const deferred = vm.newPromise();
    const refuse = (error: SandboxError): QuickJSHandle => {
      stop(error);
      const message = vm.newString(error.message);
      deferred.reject(message);
      message.dispose();
      return deferred.handle;
    };
    if (++calls > limits.maxCalls)
      return refuse(new SandboxError('calls', `the snippet called more than ${limits.maxCalls} tools`));
    if (inFlight >= limits.maxInFlight)
      return refuse(
        new SandboxError('calls', `the snippet had more than ${limits.maxInFlight} tool calls in flight`),
      );
    inFlight++;
    let args: unknown;
    try {
      args = JSON.parse(vm.getString(argsHandle));
    } catch {
      args = {};
    }
    bridge(name, args, ended.signal)
      .catch((error: unknown): BridgeAnswer => ({
        ok: false,
        error: {
          type: 'normalization_error',
          message: error instanceof Error ? error.message : String(error),
        },
      }))
      .then((answer) => {
        inFlight--;
        if (ended.signal.aborted || !deferred.alive) return;
        const text = JSON.stringify(answer);
        const value = vm.newString(text);
        deferred.resolve(value);
        value.dispose();
        deferred.dispose();
        pump();
      })
      .catch(() => {
        // The run ended meanwhile and the engine is gone: nothing to answer.
      });
    return deferred.handle;
  });
  vm.setProp(vm.global, '__log', log);
  vm.setProp(vm.global, '__call', call);
  log.dispose();
  call.dispose();

  let wall: ReturnType<typeof setTimeout> | undefined;
  try {
    const compiled = inside(() => vm.evalCode(program(code), 'snippet.js'));
    if (compiled.error !== undefined) {
      const error = stopped ?? thrown(vm, compiled.error, 'compile');
      compiled.error.dispose();
      throw error;
    }
    // A bound passed before the first await (a loop, an allocation) rejected the snippet's promise.
    if (stopped !== undefined) {
      compiled.value.dispose();
      throw stopped;
    }
    const settled = vm.resolvePromise(compiled.value);
    compiled.value.dispose();
    pump();
    const outcome = await Promise.race([
      settled,
      new Promise<never>((_resolve, reject) => {
        wall = setTimeout(
          () => reject(new SandboxError('wall', `the snippet ran longer than ${limits.wallMs} ms`)),
          limits.wallMs,
        );
        if (ended.signal.aborted) reject(stopped);
        else ended.signal.addEventListener('abort', () => reject(stopped), { once: true });
      }),
    ]);
    if (outcome.error !== undefined) {
      const error = stopped ?? thrown(vm, outcome.error, 'run');
      outcome.error.dispose();
      throw error;
    }
    const text = vm.getString(outcome.value);
    outcome.value.dispose();
    if (stopped !== undefined) throw stopped;
    if (!keep(text)) throw stopped;
    return { value: JSON.parse(text) as unknown, logs, calls };
  } catch (error) {
    if (error instanceof SandboxError) {
      stop(error);
      throw error;
    }
    throw error;
  } finally {
    clearTimeout(wall);
    ended.abort();
    try {
      vm.dispose();
      runtime.dispose();
    } catch {
      // Handles a tool's late answer still held; the engine's memory goes with the runtime.
    }
  }
}
