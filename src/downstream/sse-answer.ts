/**
 * A POST's SSE answer that is one plain message and then the end of the stream, read as the JSON
 * body it amounts to (issue 27 item 22).
 *
 * Most servers answer a tool call over Streamable HTTP with an SSE stream holding exactly one
 * event, the response, and then close it. The SDK reads every such stream through a
 * `TextDecoderStream` and an `EventSourceParserStream`: two web transform streams, their queues
 * and promises, per call. That was most of the CPU and garbage an HTTP downstream cost beyond a
 * stdio one. A JSON body holding the same message takes the SDK's plain `response.json()` path
 * instead, which dispatches it the same way.
 *
 * The stream is read as one message only when nothing is lost by it: one complete event, with
 * data, no `id` (nothing to resume from), no `retry`, no event type but `message`, and the end of
 * the body right after it. Any other stream (a progress notification first, a priming event, a
 * second event, an event not yet ended, a failure) goes to the SDK as the stream it was, the bytes
 * already read first. An event that looks like a request or notification (`"method"` in it) goes
 * at once, so a progress notification is never held back; after the first event, the end is
 * awaited for at most {@link END_WAIT_MS}, and a stream still open then goes on as a stream.
 */
import type { IncomingMessage } from 'node:http';
import { keepInexactNumbers, mayHoldInexactNumber } from '../core/exact-json.js';

/** How long a complete first event waits for the end of its stream before going on as a stream. */
export const END_WAIT_MS = 50;

/**
 * The end of a complete SSE event: a blank line, in any of the three line endings. Global: a
 * reader sets `lastIndex` before each `exec` (synchronously, so readers never share a search).
 */
export const EVENT_END = /\r\n\r\n|\n\n|\r\r/g;

/** An SSE line ending: CRLF, CR or LF. */
export const LINE_END = /\r\n|\r|\n/;

/**
 * The JSON text of one SSE event that is a plain message, with every digit kept (N13), or
 * `undefined` for any event that must reach the SDK as an event (see the module header).
 * @example loneMessage('data: {"jsonrpc":"2.0","id":1,"result":{}}') // '{"jsonrpc":"2.0","id":1,"result":{}}'
 */
export function loneMessage(event: string): string | undefined {
  const data: string[] = [];
  for (const line of event.split(LINE_END)) {
    if (line === '' || line.startsWith(':')) continue;
    const colon = line.indexOf(':');
    const field = colon === -1 ? line : line.slice(0, colon);
    const value = colon === -1 ? '' : line.slice(colon + (line[colon + 1] === ' ' ? 2 : 1));
    if (field === 'data') data.push(value);
    else if (field !== 'event' || value !== 'message') return undefined;
  }
  if (data.length === 0) return undefined;
  const text = data.join('\n');
  if (text.includes('"method"')) return undefined;
  if (!mayHoldInexactNumber(text)) return text;
  return keepInexactNumbers(text)?.text ?? text;
}

/** What {@link readLoneMessage} found. */
export type LoneOutcome =
  /** The body was one plain message and ended: its JSON text. */
  | { kind: 'message'; text: string }
  /** Anything else: the bytes read so far; the rest is still in `res` (unless it ended). */
  | { kind: 'stream'; read: Buffer[] };

/**
 * Reads the start of an SSE response body and decides, once, whether it is one plain message
 * (see the module header). On `stream`, `res` is paused where it was, with its listeners removed.
 */
export function readLoneMessage(res: IncomingMessage, decide: (outcome: LoneOutcome) => void): void {
  const decoder = new TextDecoder();
  const read: Buffer[] = [];
  let text = '';
  let message: string | undefined;
  let timer: NodeJS.Timeout | undefined;
  let decided = false;
  const finish = (outcome: LoneOutcome): void => {
    if (decided) return;
    decided = true;
    clearTimeout(timer);
    res.off('data', onData);
    res.off('end', onEnd);
    res.off('error', asStream);
    res.off('close', asStream);
    if (outcome.kind === 'stream') res.pause();
    decide(outcome);
  };
  function asStream(): void {
    finish({ kind: 'stream', read });
  }
  function onData(chunk: Buffer): void {
    read.push(chunk);
    // Anything after the first event: the SDK reads the stream as a stream.
    if (message !== undefined) return asStream();
    // Searched from just before the new text only: a large event read in many chunks is scanned
    // once, not once per chunk.
    EVENT_END.lastIndex = Math.max(0, text.length - 3);
    text += decoder.decode(chunk, { stream: true });
    const end = EVENT_END.exec(text);
    if (end === null) return;
    if (end.index + end[0].length < text.length) return asStream();
    message = loneMessage(text.slice(0, end.index));
    if (message === undefined) return asStream();
    timer = setTimeout(asStream, END_WAIT_MS);
  }
  function onEnd(): void {
    if (message === undefined || decoder.decode() !== '') return asStream();
    finish({ kind: 'message', text: message });
  }
  res.on('data', onData);
  res.once('end', onEnd);
  res.once('error', asStream);
  res.once('close', asStream);
}
