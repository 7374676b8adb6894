/**
 * stdio hosting (CONTRACT U1): the upstream client spawned us and speaks JSON-RPC on our stdin
 * and stdout. stdout carries protocol lines only: everything else logs to stderr (L1, P6).
 */
import { StdioServerTransport } from '@modelcontextprotocol/sdk/server/stdio.js';
import type { Readable, Writable } from 'node:stream';
import type { UpstreamServer } from './server.js';

/** Options of {@link serveStdio}; the defaults are the process's own streams. */
export interface StdioOptions {
  /** @default process.stdin */
  readonly stdin?: Readable;
  /** @default process.stdout */
  readonly stdout?: Writable;
}

/** A running stdio endpoint. */
export interface StdioHandle {
  /** Resolves when the input ends (the client closed our stdin or went away). */
  readonly ended: Promise<void>;
  /** Stops reading stdin and closes the server. */
  close(): Promise<void>;
}

/**
 * Serves `upstream` on stdin/stdout.
 * @example const stdio = await serveStdio(upstream); await stdio.ended;
 */
export async function serveStdio(upstream: UpstreamServer, options: StdioOptions = {}): Promise<StdioHandle> {
  const stdin = options.stdin ?? process.stdin;
  const stdout = options.stdout ?? process.stdout;
  const transport = new StdioServerTransport(stdin, stdout);
  // The SDK transport does not watch for end of input; P5 treats it as a shutdown request.
  const ended = new Promise<void>((resolve) => {
    stdin.once('end', resolve);
    stdin.once('close', resolve);
    // EPIPE: the client went away mid-write. Without a listener the error would crash the process.
    stdout.once('error', () => resolve());
  });
  const server = await upstream.connect(transport);
  return {
    ended,
    close: () => server.close(),
  };
}
