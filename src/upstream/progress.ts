/**
 * P3: a tools/call's progress, forwarded upstream only when the upstream asked for it (a progress
 * token in its request's `_meta`), with ITS token. A notification that cannot be delivered (the
 * client went away) is logged at debug: the call goes on.
 */
import type { ServerContext } from '@modelcontextprotocol/server';
import type { Logger } from 'pino';
import type { ProgressSink } from './parked-call.js';

/** The request's progress sink; undefined when it sent no progress token. */
export function progressSink(
  ctx: Pick<ServerContext, 'mcpReq'>,
  forwarded: () => void,
  logger: Pick<Logger, 'debug'>,
): ProgressSink {
  const token = ctx.mcpReq._meta?.progressToken;
  if (token === undefined) return undefined;
  const requestId = ctx.mcpReq.id;
  return (update) => {
    forwarded();
    ctx.mcpReq
      .notify({
        method: 'notifications/progress',
        params: {
          progressToken: token,
          progress: update.progress,
          ...(update.total !== undefined ? { total: update.total } : {}),
          ...(update.message !== undefined ? { message: update.message } : {}),
        },
      })
      .catch((error: unknown) => {
        logger.debug({ err: error, requestId }, 'progress notification not delivered');
      });
  };
}
