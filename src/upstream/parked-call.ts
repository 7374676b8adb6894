/**
 * One tools/call whose downstream may push requests while it runs (Q1, Q3), as input-rounds.ts
 * parks it between the host's rounds: the pushed requests it waits on, the step it is at, and
 * the signal and progress sink of the request that serves it now.
 */
import { randomUUID } from 'node:crypto';
import { ProtocolError } from '@modelcontextprotocol/server';
import type { CallToolResult } from '@modelcontextprotocol/server';
import type { CallSignal } from '../core/call-signal.js';
import type { ClientAsk, InputRound } from '../core/input.js';
import { failure, type FailureResult } from '../core/result.js';

/** A progress sink of the request currently serving a call (rounds change requests). */
export type ProgressSink =
  ((update: { progress: number; total?: number; message?: string }) => void) | undefined;

interface Pending {
  readonly key: string;
  readonly ask: ClientAsk;
  readonly resolve: (answer: Record<string, unknown>) => void;
  readonly reject: (reason: Error) => void;
}

type Step =
  | { readonly done: CallToolResult | InputRound }
  | { readonly asks: readonly Pending[] }
  | { readonly refused: ProtocolError };

/**
 * A call whose downstream may push requests while it runs (Q1, Q3). Cheap while nothing is
 * pushed (every call has one): one promise per step, no controller, no listener. The downstream
 * call runs under the first request's own signal; once the call is parked, a later request's
 * cancellation (or the round timeout) fails the pushed requests it waits on, and the server ends
 * its call on that refusal, within its own `timeout_ms` at the latest.
 */
export class Parked {
  #id: string | undefined;
  rounds = 0;
  progress: ProgressSink;
  timer: NodeJS.Timeout | undefined;
  #done: { readonly value: CallToolResult | InputRound } | { readonly refused: ProtocolError } | undefined;
  #asked = 0;
  #pending: Pending[] = [];
  #sent: Pending[] = [];
  #step: ((step: Step) => void) | undefined;
  #batching = false;
  #unlink: (() => void) | undefined;
  #abandoned: string | undefined;

  /**
   * For a 2026 request, whose own signal the SDK aborts once its answer is sent (a modern HTTP
   * response stream closes): the downstream call runs under this instead, linked to the request
   * serving the call now. 2025 requests keep their signal for the whole call.
   */
  detached: AbortController | undefined;

  /**
   * The downstream call runs; its end is the last step. It never rejects; if it did, the call ends
   * as `normalization_error`, answered by `fail` like every other failure (R2, R3).
   */
  run(outcome: Promise<CallToolResult | InputRound>, fail: (result: FailureResult) => CallToolResult): void {
    const end = (value: CallToolResult | InputRound): void => {
      this.#done = { value };
      this.#take({ done: value });
    };
    outcome.then(end, (error: unknown) => {
      // A protocol error meant for the caller (SEP-2575's -32021) is its answer, as thrown.
      if (error instanceof ProtocolError) {
        this.#done = { refused: error };
        this.#take({ refused: error });
        return;
      }
      end(
        fail(
          failure('normalization_error', 'mcp-normalizer failed to answer the call', { exception: error }),
        ),
      );
    });
  }

  /** True once the call was parked (it has an id). */
  get named(): boolean {
    return this.#id !== undefined;
  }

  /** Made when the call is first parked (most calls never are). */
  get id(): string {
    this.#id ??= randomUUID();
    return this.#id;
  }

  ask(ask: ClientAsk): Promise<Record<string, unknown>> {
    // An abandoned call's server gets its refusal at once, not at its own request timeout.
    if (this.#abandoned !== undefined) return Promise.reject(new Error(this.#abandoned));
    return new Promise((resolve, reject) => {
      this.#pending.push({ key: `ask_${++this.#asked}`, ask, resolve, reject });
      if (this.#batching) return;
      // Requests pushed in the same moment travel in one round.
      this.#batching = true;
      setImmediate(() => {
        this.#batching = false;
        if (this.#pending.length > 0 && this.#step !== undefined) this.#take(this.#round());
      });
    });
  }

  /** The call's end, or the next requests for the host. */
  next(): Promise<Step> {
    if (this.#pending.length > 0 && !this.#batching) return Promise.resolve(this.#round());
    if (this.#done !== undefined && this.#pending.length === 0)
      return Promise.resolve('refused' in this.#done ? this.#done : { done: this.#done.value });
    return new Promise((resolve) => (this.#step = resolve));
  }

  #round(): Step {
    const asks = this.#pending;
    this.#pending = [];
    this.#sent = asks;
    return { asks };
  }

  #take(step: Step): void {
    const waiting = this.#step;
    this.#step = undefined;
    waiting?.(step);
  }

  /** The host's answers to the last round; a request it left unanswered fails. */
  deliver(responses: Record<string, unknown>): void {
    for (const sent of this.#sent) {
      const answer = responses[sent.key];
      if (typeof answer === 'object' && answer !== null) sent.resolve(answer as Record<string, unknown>);
      else sent.reject(new Error(`the client sent no answer to ${sent.ask.method}`));
    }
    this.#sent = [];
  }

  /** A later request serves the parked call now: its cancellation abandons the call. */
  link(signal: CallSignal, progress: ProgressSink): void {
    this.#unlink?.();
    this.progress = progress;
    const abort = (): void => {
      this.detached?.abort(signal.reason);
      this.abandon('the client cancelled the call');
    };
    if (signal.aborted) abort();
    signal.addEventListener('abort', abort, { once: true });
    this.#unlink = () => signal.removeEventListener('abort', abort);
  }

  /** The request answered (a round went out): it no longer speaks for the call. */
  unlink(): void {
    this.#unlink?.();
    this.#unlink = undefined;
    this.progress = undefined;
  }

  /** Ends the call: every open request fails (the server then ends its call). */
  abandon(reason: string): void {
    this.#abandoned ??= reason;
    const error = new Error(reason);
    for (const open of [...this.#sent, ...this.#pending]) open.reject(error);
    this.#sent = [];
    this.#pending = [];
    this.unlink();
    this.detached?.abort(new DOMException(reason, 'AbortError'));
  }
}
