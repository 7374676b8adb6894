/**
 * A call's cancellation as the call path uses it (P3): whether it was aborted, why, and abort
 * listeners. An `AbortSignal` is one; {@link LazySignal} is one that costs a plain object until
 * something needs a real `AbortSignal` from it.
 *
 * Why: a 2025 stdio host's plain tools/call (upstream/direct-calls.ts) needs a cancellation of
 * its own, and its downstream request (downstream/request-tap.ts) listens to it. Node's
 * `AbortController` is an `EventTarget` built in JavaScript: one per call, with the tap's
 * listener, was 8–15% of the gateway's CPU per call in a process's first 3,000 calls
 * (docs/performance-log.md). Most calls are never cancelled and never reach code that needs a
 * real signal (the SDK's own requests, p-queue, fetch, a code-mode snippet): those ask
 * {@link abortSignalOf}, which makes one then.
 */

/** What an abort listener may be: a function, or an object with `handleEvent` (as for an `EventTarget`). */
export type AbortListener = ((event: Event) => void) | { handleEvent(event: Event): void };

/** The part of `AbortSignal` the call path uses; every `AbortSignal` is one. */
export interface CallSignal {
  readonly aborted: boolean;
  readonly reason: unknown;
  addEventListener(type: 'abort', listener: AbortListener, options?: { once?: boolean }): void;
  removeEventListener(type: 'abort', listener: AbortListener): void;
}

/**
 * A cancellation that behaves as an `AbortSignal` does for the {@link CallSignal} part: `abort()`
 * once, the reason an `AbortError` `DOMException` when none is given, each listener once, in the
 * order added (a listener added twice counts once; one added after the abort, or removed by an
 * earlier listener, never runs), and a listener's throw reported as uncaught without stopping the
 * others. {@link toAbortSignal} makes
 * the real signal on first use, aborted with the same reason.
 * @example
 * const cancel = new LazySignal();
 * cancel.addEventListener('abort', () => request.cancel(cancel.reason));
 * cancel.abort('the client cancelled'); // the listener runs once
 */
export class LazySignal implements CallSignal {
  #aborted = false;
  #reason: unknown = undefined;
  /** Most calls get exactly one listener (the downstream request's): no array for it. */
  #listener: AbortListener | undefined;
  #more: AbortListener[] | undefined;
  #controller: AbortController | undefined;

  get aborted(): boolean {
    return this.#aborted;
  }

  get reason(): unknown {
    return this.#reason;
  }

  addEventListener(type: 'abort', listener: AbortListener): void {
    if (type !== 'abort' || this.#aborted || this.#has(listener)) return;
    if (this.#listener === undefined && this.#more === undefined) this.#listener = listener;
    else (this.#more ??= []).push(listener);
  }

  removeEventListener(type: 'abort', listener: AbortListener): void {
    if (type === 'abort') this.#remove(listener);
  }

  #remove(listener: AbortListener): void {
    if (this.#listener === listener) {
      this.#listener = undefined;
      return;
    }
    const at = this.#more?.indexOf(listener) ?? -1;
    if (at >= 0) this.#more!.splice(at, 1);
  }

  /** Aborts once: the real signal (if made) first, then the listeners in order. */
  abort(reason?: unknown): void {
    if (this.#aborted) return;
    this.#aborted = true;
    this.#reason =
      reason === undefined ? new DOMException('This operation was aborted', 'AbortError') : reason;
    this.#controller?.abort(this.#reason);
    const listeners = [...(this.#listener !== undefined ? [this.#listener] : []), ...(this.#more ?? [])];
    if (listeners.length === 0) return;
    const event = new Event('abort');
    for (const listener of listeners) {
      // One removed by a listener before it does not run, as with an EventTarget.
      if (!this.#has(listener)) continue;
      this.#remove(listener);
      try {
        if (typeof listener === 'function') listener.call(this, event);
        else listener.handleEvent(event);
      } catch (error) {
        // As an EventTarget does: the others still run; the throw surfaces as uncaught.
        queueMicrotask(() => {
          throw error;
        });
      }
    }
  }

  #has(listener: AbortListener): boolean {
    return this.#listener === listener || this.#more?.includes(listener) === true;
  }

  /** The real `AbortSignal`, made now if it was not yet (aborted already when this was). */
  toAbortSignal(): AbortSignal {
    if (this.#controller === undefined) {
      this.#controller = new AbortController();
      if (this.#aborted) this.#controller.abort(this.#reason);
    }
    return this.#controller.signal;
  }
}

/** `signal` as a real `AbortSignal`, for code that needs one (the SDK, p-queue, fetch). */
export function abortSignalOf(signal: CallSignal): AbortSignal;
export function abortSignalOf(signal: CallSignal | undefined): AbortSignal | undefined;
export function abortSignalOf(signal: CallSignal | undefined): AbortSignal | undefined {
  return signal instanceof LazySignal ? signal.toAbortSignal() : (signal as AbortSignal | undefined);
}
