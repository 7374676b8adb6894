/**
 * What the chaos parts share (bench/chaos.ts, bench/chaos-store.ts): driving N calls K at a
 * time, a tally of their answers (each counted once, by outcome), and one JSON line per part.
 */

export interface Tally {
  answered: number;
  duplicated: number;
  errors: Record<string, number>;
  latencies: number[];
  /** Per answer with `meta_data.elapsed_ms`: the time after the downstream's own (latency − elapsed). */
  afterDownstream: number[];
  /** Calls whose answer came more than 100 ms after the downstream's: [id, ms]. */
  slow: [number, number][];
}

function tallyAnswer(
  tally: Tally,
  seen: Set<number>,
  id: number,
  message: Record<string, unknown>,
  sentAt: number,
): void {
  if (seen.has(id)) {
    tally.duplicated++;
    return;
  }
  seen.add(id);
  tally.answered++;
  const latency = performance.now() - sentAt;
  tally.latencies.push(latency);
  const result = message['result'] as
    | { isError?: boolean; structuredContent?: { meta_data?: { error_type?: string; elapsed_ms?: number } } }
    | undefined;
  const elapsed = result?.structuredContent?.meta_data?.elapsed_ms;
  if (typeof elapsed === 'number') {
    tally.afterDownstream.push(latency - elapsed);
    if (latency - elapsed > 100) tally.slow.push([id, Number((latency - elapsed).toFixed(1))]);
  }
  const kind =
    message['error'] !== undefined
      ? 'jsonrpc_error'
      : result?.isError === true
        ? (result.structuredContent?.meta_data?.error_type ?? 'isError')
        : 'ok';
  tally.errors[kind] = (tally.errors[kind] ?? 0) + 1;
}

export function percentile(sorted: number[], p: number): number {
  return sorted.length === 0
    ? 0
    : (sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] as number);
}

/** Drives `total` calls through `send`, `inFlight` at a time; resolves with the tally. */
export async function drive(
  total: number,
  inFlight: number,
  send: (id: number) => Promise<Record<string, unknown> | undefined>,
): Promise<Tally & { unanswered: number }> {
  const tally: Tally = {
    answered: 0,
    duplicated: 0,
    errors: {},
    latencies: [],
    afterDownstream: [],
    slow: [],
  };
  const seen = new Set<number>();
  let next = 0;
  let lost = 0;
  async function worker(): Promise<void> {
    while (next < total) {
      const id = ++next;
      const sentAt = performance.now();
      const answer = await send(id);
      if (answer === undefined) lost++;
      else tallyAnswer(tally, seen, id, answer, sentAt);
    }
  }
  await Promise.all(Array.from({ length: inFlight }, () => worker()));
  return { ...tally, unanswered: lost };
}

export function summary(
  name: string,
  result: Tally & { unanswered: number },
  more: Record<string, unknown>,
): void {
  const sorted = [...result.latencies].sort((a, b) => a - b);
  console.log(
    JSON.stringify({
      part: name,
      calls: result.answered + result.unanswered,
      answered: result.answered,
      unanswered: result.unanswered,
      duplicated: result.duplicated,
      outcomes: result.errors,
      p50_ms: Number(percentile(sorted, 0.5).toFixed(1)),
      p99_ms: Number(percentile(sorted, 0.99).toFixed(1)),
      max_ms: Number((sorted.at(-1) ?? 0).toFixed(1)),
      ...more,
    }),
  );
}
