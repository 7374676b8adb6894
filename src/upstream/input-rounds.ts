/**
 * Input rounds (Q3): a call whose downstream asks its client for something is answered
 * `input_required`, and the host's retry carries the answers. One mechanism serves every cell of
 * the two eras:
 *
 * - a 2026-07-28 downstream answers `input_required` itself: its requests are relayed as they
 *   are, under our own signed `requestState` that wraps its state (nothing is kept here, so the
 *   retry may reach any replica that shares the key);
 * - a 2025 downstream pushes a request while its call runs: the call is parked here, the request
 *   goes to the host as a round, and the retry's answer is given to the waiting push (the retry
 *   must reach this process; one that cannot find its call gets a clear failure).
 *
 * Toward a 2025 host the SDK's legacy shim turns each round into pushed requests on the host's
 * session and calls the handler again with the answers, so both host eras take the same path.
 * The state is HMAC-signed with `input_required.state_key` (SDK `createRequestStateCodec`): a
 * tampered or expired one is refused by the SDK with -32602 before any handler runs.
 */
import { createHash, randomBytes } from 'node:crypto';
import { createRequestStateCodec, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { CallToolResult, InputRequiredResult, ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { CallSignal } from '../core/call-signal.js';
import type { Caller, HostCapabilities, InputReply, InputRound } from '../core/input.js';
import { isInputRound } from '../core/input.js';
import { canonicalJson } from '../core/json.js';
import { failure, type FailureResult } from '../core/result.js';
import { Parked, type ProgressSink } from './parked-call.js';

/**
 * Whom and what a round belongs to: `c` a digest of the caller's id, `a` of the call's arguments
 * (canonical JSON), so a state is refused from another caller or with other arguments (Q3).
 */
interface Binding {
  readonly c: string;
  readonly a: string;
}

/** What our `requestState` says (signed, not encrypted: it holds no secret, only digests). */
export type RoundState = Binding &
  (
    | /** A relayed 2026 round: the exposed tool, the downstream's own state, the rounds so far. */
      {
        readonly k: 'relay';
        readonly n: string;
        readonly s?: string;
        readonly r: number;
      } /** A parked 2025 call: the exposed tool, the parked call's id, the rounds so far. */
    | { readonly k: 'park'; readonly n: string; readonly id: string; readonly r: number }
  );

/** A short digest of `text` (128 bits, base64url): enough to tell two bindings apart. */
function digest(text: string): string {
  return createHash('sha256').update(text).digest('base64url').slice(0, 22);
}

/**
 * The binding of one request (its caller and its arguments), worked out when first needed: a
 * state is presented, or a round is minted. Two SHA-256 digests and a canonical JSON of the
 * arguments on every tools/call were half of the gateway's own CPU per call at 64 in flight
 * (issue 45); most calls never need them. The arguments are not changed on the way (copies
 * are made, core/explicit.ts), so a later reading binds what the request carried.
 */
function bindingOf(request: Pick<RoundRequest, 'callerId' | 'arguments'>): () => Binding {
  let binding: Binding | undefined;
  return () =>
    (binding ??= { c: digest(request.callerId), a: digest(canonicalJson(request.arguments ?? {})) });
}

/** Options of {@link createInputRounds}. */
export interface InputRoundsOptions {
  /** HMAC key (≥ 32 bytes); undefined: random per process (one process must serve every round). */
  readonly key?: string;
  /** How long a parked call waits for the host's retry. */
  readonly roundTimeoutMs: number;
  /** The most rounds one call may take. */
  readonly maxRounds: number;
  readonly logger: Logger;
}

export type { ProgressSink } from './parked-call.js';

/** Starts the downstream call of a tools/call request. */
export type StartCall = (run: {
  readonly caller: Caller;
  readonly reply: InputReply | undefined;
  readonly signal: CallSignal;
  readonly onProgress: ProgressSink;
}) => Promise<CallToolResult | InputRound>;

/** One tools/call request as the rounds see it. */
export interface RoundRequest {
  /** The exposed tool name. */
  readonly name: string;
  /** The verified state of a retry (the SDK ran our `verify`), else undefined. */
  readonly state: RoundState | undefined;
  readonly responses: Record<string, unknown> | undefined;
  /** Q1: who is calling (a session, a stdio connection, a 2026 HTTP request). */
  readonly callerKey: object;
  /**
   * Q3: who is calling, as a string that outlives one request: a 2025 session's or a stdio
   * connection's own id; for a 2026 HTTP request, which has no connection, the caller's
   * principal, or `""` for every anonymous caller. A round's state is bound to it.
   */
  readonly callerId: string;
  /** The call's arguments: a round's state is bound to them too. */
  readonly arguments: Record<string, unknown> | undefined;
  readonly capabilities: HostCapabilities | undefined;
  readonly signal: CallSignal;
  readonly onProgress: ProgressSink;
  /** A 2026 request: its signal ends with its answer, so a parked call must not run under it. */
  readonly detach: boolean;
}

/** Input rounds for every upstream server instance of the process. */
export interface InputRounds {
  /** For `ServerOptions.requestState.verify`. */
  readonly verify: (state: string, ctx: ServerContext) => Promise<RoundState>;
  /**
   * Answers one tools/call request: a new call, a relayed round's retry or a parked call's.
   * `fail` answers a failure of the rounds themselves (too many, expired, unknown, mismatched): the
   * call's outcome step (R4, L1, O1), then rendered, like every answer.
   */
  handle(
    request: RoundRequest,
    start: StartCall,
    fail: (result: FailureResult) => CallToolResult,
  ): Promise<CallToolResult | InputRequiredResult>;
  /** Parked calls waiting for their host now. */
  parked(): number;
  /**
   * Q3 for `prompts/get` and `resources/read`: `run` (with the retry's answers and the
   * downstream's state, when this is a retry); a 2026 downstream's `input_required` is relayed
   * under our signed state, bound to `request.name` (`prompt:<name>`, `resource:<uri>`), the
   * caller and the arguments. A state that is not this request's is InvalidParams.
   */
  relayRequest<R extends object>(
    request: Pick<RoundRequest, 'name' | 'state' | 'responses' | 'callerId' | 'arguments'>,
    run: (reply: InputReply | undefined) => Promise<R | InputRound>,
  ): Promise<R | InputRequiredResult>;
}

/** How many expired call ids are remembered, to tell "expired" from "unknown" (bounded). */
const REMEMBERED_EXPIRED = 1000;

/**
 * Builds the input rounds of one process.
 * @example const rounds = createInputRounds({ roundTimeoutMs: 300_000, maxRounds: 10, logger });
 */
export function createInputRounds(options: InputRoundsOptions): InputRounds {
  const { roundTimeoutMs, maxRounds, logger } = options;
  const codec = createRequestStateCodec<RoundState>({
    key: options.key ?? randomBytes(32),
    ttlSeconds: Math.ceil(roundTimeoutMs / 1000),
  });
  const parked = new Map<string, Parked>();
  const expired = new Set<string>();

  function remember(id: string): void {
    expired.add(id);
    if (expired.size > REMEMBERED_EXPIRED) expired.delete(expired.values().next().value!);
  }

  function tooMany(name: string, rounds: number): FailureResult {
    return failure(
      'downstream_error',
      `"${name}" asked its client for input ${rounds} times and was stopped: input_required.max_rounds is ${maxRounds}`,
      { errorData: { reason: 'input_rounds_exceeded', max_rounds: maxRounds } },
    );
  }

  async function step(
    call: Parked,
    name: string,
    binding: () => Binding,
    fail: (result: FailureResult) => CallToolResult,
  ): Promise<CallToolResult | InputRequiredResult> {
    const next = await call.next();
    call.unlink();
    if ('refused' in next) {
      if (call.named) parked.delete(call.id);
      throw next.refused;
    }
    if ('done' in next) {
      if (call.named) parked.delete(call.id);
      if (!isInputRound(next.done)) return next.done;
      // A 2026 downstream's own round: relayed with its state wrapped in ours.
      const rounds = call.rounds + 1;
      if (rounds > maxRounds) return fail(tooMany(name, rounds));
      const state: RoundState = {
        ...binding(),
        k: 'relay',
        n: name,
        r: rounds,
        ...(next.done.requestState !== undefined ? { s: next.done.requestState } : {}),
      };
      return {
        resultType: 'input_required',
        inputRequests: next.done.inputRequests as InputRequiredResult['inputRequests'],
        requestState: await codec.mint(state),
      };
    }
    call.rounds++;
    if (call.rounds > maxRounds) {
      call.abandon(`input_required.max_rounds (${maxRounds}) reached`);
      parked.delete(call.id);
      return fail(tooMany(name, call.rounds));
    }
    // A 2025 downstream's push: the call waits here for the host's retry.
    parked.set(call.id, call);
    clearTimeout(call.timer);
    call.timer = setTimeout(() => {
      if (parked.get(call.id) !== call) return;
      parked.delete(call.id);
      remember(call.id);
      logger.info({ tool: name, roundTimeoutMs }, 'no answer to an input round in time: call cancelled');
      call.abandon(`the client did not answer within input_required.round_timeout_ms (${roundTimeoutMs} ms)`);
    }, roundTimeoutMs);
    call.timer.unref();
    const inputRequests = Object.fromEntries(next.asks.map((pending) => [pending.key, pending.ask]));
    return {
      resultType: 'input_required',
      inputRequests: inputRequests as InputRequiredResult['inputRequests'],
      requestState: await codec.mint({ ...binding(), k: 'park', n: name, id: call.id, r: call.rounds }),
    };
  }

  function begin(
    request: RoundRequest,
    start: StartCall,
    fail: (result: FailureResult) => CallToolResult,
    reply: InputReply | undefined,
    rounds: number,
  ): Parked {
    const call = new Parked();
    call.rounds = rounds;
    call.progress = request.onProgress;
    if (request.detach) {
      call.detached = new AbortController();
      call.link(request.signal, request.onProgress);
    }
    const caller: Caller = {
      key: request.callerKey,
      capabilities: request.capabilities,
      ask: (ask) => call.ask(ask),
      // X6: a 2025 host (its request is not detached) cannot take tasks; the gateway runs them.
      ...(request.detach ? {} : { runsTasks: true }),
    };
    call.run(
      start({
        caller,
        reply,
        // 2025: the request's own signal (a forwarding controller per call cost ~8 µs, bench:inproc).
        signal: call.detached?.signal ?? request.signal,
        // P3: progress only for a call whose request asked for it (a later round's request speaks
        // for it then); none at all is cheaper downstream.
        onProgress: request.onProgress === undefined ? undefined : (update) => call.progress?.(update),
      }),
      fail,
    );
    return call;
  }

  return {
    verify: (state, ctx) => codec.verify(state, ctx),
    parked: () => parked.size,
    async relayRequest(request, run) {
      const { state, name } = request;
      const binding = bindingOf(request);
      if (
        state !== undefined &&
        (state.k !== 'relay' || state.n !== name || state.c !== binding().c || state.a !== binding().a)
      )
        throw new ProtocolError(
          ProtocolErrorCode.InvalidParams,
          `This requestState does not belong to this request of ${name}: send it again without requestState`,
        );
      const reply: InputReply | undefined =
        state === undefined
          ? undefined
          : {
              inputResponses: request.responses ?? {},
              ...(state.k === 'relay' && state.s !== undefined ? { requestState: state.s } : {}),
            };
      const answer = await run(reply);
      if (!isInputRound(answer)) return answer;
      const rounds = (state?.r ?? 0) + 1;
      if (rounds > maxRounds)
        throw new ProtocolError(
          ProtocolErrorCode.InternalError,
          `${name} asked its client for input ${rounds} times and was stopped: input_required.max_rounds is ${maxRounds}`,
        );
      return {
        resultType: 'input_required',
        inputRequests: answer.inputRequests as InputRequiredResult['inputRequests'],
        requestState: await codec.mint({
          ...binding(),
          k: 'relay',
          n: name,
          r: rounds,
          ...(answer.requestState !== undefined ? { s: answer.requestState } : {}),
        }),
      };
    },
    handle(request, start, fail) {
      // A new call (nearly every call) steps at once, without a promise of its own around it.
      if (request.state !== undefined)
        return resume(request as RoundRequest & { readonly state: RoundState }, start, fail);
      try {
        return step(begin(request, start, fail, undefined, 0), request.name, bindingOf(request), fail);
      } catch (error) {
        return Promise.reject(error);
      }
    },
  };

  /** {@link InputRounds.handle} of a retry: a relayed round's, or a parked call's. */
  async function resume(
    request: RoundRequest & { readonly state: RoundState },
    start: StartCall,
    fail: (result: FailureResult) => CallToolResult,
  ): Promise<CallToolResult | InputRequiredResult> {
    const { state, name } = request;
    const binding = bindingOf(request);
    const mismatch =
      state.n !== name
        ? `belongs to a call of "${state.n}", not "${name}"`
        : state.c !== binding().c
          ? 'was issued to another caller'
          : state.a !== binding().a
            ? `was issued for other arguments of "${name}" (a retry carries the same arguments)`
            : undefined;
    if (mismatch !== undefined) {
      return fail(
        failure(
          'invalid_arguments',
          `This requestState ${mismatch}: call the tool again without requestState`,
          {
            errorData: { reason: 'input_state_mismatch' },
          },
        ),
      );
    }
    if (state.k === 'relay') {
      const reply: InputReply = {
        inputResponses: request.responses ?? {},
        ...(state.s !== undefined ? { requestState: state.s } : {}),
      };
      return step(begin(request, start, fail, reply, state.r), name, binding, fail);
    }
    const call = parked.get(state.id);
    if (call === undefined) {
      const gone = expired.has(state.id);
      return fail(
        failure(
          gone ? 'timeout' : 'downstream_unavailable',
          gone
            ? `The call of "${name}" waiting for this answer ended: no answer came within input_required.round_timeout_ms (${roundTimeoutMs} ms); call the tool again from the start`
            : `The call of "${name}" waiting for this answer is not in this mcp-normalizer process: it ended, or another replica holds it (route every round of a call to one replica); call the tool again from the start`,
          { errorData: { reason: gone ? 'input_round_expired' : 'input_round_unknown' } },
        ),
      );
    }
    clearTimeout(call.timer);
    parked.delete(call.id);
    call.link(request.signal, request.onProgress);
    call.deliver(request.responses ?? {});
    return step(call, name, binding, fail);
  }
}
