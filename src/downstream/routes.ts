/**
 * The ways one request reaches a connected downstream (P3, P7, E5, Q1, Q3, Q5, Q6), in order:
 *
 * 1. a call of a 2025 server's task-only tool runs as a task (Q6, `task-runner.ts`);
 * 2. a 2026 server's `resources/subscribe`/`unsubscribe` becomes a listen stream (Q5);
 * 3. a 2025 stdio server's requests pass by the SDK's Protocol (P7, `request-tap.ts`);
 * 4. everything else goes through the SDK client's raw `request` with a lenient result schema,
 *    a 2026 server's `_meta` (the caller's capabilities, the log level) and its `Mcp-Param-*`
 *    headers (SEP-2243).
 *
 * The connection owns the life cycle (which client is current, what is in flight, what a lost
 * connection does to a call): it calls in here, and nothing here calls back into it except
 * through the `send` it passes, so a task's polls are tracked like any request.
 */
import type { Client, ClientRequest, Progress } from '@modelcontextprotocol/client';
import type { ServerConfig } from '../config/types.js';
import { abortSignalOf, type CallSignal } from '../core/call-signal.js';
import type { Caller, InputReply } from '../core/input.js';
import { isRecord } from '../core/json.js';
import { paramHeaderDeclarations, paramHeaders, type ParamHeader } from '../core/param-headers.js';
import { CallerRoute, modernParams } from './callers.js';
import type { DownstreamEra } from './era.js';
import type { RequestTap } from './request-tap.js';
import { ResourceWatches } from './resource-watches.js';
import { driveTask, needsTasks } from './task-driver.js';
import { runAsTask, taskOnly, type SendRequest } from './task-runner.js';
import type { Timers } from '../core/timers.js';
import { LenientCallToolResultSchema } from './tool-list.js';

/** Q3: the requests whose 2026 answer may be `input_required` (relayed to the caller's host). */
const INPUT_ROUND_METHODS = new Set(['tools/call', 'prompts/get', 'resources/read']);

/** Per-call options of `Connection.call` and `Connection.request`. */
export interface ConnectionCallOptions {
  /**
   * The caller's cancellation (P3). One signal per call, like the upstream's per-request signal:
   * the SDK adds an abort listener to it while the request runs.
   */
  readonly signal?: CallSignal;
  /** Progress from the downstream (P3); every notification also restarts the timeout. */
  readonly onProgress?: (progress: Progress) => void;
  /** This request's timeout when less than `timeout_ms` is left (P3: time spent queued counts). */
  readonly timeoutMs?: number;
  /** Extra HTTP headers for this request (Streamable HTTP only; SEP-2243 `Mcp-Param-*`). */
  readonly headers?: Readonly<Record<string, string>>;
  /** Q1: the upstream client behind the call, who answers what the server asks meanwhile. */
  readonly caller?: Caller;
  /** Q3: the retry of a relayed `input_required` round (2026-07-28 servers). */
  readonly reply?: InputReply;
  /** O2: `_meta` keys for the request (the W3C trace context). */
  readonly meta?: Record<string, unknown>;
  /** X6: the request declares the Tasks extension as the gateway's own (task-driver.ts). */
  readonly takesTasks?: boolean;
}

/** The connected client a request goes out on. */
export interface Route {
  readonly client: Client;
  readonly era: DownstreamEra;
  /** Present for a 2025 stdio server: its requests pass by the SDK's Protocol. */
  readonly tap: RequestTap | undefined;
}

/** One connection's request paths and what they need to know of its tools. */
export class Routes {
  /** Q1: the callers of the calls in flight, who answer what a 2025 server pushes. */
  readonly callers = new CallerRoute();
  /** Q5: a 2026 server's resource subscriptions, as listen streams. */
  readonly watches = new ResourceWatches();
  /** SEP-2243: the `x-mcp-header` declarations of the listed tools that have any. */
  #paramHeaders = new Map<string, readonly ParamHeader[]>();
  /** Q6: the listed tools that only run as tasks. */
  #taskTools = new Set<string>();
  readonly #server: ServerConfig;
  readonly #timers: Timers;

  constructor(server: ServerConfig, timers: Timers) {
    this.#server = server;
    this.#timers = timers;
  }

  /** A new tool list: the per-tool indexes follow it. */
  index(tools: readonly unknown[]): void {
    this.#paramHeaders = new Map();
    this.#taskTools = new Set();
    for (const tool of tools) {
      if (!isRecord(tool) || typeof tool['name'] !== 'string') continue;
      if (taskOnly(tool)) this.#taskTools.add(tool['name']);
      const declared = paramHeaderDeclarations(tool['inputSchema']);
      if (declared.length > 0) this.#paramHeaders.set(tool['name'], declared);
    }
  }

  /**
   * `tools/call` of `tool`: as a task (Q6), or as one request through `send` (which is the
   * connection's tracked {@link Routes.send}).
   */
  call(
    era: DownstreamEra | undefined,
    tool: string,
    args: Record<string, unknown>,
    options: ConnectionCallOptions,
    send: (
      method: string,
      params: Record<string, unknown>,
      options: ConnectionCallOptions,
    ) => Promise<unknown>,
  ): Promise<unknown> {
    // Q6: a task-only tool of a 2025 server runs as a task. Cancelling the call cancels the task
    // with a request of its own: the call's signal is aborted by then, and would stop it too.
    if (era === 'legacy' && this.#taskTools.has(tool)) {
      const timeoutMs = options.timeoutMs ?? this.#server.timeoutMs;
      const taskSend: SendRequest = (method, params, o) => send(method, params, { ...options, ...o });
      return runAsTask(taskSend, tool, args, { ...options, timers: this.#timers, timeoutMs });
    }
    // E5, SEP-2243: a modern server checks the `Mcp-Param-*` headers against the arguments.
    const declared = era === 'modern' ? this.#paramHeaders.get(tool) : undefined;
    const withHeaders =
      declared === undefined ? options : { ...options, headers: paramHeaders(declared, args) };
    const params: Record<string, unknown> = { name: tool, arguments: args };
    // Q3: the retry of a relayed round carries the host's answers and the server's own state.
    if (options.reply !== undefined) params['inputResponses'] = options.reply.inputResponses;
    if (options.reply?.requestState !== undefined) params['requestState'] = options.reply.requestState;
    if (options.meta !== undefined) params['_meta'] = options.meta;
    const sent = send('tools/call', params, withHeaders);
    const caller = options.caller;
    if (era !== 'modern' || caller?.runsTasks !== true) return sent;
    // X6: a server that needs a caller that takes tasks, and a caller that cannot: the gateway
    // takes the task and runs it to its end for the caller.
    return sent.catch((error: unknown) => {
      if (!needsTasks(error)) throw error;
      const taskSend: SendRequest = (method, more, o) =>
        send(
          method,
          more,
          method === 'tools/call'
            ? { ...withHeaders, ...o, takesTasks: true }
            : { ...options, ...o, takesTasks: true },
        );
      return driveTask(taskSend, params, caller, {
        timers: this.#timers,
        timeoutMs: options.timeoutMs ?? this.#server.timeoutMs,
        ...(options.signal !== undefined ? { signal: options.signal } : {}),
        ...(options.onProgress !== undefined ? { onProgress: options.onProgress } : {}),
      });
    });
  }

  /** One request on `route`, by the first path that takes it (see the module header). */
  send(
    route: Route,
    method: string,
    params: Record<string, unknown>,
    options: ConnectionCallOptions,
  ): Promise<unknown> {
    const { client, tap, era } = route;
    const modern = era === 'modern';
    // Q5: a 2026 server hears of subscriptions on listen streams.
    if (modern && (method === 'resources/subscribe' || method === 'resources/unsubscribe'))
      return this.watches.apply(client, method, String(params['uri']));
    const timeout = options.timeoutMs ?? this.#server.timeoutMs;
    const onProgress = (progress: Progress): void => options.onProgress?.(progress);
    // P7: a 2025 stdio server's requests pass by the SDK's Protocol. The caller's signal goes down
    // as it is: a forwarding controller cost ~8 µs per call.
    if (tap !== undefined)
      return tap.request(method, params, { timeoutMs: timeout, onProgress, signal: options.signal });
    return client.request(
      // Any method: the SDK's typing lists only the spec's requests, which these all are.
      {
        method,
        params: modern
          ? modernParams(params, this.#server.clientFeatures, options.caller, options.takesTasks)
          : params,
      } as ClientRequest,
      LenientCallToolResultSchema,
      {
        // Q3: a 2026 server's `input_required` comes back as it is, for the caller's host.
        ...(modern && INPUT_ROUND_METHODS.has(method) ? { allowInputRequired: true } : {}),
        timeout,
        // P3: progress restarts the clock; a handler is always registered so that it can.
        resetTimeoutOnProgress: true,
        onprogress: onProgress,
        ...(options.signal !== undefined ? { signal: abortSignalOf(options.signal) } : {}),
        ...(options.headers !== undefined ? { headers: options.headers } : {}),
      },
    );
  }
}
