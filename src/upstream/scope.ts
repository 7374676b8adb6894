/**
 * What every handler family of one connection's server is given (issue 57): one shape, made once
 * per connection by server.ts, for the tools, the features (features.ts) and each extension
 * (ext/). It carries one derivation of the caller per request, whatever its method.
 */
import type {
  CallToolResult,
  InputRequiredResult,
  Server,
  ServerContext,
} from '@modelcontextprotocol/server';
import type { InputReply, InputRound } from '../core/input.js';
import type { Era } from '../core/options.js';
import type { Result } from '../core/result.js';
import type { CallerIdentity, RequestCaller } from './caller-identity.js';
import { cancellationSignal } from './cancellation.js';
import type { InputRounds, RoundState } from './input-rounds.js';

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

/** What {@link createRequestScope} is built from (server.ts's parts of one connection). */
export interface ScopeParts {
  readonly callers: Pick<CallerIdentity, 'resolve'>;
  readonly rounds: Pick<InputRounds, 'relayRequest'>;
  readonly hint: RequestScope['hint'];
  readonly render: RequestScope['render'];
  readonly listed: RequestScope['listed'];
}

/**
 * The scope of `server`'s requests: the caller of a request worked out at its first ask and kept
 * for that request (a 2025 connection serves many requests, each with its own `authInfo`), its
 * signal, rendering, the relay of its rounds and the list hints.
 */
export function createRequestScope(server: Server, era: Era, parts: ScopeParts): RequestScope {
  const asked = new WeakMap<ServerContext, RequestCaller>();
  const who = (ctx: ServerContext): RequestCaller => {
    let found = asked.get(ctx);
    if (found === undefined) asked.set(ctx, (found = parts.callers.resolve(server, era, ctx)));
    return found;
  };
  return {
    era,
    who,
    signal: (ctx) => cancellationSignal(ctx.mcpReq.signal),
    render: parts.render,
    // Q3: a 2026 server's rounds of prompts/get and resources/read, bound like a call's.
    relay: (ctx, asked, run) =>
      parts.rounds.relayRequest(
        {
          name: asked.key,
          state: ctx.mcpReq.requestState<RoundState>(),
          responses: ctx.mcpReq.inputResponses,
          callerId: who(ctx).roundKey,
          arguments: asked.arguments,
        },
        run,
      ),
    hint: parts.hint,
    listed: parts.listed,
  };
}
