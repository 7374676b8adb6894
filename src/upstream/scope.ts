/**
 * What every handler family of one connection's server is given (issue 57): one shape, made once
 * per connection by server.ts, for the tools, the features (features.ts) and each extension
 * (ext/). It carries one derivation of the caller per request, whatever its method.
 */
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { InputReply, InputRound } from '../core/input.js';
import type { Era } from '../core/options.js';
import type { Result } from '../core/result.js';
import type { RequestCaller } from './caller-identity.js';

/** Q3: what a relayed request asks for: its round's state is bound to both. */
export interface Asked {
  /** `prompt:<name>` or `resource:<uri>`. */
  readonly key: string;
  readonly arguments?: Record<string, unknown>;
}

/** What every handler of one connection's server is given: one shape for every family. */
export interface RequestScope {
  readonly era: Era;
  /**
   * I2, I6, Q2, Q3: who is behind `ctx`'s request (caller-identity.ts), worked out at the first
   * ask and the same value after it: one derivation per request, whatever its method.
   */
  who(ctx: ServerContext): RequestCaller;
  /** The request's signal as the backends take it (cancellation.ts). */
  signal(ctx: ServerContext): AbortSignal;
  /** A Result in the caller's envelope (R2, F7, L2): the only way a handler renders one. */
  render(result: Result, who: RequestCaller): CallToolResult;
  /**
   * Q3: a 2026 server's rounds of this request, relayed under the gateway's own signed state,
   * bound to `asked` and to the request's caller.
   */
  relay<R extends object>(
    ctx: ServerContext,
    asked: Asked,
    run: (reply: InputReply | undefined) => Promise<R | InputRound>,
  ): Promise<R | InputRequiredResult>;
  /** E2: a list answer with its cache hints (2026 hosts). */
  hint<T extends object>(result: T): T;
  /** T10: this connection was answered a list of `kind` (its next change is worth a notification). */
  listed(kind: 'tools' | 'prompts' | 'resources'): void;
}
