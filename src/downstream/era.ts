/**
 * What a connection knows of its downstream's protocol era (E5), across restarts: the SDK client's
 * negotiation options for the server's `protocol` setting, the verdict an `auto` probe reached
 * (given back to the SDK as `prior`, so a restart does not probe again), and the wording of a
 * start that failed after a failed probe.
 *
 * The rules:
 * - a first `auto` probe that gets no 2026 answer (an HTTP 500 or an HTML page, a stdio child that
 *   exits on it as servers on the Rust SDK do) means a 2025 server: the attempt goes again at
 *   once, straight to `initialize`;
 * - a verdict learned from an answer is forgotten when a later attempt fails (the server may have
 *   changed era); one learned from a child that exited on the probe is kept for the process's
 *   lifetime (probing again would only kill it again);
 * - a start that fails after a failed probe says so, and names the settings that skip the probe.
 */
import type { Era } from '../core/options.js';
import { SdkErrorCode } from '@modelcontextprotocol/client';
import type { Client, PriorDiscovery, VersionNegotiationOptions } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';
import { describeError } from './errors.js';
import { isLoginRequired } from './start-errors.js';

/** The protocol era a downstream connection landed on. */
export type DownstreamEra = Era;

/**
 * How long an `auto` probe waits for `server/discover` before calling the server legacy. On
 * stdio a silent server is a legacy one (the SDK falls back); the connection's own timeout (60 s
 * by default) would stall every legacy server that ignores unknown requests.
 */
const PROBE_TIMEOUT_MS = 5000;

/** The SDK client's negotiation options for a server's `protocol` setting. */
export function negotiation(server: ServerConfig): VersionNegotiationOptions {
  switch (server.protocol) {
    case 'legacy':
      return { mode: 'legacy' };
    case 'auto':
      return { mode: 'auto', probe: { timeoutMs: Math.min(PROBE_TIMEOUT_MS, server.startupTimeoutMs) } };
    default:
      return { mode: { pin: server.protocol } };
  }
}

/** True for the SDK's "the era could not be negotiated" (probe failed, no common version). */
export function isEraFailure(error: unknown): boolean {
  return (error as { code?: unknown } | null)?.code === SdkErrorCode.EraNegotiationFailed;
}

/**
 * Failures that no `protocol:` setting mends: the address or the process, not the handshake
 * (connection refused, a name that does not resolve, a reset or timed-out socket, a TLS
 * certificate, a child that could not start or exited).
 */
const OUTSIDE_PROTOCOL =
  /\b(ECONNREFUSED|ENOTFOUND|EAI_AGAIN|ECONNRESET|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH|EPIPE|ENOENT|EACCES|CERT_[A-Z_]+|UNABLE_TO_VERIFY_LEAF_SIGNATURE|SELF_SIGNED_CERT_IN_CHAIN|DEPTH_ZERO_SELF_SIGNED_CERT)\b|the process exited|process ended/;

/** A cached verdict and how it was learned. */
interface Verdict {
  readonly prior: PriorDiscovery;
  /** `probe`: from an answer (probed again after a failure); `exit`: the child exited on it. */
  readonly learnedBy: 'probe' | 'exit';
}

/** One server's era, remembered across the connection's attempts. */
export class EraMemory {
  readonly #server: ServerConfig;
  #verdict: Verdict | undefined;
  /** Why this attempt's probe failed, for the error should `initialize` fail too. */
  #probeError: string | undefined;
  #era: DownstreamEra | undefined;
  #protocolVersion: string | undefined;

  constructor(server: ServerConfig) {
    this.#server = server;
  }

  /** The era the current (or last) connection landed on; undefined before the first. */
  get era(): DownstreamEra | undefined {
    return this.#era;
  }

  /** The protocol revision negotiated, e.g. `2026-07-28` or `2025-06-18`. */
  get protocolVersion(): string | undefined {
    return this.#protocolVersion;
  }

  /** What to give the SDK's `connect` as `prior`: the cached verdict, if any. */
  get prior(): PriorDiscovery | undefined {
    return this.#verdict?.prior;
  }

  /**
   * `error` ended the first `auto` probe with no 2026 answer: from now on the server is a 2025
   * one. Returns true when the attempt should go again at once (false: not a probe failure).
   */
  probeFailed(error: unknown): boolean {
    if (this.#server.protocol !== 'auto' || this.#verdict !== undefined || !isEraFailure(error)) return false;
    const exited = this.#server.transport.type === 'stdio';
    this.#verdict = { prior: { kind: 'legacy' }, learnedBy: exited ? 'exit' : 'probe' };
    this.#probeError = describeError(error);
    return true;
  }

  /** Why the probe failed (set by {@link EraMemory.probeFailed}). */
  get probeError(): string | undefined {
    return this.#probeError;
  }

  /** Records the era `client` landed on, and (auto) the verdict to reuse as `prior`. */
  learn(client: Client): void {
    this.#era = client.getProtocolEra();
    this.#protocolVersion = client.getNegotiatedProtocolVersion();
    if (this.#server.protocol === 'auto' && this.#verdict === undefined) {
      const discover = client.getDiscoverResult();
      this.#verdict = {
        prior: discover !== undefined ? { kind: 'modern', discover } : { kind: 'legacy' },
        learnedBy: 'probe',
      };
    }
  }

  /** The attempt succeeded: a probe failure before it is history. */
  ready(): void {
    this.#probeError = undefined;
  }

  /**
   * The attempt failed with `error`: a verdict from an answer is forgotten (re-probe next time),
   * and the error says what the probe found and which setting skips it.
   */
  failed(error: unknown): unknown {
    if (this.#verdict?.learnedBy === 'probe') this.#verdict = undefined;
    const probe = this.#probeError;
    this.#probeError = undefined;
    // A server that cannot be reached, whose process ended, or that wants a login is not a
    // matter of protocol (and a login's failure must stay one: D2's reason and instruction).
    if (isLoginRequired(error) || OUTSIDE_PROTOCOL.test(describeError(error))) return error;
    if (probe === undefined && !isEraFailure(error)) return error;
    const before = probe === undefined ? '' : ` (after its server/discover probe failed: ${probe})`;
    return new Error(
      `${describeError(error)}${before}; a 2025 server needs \`protocol: legacy\`, a 2026 one \`protocol: "2026-07-28"\``,
    );
  }
}
