/**
 * Which SSE events are read as a plain JSON message (issue 27 item 22): only an event nothing
 * would be lost from, with every digit kept (N13). The stream-level behaviour, against a real
 * server, is in http-fetch.test.ts.
 */
import { describe, expect, it } from 'vitest';
import { loneMessage } from '../../src/downstream/sse-answer.js';

const RESPONSE = '{"jsonrpc":"2.0","id":1,"result":{"content":[]}}';

describe('loneMessage', () => {
  it.each([
    ['one data line', `data: ${RESPONSE}`, RESPONSE],
    ['no space after the colon', `data:${RESPONSE}`, RESPONSE],
    ['the message event type, CRLF lines', `event: message\r\ndata: ${RESPONSE}`, RESPONSE],
    ['a comment line', `: hello\ndata: ${RESPONSE}`, RESPONSE],
    [
      'data over two lines, joined by a newline',
      'data: {"jsonrpc":"2.0",\ndata: "id":1,"result":{}}',
      '{"jsonrpc":"2.0",\n"id":1,"result":{}}',
    ],
    [
      'N13: a number a double cannot carry is kept as its digits',
      'data: {"jsonrpc":"2.0","id":1,"result":{"n":18446744073709551616}}',
      '{"jsonrpc":"2.0","id":1,"result":{"n":"18446744073709551616"}}',
    ],
  ])('P9: %s is read as the message', (_name, event, expected) => {
    expect(loneMessage(event)).toBe(expected);
  });

  it.each([
    ['an event id (resumable: the SDK keeps it)', `id: 7\ndata: ${RESPONSE}`],
    ['a priming event (an id, empty data)', 'id: 7\ndata: '],
    ['a retry field', `retry: 1000\ndata: ${RESPONSE}`],
    ['another event type', `event: ping\ndata: ${RESPONSE}`],
    ['no data (a comment only)', ': keep-alive'],
    [
      'a notification (it has a method)',
      'data: {"jsonrpc":"2.0","method":"notifications/progress","params":{}}',
    ],
    ['a request from the server', 'data: {"jsonrpc":"2.0","id":9,"method":"elicitation/create","params":{}}'],
    ['an unknown field', `foo: bar\ndata: ${RESPONSE}`],
  ])('P9: %s goes to the SDK as an event', (_name, event) => {
    expect(loneMessage(event)).toBeUndefined();
  });
});
