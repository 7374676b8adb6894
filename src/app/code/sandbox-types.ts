/**
 * M3: what a sandbox run takes and gives, and how it stops: the types and the error of
 * sandbox.ts, apart from the engine, so that the main thread (isolated.ts, run-code.ts) never
 * loads the engine: a run's engine is loaded in its own thread.
 */

/** The bounds of one run. */
export interface SandboxLimits {
  /** Time spent executing the snippet, in ms (waits for tools excluded). */
  readonly cpuMs: number;
  /** The whole run, waits included, in ms. */
  readonly wallMs: number;
  /** The engine's heap, in bytes. */
  readonly memoryBytes: number;
  /** What the snippet returns, as JSON, plus what it logs, in bytes. */
  readonly outputBytes: number;
  /** Tool calls in all. */
  readonly maxCalls: number;
  /** Tool calls in flight at once. */
  readonly maxInFlight: number;
}

/** A tool's answer as the snippet sees it: its result, or its error (the envelope's). */
export type BridgeAnswer =
  | { readonly ok: true; readonly value: unknown }
  | {
      readonly ok: false;
      readonly error: { readonly type: string; readonly message: string; readonly instruction?: string };
    };

/** Calls tool `name` with `args` for the snippet; `signal` aborts when the run ends first. */
export type ToolBridge = (name: string, args: unknown, signal: AbortSignal) => Promise<BridgeAnswer>;

/** What a run gives back. */
export interface SandboxRun {
  /** What the snippet returned (JSON; undefined became null). */
  readonly value: unknown;
  readonly logs: readonly string[];
  readonly calls: number;
}

/** Why a run stopped without a value. */
export type SandboxErrorKind = 'cpu' | 'wall' | 'memory' | 'output' | 'calls' | 'syntax' | 'thrown';

/** A run that stopped: a bound, a syntax error, or what the snippet threw. */
export class SandboxError extends Error {
  override name = 'SandboxError';
  constructor(
    readonly kind: SandboxErrorKind,
    message: string,
    /** The tool error the snippet let through, when that is what it threw. */
    readonly toolError?: { readonly type: string; readonly instruction?: string },
  ) {
    super(message);
  }
}
