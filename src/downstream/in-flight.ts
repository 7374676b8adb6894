/**
 * P4: the requests in flight on one connection, each of which fails at once when the connection
 * is lost or closed, whether or not the SDK's own rejection ever comes: no call can hang on a
 * dead client.
 */
export class InFlight {
  readonly #fails = new Set<(error: Error) => void>();

  /** How many requests are in flight. */
  get size(): number {
    return this.#fails.size;
  }

  /** `start`'s promise, or the error of {@link dropAll} if that comes first. */
  run<T>(start: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const fail = (error: unknown): void => {
        this.#fails.delete(fail);
        reject(error);
      };
      this.#fails.add(fail);
      start().then((value) => {
        this.#fails.delete(fail);
        resolve(value);
      }, fail);
    });
  }

  /** Every request in flight fails with `error` now. */
  dropAll(error: Error): void {
    const fails = [...this.#fails];
    this.#fails.clear();
    for (const fail of fails) fail(error);
  }
}
