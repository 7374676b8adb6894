/**
 * OpenTelemetry traces (O2): a span per upstream tools/call and one per downstream call, with
 * server, tool, era and error type. The W3C trace context comes from the upstream request's
 * `_meta` (`traceparent`, `tracestate`, where MCP carries it) and goes into the downstream
 * request's `_meta`. Only `@opentelemetry/api` is used here: with no SDK registered (the `OTEL_*`
 * variables unset, see {@link startTracingFromEnv} in cli) every call below is the API's no-op.
 */
import {
  context,
  INVALID_SPAN_CONTEXT,
  propagation,
  ROOT_CONTEXT,
  SpanKind,
  SpanStatusCode,
  trace,
} from '@opentelemetry/api';
import type { Context, Span, TextMapGetter, TextMapSetter } from '@opentelemetry/api';

const tracer = trace.getTracer('mcp-normalizer');

/** The API's no-op provider, as the global provider delegates to it until an SDK is registered. */
const NOOP_PROVIDER = delegateProvider();

function delegateProvider(): unknown {
  return (trace.getTracerProvider() as { getDelegate?: () => unknown }).getDelegate?.();
}

/** O2: false while no SDK is registered: nothing is built per call then (bench:inproc). */
function tracing(): boolean {
  return delegateProvider() !== NOOP_PROVIDER;
}

/** The keys MCP uses for the W3C trace context in `_meta` (SEP-414). */
const TRACE_KEYS = ['traceparent', 'tracestate'] as const;

const getter: TextMapGetter<Record<string, unknown>> = {
  keys: (carrier) => TRACE_KEYS.filter((key) => typeof carrier[key] === 'string'),
  get: (carrier, key) => {
    const value = carrier[key];
    return typeof value === 'string' ? value : undefined;
  },
};

const setter: TextMapSetter<Record<string, unknown>> = {
  set: (carrier, key, value) => {
    carrier[key] = value;
  },
};

/** A span and the context it is the active span of (pass it to what the span covers). */
export interface Traced {
  readonly span: Span;
  readonly context: Context;
}

/** Every span while tracing is off: the API's own non-recording span in the root context. */
const UNTRACED: Traced = { span: trace.wrapSpanContext(INVALID_SPAN_CONTEXT), context: ROOT_CONTEXT };

/** O2: the span of one upstream tools/call, parented to the request's `traceparent` if any. */
export function startCallSpan(
  name: string | undefined,
  meta: Record<string, unknown> | undefined,
  era: string,
  principal?: string,
): Traced {
  if (!tracing()) return UNTRACED;
  const parent = meta === undefined ? ROOT_CONTEXT : propagation.extract(ROOT_CONTEXT, meta, getter);
  // A name no tool has is an agent's input: it names no span (1,202 span names from 1,208 calls).
  const span = tracer.startSpan(
    name === undefined ? 'tools/call' : `tools/call ${name}`,
    {
      kind: SpanKind.SERVER,
      attributes: {
        'mcp.method.name': 'tools/call',
        ...(name === undefined ? {} : { 'mcp.tool.name': name }),
        'mcp.era': era,
        // I2: who called (the token's subject, never the token).
        ...(principal === undefined ? {} : { 'enduser.id': principal }),
      },
    },
    parent,
  );
  return { span, context: trace.setSpan(parent, span) };
}

/** O2: the span of one downstream call, a child of `parent` (the upstream call's). */
export function startDownstreamSpan(
  parent: Context | undefined,
  server: string,
  tool: string,
  era: string | undefined,
): Traced {
  if (!tracing()) return UNTRACED;
  const base = parent ?? context.active();
  const span = tracer.startSpan(
    `tools/call ${server}/${tool}`,
    {
      kind: SpanKind.CLIENT,
      attributes: {
        'mcp.method.name': 'tools/call',
        'mcp.server': server,
        'mcp.tool.name': tool,
        'mcp.era': era ?? '',
      },
    },
    base,
  );
  return { span, context: trace.setSpan(base, span) };
}

/** O2: the trace context of `traced` as `_meta` keys for the downstream request (none when not sampled). */
export function traceMeta(traced: Traced): Record<string, unknown> | undefined {
  if (!traced.span.isRecording()) return undefined;
  const carrier: Record<string, unknown> = {};
  propagation.inject(traced.context, carrier, setter);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** Ends `span` with the call's outcome: `error.type` is the R3 error type of a failure. */
export function endSpan(span: Span, errorType: string | undefined, name?: string): void {
  if (!span.isRecording()) return;
  // O2: a call that came before its tool was known (the catalog was still being built) is named
  // once it is: a name is given here only for a tool that exists.
  if (name !== undefined) {
    span.updateName(`tools/call ${name}`);
    span.setAttribute('mcp.tool.name', name);
  }
  if (errorType !== undefined) {
    span.setAttribute('error.type', errorType);
    span.setStatus({ code: SpanStatusCode.ERROR, message: errorType });
  }
  span.end();
}

/** The `OTEL_*` settings that ask for traces to be exported. */
const EXPORT_KEYS = [
  'OTEL_TRACES_EXPORTER',
  'OTEL_EXPORTER_OTLP_ENDPOINT',
  'OTEL_EXPORTER_OTLP_TRACES_ENDPOINT',
];

/**
 * O2: starts the OpenTelemetry Node SDK when the standard `OTEL_*` variables ask for traces
 * (an exporter or an OTLP endpoint set, `OTEL_SDK_DISABLED` not `true`); the SDK reads them
 * itself. Nothing is loaded otherwise. Over stdio the `console` exporter is refused: stdout is
 * the protocol. Resolves with the function that flushes and stops it (a no-op when not started).
 */
export async function startTracingFromEnv(
  env: Readonly<Record<string, string | undefined>>,
  stdio: boolean,
  warn: (message: string) => void,
): Promise<() => Promise<void>> {
  const wanted = EXPORT_KEYS.some((key) => (env[key] ?? '') !== '') && env['OTEL_TRACES_EXPORTER'] !== 'none';
  if (!wanted || env['OTEL_SDK_DISABLED'] === 'true') return async () => {};
  if (stdio && (env['OTEL_TRACES_EXPORTER'] ?? '').split(',').includes('console')) {
    warn(
      'OTEL_TRACES_EXPORTER=console writes to stdout, which is the MCP channel over stdio: traces are off',
    );
    return async () => {};
  }
  const { NodeSDK } = await import('@opentelemetry/sdk-node');
  const sdk = new NodeSDK({
    serviceName: env['OTEL_SERVICE_NAME'] ?? 'mcp-normalizer',
    instrumentations: [],
  });
  sdk.start();
  return () => sdk.shutdown().catch(() => {});
}
