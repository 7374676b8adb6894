/**
 * How a failed start is worded (P1, P6, U3): a start-up that timed out names the bound it hit, a
 * remote server's failure names its URL, and a stdio server whose process ended says how it ended
 * and what it last wrote to stderr. Pure: the caller passes the error, the config and the report.
 */
import { SdkErrorCode } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';
import type { Scrubber } from '../core/secrets.js';
import { describeError } from './errors.js';
import { LoginRequiredError } from './oauth-login.js';
import { StdioClientTransport, withExit, type ExitReport } from './stdio-client.js';

/**
 * P1: a start-up that timed out says which bound it hit (start-up, not a call's `timeout_ms`).
 * P6: a stdio server that printed something else than JSON-RPC on its stdout is quoted; one that
 * says it listens on a URL is an HTTP server, reached with `url:`.
 */
export function startupTimeout(error: unknown, server: ServerConfig, transport?: unknown): unknown {
  if ((error as { code?: unknown } | null)?.code !== SdkErrorCode.RequestTimeout) return error;
  const skipped = transport instanceof StdioClientTransport ? transport.stdoutNoise : undefined;
  // The line itself, after why it was skipped ("not JSON (…): <line>").
  const noise = skipped?.replace(/^[^:]*?(\([^)]*\))?: /, '');
  const url = noise === undefined ? undefined : /\bhttps?:\/\/[^\s"'`<>]+/.exec(noise)?.[0];
  const printed =
    noise === undefined
      ? ''
      : `; instead of JSON-RPC it printed on stdout: ${JSON.stringify(noise)}${url === undefined ? '' : `. It seems to serve HTTP: give it \`url: ${url}\` instead of \`command:\`, and start it yourself`}`;
  return new Error(
    `did not start within startup_timeout_ms (${server.startupTimeoutMs} ms): ${describeError(error)}${printed}`,
  );
}

/**
 * P6: a remote server's failure names its URL ("fetch failed" alone did not say which server's
 * address was wrong); the URL is scrubbed like every output (L2) where it is shown.
 */
export function located(error: unknown, server: ServerConfig): unknown {
  const transport = server.transport;
  if (transport.type === 'stdio') return error;
  const text = describeError(error);
  return text.includes(transport.url) ? error : new Error(`${transport.url}: ${text}`, { cause: error });
}

/**
 * U3: a stdio server whose process ended is reported with how it ended and its last stderr lines
 * (scrubbed, L2): "Connection closed" alone sent users to the log to find out why.
 */
export function withExitReport(
  error: unknown,
  report: ExitReport | undefined,
  scrub: Scrubber | undefined,
): unknown {
  return report === undefined ? error : new Error(withExit(describeError(error), report, scrub));
}

/** D3: whether a failed start (or an error it wraps, as {@link located} does) is a missing login. */
export function isLoginRequired(error: unknown): boolean {
  for (let at = error, depth = 0; at instanceof Error && depth < 5; at = at.cause, depth++)
    if (at instanceof LoginRequiredError) return true;
  return false;
}

/** How long a failed start waits for its stdio child's exit, to report it (U3). */
const EXIT_WAIT_MS = 500;

/**
 * U3: a failed start as the operator reads it: a timeout named as such, a stdio child's exit and
 * last words (read before its client is closed, which forgets the child; its write often fails a
 * moment before its exit), and where in the config the server is.
 */
export async function startFailure(
  error: unknown,
  server: ServerConfig,
  transport: unknown,
  scrub: Scrubber | undefined,
): Promise<unknown> {
  const report =
    transport instanceof StdioClientTransport ? await transport.exitReportWithin(EXIT_WAIT_MS) : undefined;
  return located(withExitReport(startupTimeout(error, server, transport), report, scrub), server);
}
