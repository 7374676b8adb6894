/**
 * A tiny typed listener set: what the pool and its connections need from an event emitter
 * (typed events, unsubscribe, a throwing listener cannot break the emitter) and nothing more.
 */

/** Maps an event name to its listener's argument tuple. */
export type EventMap = Record<string, readonly unknown[]>;

/**
 * Typed listeners keyed by event name. A listener that throws is reported to `onListenerError`
 * and the remaining listeners still run: one buggy subscriber must not stop the pool.
 * @example
 * const events = new Emitter<{ toolsChanged: [server: string] }>();
 * const off = events.on('toolsChanged', (server) => rebuild(server));
 */
type AnyListener = (...args: readonly unknown[]) => void;

export class Emitter<Events extends EventMap> {
  readonly #listeners = new Map<keyof Events, Set<AnyListener>>();

  constructor(private readonly onListenerError: (error: unknown) => void = () => {}) {}

  /** Subscribes `listener`; returns a function that unsubscribes it. */
  on<K extends keyof Events>(event: K, listener: (...args: Events[K]) => void): () => void {
    let set = this.#listeners.get(event);
    if (!set) {
      set = new Set();
      this.#listeners.set(event, set);
    }
    const stored = listener as unknown as AnyListener;
    set.add(stored);
    return () => set.delete(stored);
  }

  /** Calls every listener of `event` with `args`, in subscription order. */
  emit<K extends keyof Events>(event: K, ...args: Events[K]): void {
    const set = this.#listeners.get(event);
    if (!set) return;
    for (const listener of [...set]) {
      try {
        listener(...args);
      } catch (error) {
        this.onListenerError(error);
      }
    }
  }
}
