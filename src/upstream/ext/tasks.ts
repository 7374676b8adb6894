/**
 * Tasks (SEP-2663; issue 47, contract X5) upstream: the extension declared to 2026-07-28 hosts when
 * a server behind the gateway declares it, and `tasks/get`, `tasks/update` and `tasks/cancel`
 * relayed through the app's book (app/ext/tasks.ts, behind the {@link TasksPort}). A request whose
 * caller did not declare the extension is -32021 (SEP-2575), as the spec asks; `tasks/result`
 * and `tasks/list` are not registered (-32601: removed by SEP-2663). The extension is not defined
 * in the 2025 protocol: a 2025 host is neither told of it nor served these methods.
 */
import {
  MissingRequiredClientCapabilityError,
  type Server,
  type ServerContext,
} from '@modelcontextprotocol/server';
import * as z from 'zod/v4';
import type { Caller } from '../../core/input.js';
import type { Principal } from '../../core/policy.js';
import type { Result } from '../../core/result.js';
import { declaresTasks, TASKS_EXTENSION, TASKS_REQUIRED } from '../../core/tasks.js';
import type { RequestCaller } from '../caller-identity.js';
import type { RequestScope, UpstreamExtension } from './extension.js';

/** What a relayed tasks/* request is given. */
export interface TaskRequestOptions {
  readonly signal?: AbortSignal;
  /** The host behind the request (its capabilities travel to the server). */
  readonly caller?: Caller;
  /** I7, X9: who is asking: a poll counts as a call of the task's tool in its rate limits. */
  readonly principal?: Principal;
}

/** The tasks the gateway relays, as the app keeps them (app/ext/tasks.ts). */
export interface TasksPort {
  /** `tasks/get`: the task under our id, and a completed task's result, normalized (R3). */
  get(
    owner: string | undefined,
    taskId: string,
    options: TaskRequestOptions,
  ): Promise<{ readonly task: Record<string, unknown>; readonly result?: Result }>;
  update(
    owner: string | undefined,
    taskId: string,
    inputResponses: Record<string, unknown>,
    options: TaskRequestOptions,
  ): Promise<void>;
  cancel(owner: string | undefined, taskId: string, options: TaskRequestOptions): Promise<void>;
}

const TaskParams = z.object({ taskId: z.string() }).passthrough();

/** Registers the three tasks/* methods on a 2026 `server`. */
function register(server: Server, tasks: TasksPort, scope: RequestScope): void {
  /** The caller, once it is known to take tasks (-32021 otherwise). */
  function caller(ctx: ServerContext): { who: RequestCaller; options: TaskRequestOptions } {
    const who = scope.who(ctx);
    if (!declaresTasks(who.capabilities)) throw new MissingRequiredClientCapabilityError(TASKS_REQUIRED);
    return { who, options: { signal: scope.signal(ctx), caller: who.host, principal: who.principal } };
  }
  server.setRequestHandler('tasks/get', { params: TaskParams }, async (params, ctx) => {
    const { who, options: request } = caller(ctx);
    const { task, result } = await tasks.get(who.subject, params.taskId, request);
    // A completed task's result in the caller's envelope (R2), as its call would have had it.
    return result === undefined ? task : { ...task, result: scope.render(result, who) };
  });
  server.setRequestHandler('tasks/update', { params: TaskParams }, async (params, ctx) => {
    const { who, options: request } = caller(ctx);
    // The SDK lifts `inputResponses` off the params (SEP-2322), as on a retried call.
    await tasks.update(who.subject, params.taskId, ctx.mcpReq.inputResponses ?? {}, request);
    return {};
  });
  server.setRequestHandler('tasks/cancel', { params: TaskParams }, async (params, ctx) => {
    const { who, options: request } = caller(ctx);
    await tasks.cancel(who.subject, params.taskId, request);
    return {};
  });
}

/**
 * X5: tasks as an extension of the gateway, declared to 2026 hosts always (a call of a server
 * that makes no tasks is answered as any call), so that a host that asks once, before the servers
 * are up, knows it (stdio-front.ts); to a 2025 host never, nor its methods served.
 */
export function tasksExtension(tasks: TasksPort): UpstreamExtension {
  return {
    id: TASKS_EXTENSION,
    methods: ['tasks/get', 'tasks/update', 'tasks/cancel'],
    capability: (era) => (era === 'modern' ? {} : undefined),
    register: (server, scope) => {
      if (scope.era === 'modern') register(server, tasks, scope);
    },
  };
}
