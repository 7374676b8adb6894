/**
 * The ports of the upstream side (U1): what the aggregated server needs from the rest of the
 * gateway ({@link ToolBackend}, which the composition root implements with the pool and the
 * catalog) and what it offers ({@link UpstreamServer}). Types only: `upstream` and `downstream`
 * never import each other, and `app` joins them through these.
 */
import type {
  AuthInfo,
  Server,
  ServerEventBus,
  Tool,
  Transport,
  LoggingMessageNotification,
} from '@modelcontextprotocol/server';
import type { InputRound } from '../core/input.js';
import type { CreatedTask } from '../core/tasks.js';
import type { CallOptions } from '../core/call.js';

export type { CallOptions, ProgressUpdate } from '../core/call.js';
import type { CallAccess, Principal } from '../core/policy.js';
import type { FailureResult, Result } from '../core/result.js';
import type { Era } from './notifier.js';

export type { Era } from './notifier.js';

/** A call that passed routing, the explicit gate and argument validation (T3, T7, T8). */
export interface PreparedForward {
  readonly kind: 'forward';
  /** The downstream server key. */
  readonly server: string;
  /** The downstream tool's own name. */
  readonly tool: string;
  /** The arguments to forward (`explicit_action` already removed, T7). */
  readonly arguments: Record<string, unknown>;
}

/** I3, I6: the callers' views, one per request (the composition root's `app/views.ts`). */
export interface CallerViews {
  /** True when views vary by principal (a policy): list results are then private (E2). */
  readonly personal: boolean;
  /** `principal`'s view at `profile`'s endpoint; undefined when nothing narrows it. */
  of(principal: Principal, profile: string | undefined): CallAccess | undefined;
}

/** What the server needs from the rest of the proxy; the composition root wires the real ones. */
export interface ToolBackend<F extends PreparedForward = PreparedForward> {
  /**
   * tools/list: the exposed definitions, served from memory (T6, T10). May be a promise so that a
   * client asking right after start waits for the first connection round instead of seeing a
   * partial list.
   */
  listTools(access?: CallAccess): readonly Tool[] | Promise<readonly Tool[]>;
  /**
   * tools/call, step 1: lookup, explicit gate, argument check; a failure reaches no downstream,
   * and neither does a call the gateway answers itself (`search_tools`, S2). May be a promise for the same reason as {@link ToolBackend.listTools}: a call that arrives
   * before the first connection round must not be answered `unknown_tool`.
   */
  prepareCall(
    name: string,
    args: Record<string, unknown> | undefined,
    requestId?: string | number,
    access?: CallAccess,
    principal?: string,
  ): F | Result | Promise<F | Result>;
  /**
   * tools/call, step 2: the downstream call. Never rejects (R3). The backend owns the outcome of
   * both steps: instructions (R4) and the call's end line in the log (L1). With a caller, a 2026
   * downstream's `input_required` comes back as an {@link InputRound} to relay (Q3).
   */
  callTool(call: F, options: CallOptions): Promise<Result | InputRound | CreatedTask>;
  /**
   * S4: the exposed name a call is for: `call_tool`'s named tool, else `name`. Input rounds are
   * bound to it (a requestState minted for one tool is refused for another) and the span is named
   * after it. @default name
   */
  calledName?(name: string, args: Record<string, unknown> | undefined): string;
  /**
   * I7: the call counted against the caller's rate limits: a refusal (`rate_limited`, through the
   * outcome step) when it passes one, else undefined. @default no limits
   */
  limit?(
    call: F,
    principal: Principal,
    requestId: string | number,
  ): FailureResult | undefined | Promise<FailureResult | undefined>;
  /** O2: false for a name no tool has now (it names no span). @default true */
  exposes?(name: string): boolean;
  /**
   * R4, L1, O1: the outcome step for a failure the server answers itself (shutting down, its
   * outermost net, a failed input round): the instruction, the end line in the log, the count.
   * @default the failure as it is
   */
  answer?<R extends Result>(
    name: string,
    result: R,
    requestId: string | number | undefined,
    principal?: string,
  ): R;
  /** P10: the caller behind `instance` went away (its session closed): its own copies stop. */
  releaseCaller?(instance: string): void;
  /** M1–M5: code mode's `run_code`, when a server or a profile is in code mode. */
  readonly code?: CodeRunner;
}

/** M2: one tool call of a snippet, through the call pipeline in its caller's name. */
export type SnippetCall = (
  name: string,
  args: Record<string, unknown>,
  signal: AbortSignal,
) => Promise<Result | InputRound | CreatedTask>;

/** M1–M5: code mode's runs (app/code/). */
export interface CodeRunner {
  /** `run_code`'s exposed name now; undefined when nothing is in code mode. */
  name(): string | undefined;
  /** One run: its answer (through no outcome step yet: the pipeline gives it one). */
  run(args: Record<string, unknown> | undefined, call: SnippetCall, signal: AbortSignal): Promise<Result>;
}

/** The aggregated server: SDK servers for every era and transport, sharing one backend. */
export interface UpstreamServer {
  /**
   * The SDK-shaped factory (`McpServerFactory`) for `serveStdio` and `createMcpHandler`: a fresh,
   * unregistered `Server` for the era asked for. Cheap and O(1) in the number of tools: the
   * handlers read the catalog, they do not register anything per tool (E2).
   */
  readonly factory: (context: { era: Era; authInfo?: AuthInfo }) => Server;
  /** The one list-change bus; `createMcpHandler` gives it to modern listen streams (E4). */
  readonly bus: ServerEventBus;
  /**
   * Registers `server` (built by {@link factory}) for notifications until it closes: the stdio
   * connection's pinned instance, in either era.
   */
  track(server: Server, era: Era): Server;
  /**
   * Creates a legacy-era `Server` for `transport`, connects it, and tracks it until it closes: a
   * 2025-era HTTP session, an in-memory CLI client. `direct`: a transport of one client with
   * no per-request routing (stdio) answers plain calls past the SDK's Protocol (direct-calls.ts).
   * `sole` (implied by `direct`): the transport's client is the local user, the one caller (I2,
   * P10), as for the CLI's in-memory client.
   */
  connect(
    transport: Transport,
    options?: { readonly direct?: boolean; readonly sole?: boolean },
  ): Promise<Server>;
  /** T10: tells every client that the tool list changed. */
  notifyToolsChanged(): void;
  /** U5: tells every client that the prompt list changed. */
  notifyPromptsChanged(): void;
  /** U5: tells every client that the resource or resource-template list changed. */
  notifyResourcesChanged(): void;
  /**
   * U5: a downstream's log message to every legacy client, each filtered by the level that client
   * set with `logging/setLevel` (the SDK keeps it per session).
   */
  sendLog(params: LoggingMessageNotification['params']): void;
  /** P5: from now on tools/call answers `downstream_unavailable` (shutting down). */
  stopAccepting(): void;
  /** P5: resolves true once no call is in flight, or false after `graceMs`. */
  drain(graceMs: number): Promise<boolean>;
  /** Number of calls being answered right now. */
  inFlight(): number;
  /** Closes every tracked `Server` (and with it its transport). */
  close(): Promise<void>;
}
