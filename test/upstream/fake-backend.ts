/**
 * A scripted ToolBackend for upstream tests: it records every call that would reach a
 * downstream, so a test can prove that a refused call reached none.
 */
import type { Tool } from '@modelcontextprotocol/server';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import { pino } from 'pino';
import type { CallSignal } from '../../src/core/call-signal.js';
import type { FailureResult, Result } from '../../src/core/result.js';
import { failure, ok } from '../../src/core/result.js';
import { createUpstreamServer } from '../../src/upstream/server.js';
import type {
  CallOptions,
  PreparedForward,
  ToolBackend,
  UpstreamDeps,
  UpstreamServer,
} from '../../src/upstream/server.js';

/** One recorded downstream call. */
export interface RecordedCall {
  readonly server: string;
  readonly tool: string;
  readonly arguments: Record<string, unknown>;
  readonly signal: CallSignal;
  readonly progress: boolean;
}

/** How the fake answers a forwarded call. */
/** The upstream server always hands a call its signal. */
export type Script = (
  call: PreparedForward,
  options: CallOptions & { readonly signal: CallSignal },
) => Promise<Result>;

export const ECHO_TOOL: Tool = {
  name: 'demo_echo',
  description: 'Echo the text back.',
  inputSchema: {
    type: 'object',
    properties: { text: { type: 'string', minLength: 1 } },
    required: ['text'],
    additionalProperties: false,
    $defs: { unused: { type: 'string' } },
  },
  annotations: { readOnlyHint: true },
};

/** A backend with one tool, `demo_echo` → server `demo`, tool `echo`; `script` answers calls. */
export function fakeBackend(script?: Script): ToolBackend & { calls: RecordedCall[]; tools: Tool[] } {
  const calls: RecordedCall[] = [];
  const tools: Tool[] = [ECHO_TOOL];
  return {
    calls,
    tools,
    listTools: () => tools,
    prepareCall(name, args): PreparedForward | FailureResult {
      if (!tools.some((tool) => tool.name === name)) {
        return failure('unknown_tool', `Unknown tool "${name}"`, {
          errorData: { suggestions: ['demo_echo'] },
        });
      }
      const text = args?.['text'];
      if (typeof text !== 'string' || text === '') {
        return failure('invalid_arguments', 'text: must be a non-empty string', {
          errorData: { issues: [{ path: '/text', message: 'must be a non-empty string' }] },
        });
      }
      return { kind: 'forward', server: 'demo', tool: name.replace(/^demo_/, ''), arguments: args ?? {} };
    },
    callTool(call, given) {
      const options = { ...given, signal: given.signal ?? AbortSignal.abort('no signal given') };
      calls.push({
        server: call.server,
        tool: call.tool,
        arguments: call.arguments,
        signal: options.signal,
        progress: options.onProgress !== undefined,
      });
      if (script !== undefined) return script(call, options);
      return Promise.resolve(
        ok(call.arguments['text'], { meta: { server: call.server, tool: call.tool, source: 'text' } }),
      );
    },
  };
}

/** The upstream server on `backend`: format `results`, media `artifacts`, a silent logger, plus `extra`. */
export function testUpstream(backend: ToolBackend, extra: Partial<UpstreamDeps> = {}): UpstreamServer {
  return createUpstreamServer({
    backend,
    output: { format: 'results', media: 'artifacts' },
    logger: pino({ level: 'silent' }),
    ...extra,
  });
}

/**
 * {@link testUpstream} with an SDK v1 client over InMemoryTransport; `cleanups` gets their close. `connect`
 * as `upstream.connect` takes it (`direct`: the stdio hot path, direct-calls.ts).
 */
export async function wireUpstream(
  backend: ToolBackend,
  cleanups: (() => Promise<void>)[],
  extra: Partial<UpstreamDeps> = {},
  connect: { readonly direct?: boolean } = {},
): Promise<{ client: Client; upstream: UpstreamServer }> {
  const upstream = testUpstream(backend, extra);
  const [clientSide, serverSide] = InMemoryTransport.createLinkedPair();
  await upstream.connect(serverSide, connect);
  const client = new Client({ name: 'test', version: '1.0.0' });
  await client.connect(clientSide);
  cleanups.push(async () => {
    await client.close();
    await upstream.close();
  });
  return { client, upstream };
}
