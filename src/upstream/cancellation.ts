/** P3: the upstream request's cancellation, as every routed call sees it. */

/**
 * P3: the upstream's cancellation as a signal whose reason is always an `AbortError`. The SDK
 * aborts a handler's signal with the client's free-text `reason` (e.g. the string "stop"), and a
 * downstream request rejects with that raw reason, which would not read as a cancellation.
 */
export function cancellationSignal(upstream: AbortSignal): AbortSignal {
  const controller = new AbortController();
  const forward = (): void => {
    const reason: unknown = upstream.reason;
    const text =
      reason instanceof Error ? reason.message : typeof reason === 'string' ? reason : 'no reason given';
    controller.abort(new DOMException(`Cancelled by the client: ${text}`, 'AbortError'));
  };
  if (upstream.aborted) forward();
  else upstream.addEventListener('abort', forward, { once: true });
  return controller.signal;
}
