/**
 * The outcome step (R4, L1, O1, O4): every answer to a `tools/call` passes here once, whoever made
 * it (the gateway's own refusal, the normalizer's judgement of a downstream's result): its
 * instruction applied by the layers that hold for its tool and server, its end counted in
 * `/metrics` and on the status page, and its one end line logged. Never throws: logging must not
 * turn an answer into a rejection.
 */
import type { Logger } from 'pino';
import type { Config } from '../config/types.js';
import type { ExposedTool } from '../core/catalog.js';
import { applyInstruction, type InstructionLayers } from '../core/instructions.js';
import type { Result } from '../core/result.js';
import { serverLogger } from '../log/logger.js';
import { logCallEnd } from '../log/call-log.js';
import type { Metrics } from './metrics.js';
import type { ServerSource } from './servers.js';

/** Who an answer is for: the name it was called by, its request, its caller. */
export interface AnsweredCall {
  readonly exposedName: string;
  readonly requestId: string | number | undefined;
  readonly principal?: string | undefined;
}

/** O4: one call ended, for the status page (constant time). */
export type CallEnded = (
  tool: string,
  server: string | undefined,
  result: Result,
  principal?: string,
) => void;

/** The outcome step of one gateway, and the per-server loggers it logs with. */
export interface Outcome {
  /** R4, L1, O1, O4 for one answer of `entry` (undefined: a name no tool has). */
  answer<R extends Result>(result: R, entry: ExposedTool | undefined, call: AnsweredCall): R;
  /** One child logger per server, made once (a child per call would be an allocation per call). */
  loggerOf(server: string | undefined): Logger;
}

/** @example const outcome = createOutcome({ config, servers, logger, metrics }); */
export function createOutcome(deps: {
  readonly config: Config;
  readonly servers: ServerSource;
  readonly logger: Logger;
  readonly metrics?: Metrics;
  /** O4: every call's outcome, for the status page. */
  readonly onCallEnded?: CallEnded;
}): Outcome {
  const { config, servers, logger } = deps;
  const loggers = new Map<string, Logger>();

  function loggerOf(server: string | undefined): Logger {
    if (server === undefined) return logger;
    let child = loggers.get(server);
    if (child === undefined) {
      child = serverLogger(logger, server);
      loggers.set(server, child);
    }
    return child;
  }

  function layers(entry: ExposedTool | undefined, serverName: string | undefined): InstructionLayers {
    const server = serverName === undefined ? undefined : servers.get(serverName);
    return {
      global: config.instructions,
      ...(server !== undefined ? { server: server.instructions } : {}),
      ...(entry?.instructions.failure !== undefined ? { tool: entry.instructions.failure } : {}),
      ...(entry?.instructions.success !== undefined ? { success: entry.instructions.success } : {}),
    };
  }

  return {
    loggerOf,
    answer(result, entry, call) {
      const answered = applyInstruction(result, layers(entry, result.meta.server ?? entry?.server));
      // O1: label values come from the catalog (never the name an agent sent).
      deps.metrics?.callEnded(entry?.server ?? answered.meta.server, entry?.tool, answered);
      deps.onCallEnded?.(
        entry?.name ?? call.exposedName,
        entry?.server ?? answered.meta.server,
        answered,
        call.principal,
      );
      try {
        logCallEnd(loggerOf(answered.meta.server ?? entry?.server), answered, {
          exposedName: call.exposedName,
          requestId: call.requestId,
          ...(call.principal !== undefined ? { principal: call.principal } : {}),
        });
      } catch {
        // The answer stands even if the log line could not be written.
      }
      return answered;
    },
  };
}
