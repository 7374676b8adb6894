/**
 * P4: the requests in flight on one connection, each of which fails at once when the connection
 * is lost or closed, whether or not the SDK's own rejection ever comes: no call can hang on a
 * dead client.
 */

/** What a request does when it ends (see {@link InFlight.run}). */
export interface FlightEnd {
  /** Runs once when the request ends, either way, before its promise settles. */
  readonly ended?: () => void;
  /** What a failed request rejects with instead of `error`; runs before {@link ended}. */
  readonly failed?: (error: unknown) => unknown;
}

export class InFlight {
  readonly #fails = new Set<(error: unknown) => void>();

  /** How many requests are in flight. */
  get size(): number {
    return this.#fails.size;
  }

  /**
   * `start`'s promise, or the error of {@link dropAll} if that comes first; `end`'s hooks run as
   * it ends, in the same reaction (no promise of their own).
   */
  run<T>(start: () => Promise<T>, end: FlightEnd = {}): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (error: unknown): void => {
        if (!this.#fails.delete(fail)) return;
        const thrown = end.failed === undefined ? error : end.failed(error);
        end.ended?.();
        reject(thrown);
      };
      this.#fails.add(fail);
      start().then((value) => {
        if (!this.#fails.delete(fail)) return;
        end.ended?.();
        resolve(value);
      }, fail);
    });
  }

  /** Every request in flight fails with `error` now. */
  dropAll(error: Error): void {
    const fails = [...this.#fails];
    for (const fail of fails) fail(error);
  }
}
