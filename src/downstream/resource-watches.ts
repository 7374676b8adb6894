/**
 * Q5 toward a 2026-07-28 downstream: the era has no `resources/subscribe`; a client asks for a
 * resource's updates on a `subscriptions/listen` stream (`resourceSubscriptions`). One stream per
 * subscribed URI, opened by the subscribe and closed by the unsubscribe, so each maps one to one
 * onto a 2025 client's request. Its `notifications/resources/updated` reach the client's
 * notification handler like a 2025 server's.
 */
import type { Client } from '@modelcontextprotocol/client';

type Subscription = Awaited<ReturnType<Client['listen']>>;

/** The listen streams of one downstream client, by resource URI. */
export class ResourceWatches {
  readonly #streams = new Map<string, Subscription>();

  /** `resources/subscribe` or `resources/unsubscribe` of `uri`, as a listen stream. */
  async apply(
    client: Client,
    method: 'resources/subscribe' | 'resources/unsubscribe',
    uri: string,
  ): Promise<object> {
    const open = this.#streams.get(uri);
    if (method === 'resources/unsubscribe') {
      this.#streams.delete(uri);
      await open?.close();
      return {};
    }
    if (open !== undefined) return {};
    const stream = await client.listen({ resourceSubscriptions: [uri] });
    if (stream.honoredFilter.resourceSubscriptions?.includes(uri) !== true) {
      await stream.close();
      throw new Error(`The server does not offer updates of ${uri} (no resources.subscribe)`);
    }
    this.#streams.set(uri, stream);
    void stream.closed.then(() => {
      if (this.#streams.get(uri) === stream) this.#streams.delete(uri);
    });
    return {};
  }

  /** The client went away: its streams went with it. */
  clear(): void {
    this.#streams.clear();
  }
}
