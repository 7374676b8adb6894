/**
 * OpenTelemetry traces (O2): a span per upstream tools/call and one per downstream call, with
 * server, tool, era and error type. The W3C trace context comes from the upstream request's
 * `_meta` (`traceparent`, `tracestate`, where MCP carries it) and goes into the downstream
 * request's `_meta`. Only `@opentelemetry/api` is used here, and only once something has
 * registered with it (the SDK {@link startTracingFromEnv} starts when the `OTEL_*` variables ask
 * for traces, or an embedding program's): until then nothing is loaded (P1: ~45 ms of the
 * gateway's first second) and every span is {@link UNTRACED}.
 */
import { createRequire } from 'node:module';
import type * as OtelApi from '@opentelemetry/api';
import type { Context, Span, SpanContext, TextMapGetter, TextMapSetter } from '@opentelemetry/api';

/**
 * Where every copy of the API of major version 1 keeps what was registered with it (its
 * `global-utils`): present once an SDK registered a provider, a propagator or a context manager.
 */
const REGISTRY = Symbol.for('opentelemetry.js.api.1');
const requireApi = createRequire(import.meta.url);

/** The API once loaded, our tracer, and the provider the API delegates to while none is registered. */
interface Otel {
  readonly api: typeof OtelApi;
  readonly tracer: OtelApi.Tracer;
  readonly noop: unknown;
}
let otel: Otel | undefined;

/** The API, loaded (synchronously, its CommonJS build) once something registered with it. */
function loadedApi(): Otel | undefined {
  if (otel !== undefined) return otel;
  if (!(REGISTRY in globalThis)) return undefined;
  const api = requireApi('@opentelemetry/api') as typeof OtelApi;
  otel = {
    api,
    tracer: api.trace.getTracer('mcp-normalizer'),
    noop: new api.ProxyTracerProvider().getDelegate(),
  };
  return otel;
}

/** O2: the API while a tracer provider is registered; undefined otherwise: nothing is built per call then (bench:inproc). */
function tracing(): Otel | undefined {
  const loaded = loadedApi();
  if (loaded === undefined) return undefined;
  const provider = loaded.api.trace.getTracerProvider() as { getDelegate?: () => unknown };
  return provider.getDelegate?.() === loaded.noop ? undefined : loaded;
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

/** The API's `INVALID_SPAN_CONTEXT`: no trace, no span, not sampled. */
const INVALID_SPAN_CONTEXT: SpanContext = {
  traceId: '00000000000000000000000000000000',
  spanId: '0000000000000000',
  traceFlags: 0,
};

/** A span that records nothing, as the API's own `NonRecordingSpan` (every method a no-op). */
const NON_RECORDING: Span = {
  spanContext: () => INVALID_SPAN_CONTEXT,
  setAttribute: () => NON_RECORDING,
  setAttributes: () => NON_RECORDING,
  addEvent: () => NON_RECORDING,
  addLink: () => NON_RECORDING,
  addLinks: () => NON_RECORDING,
  setStatus: () => NON_RECORDING,
  updateName: () => NON_RECORDING,
  end: () => undefined,
  isRecording: () => false,
  recordException: () => undefined,
};

/** A context that holds nothing, for {@link UNTRACED} (never handed to the API: see below). */
const EMPTY_CONTEXT: Context = {
  getValue: () => undefined,
  setValue: () => EMPTY_CONTEXT,
  deleteValue: () => EMPTY_CONTEXT,
};

/** Every span while tracing is off. */
const UNTRACED: Traced = { span: NON_RECORDING, context: EMPTY_CONTEXT };

/** A tools/call span's name: the tool's, when it exists (O2). */
function callSpanName(name: string | undefined): string {
  return name === undefined ? 'tools/call' : `tools/call ${name}`;
}

/** The attributes every tools/call span has (O2). */
function callSpanAttributes(name: string | undefined, era: string): Record<string, string> {
  return {
    'mcp.method.name': 'tools/call',
    ...(name === undefined ? {} : { 'mcp.tool.name': name }),
    'mcp.era': era,
  };
}

/** O2: the span of one upstream tools/call, parented to the request's `traceparent` if any. */
export function startCallSpan(
  name: string | undefined,
  meta: Record<string, unknown> | undefined,
  era: string,
  principal?: string,
): Traced {
  const otel = tracing();
  if (otel === undefined) return UNTRACED;
  const { api, tracer } = otel;
  const root = api.ROOT_CONTEXT;
  const parent = meta === undefined ? root : api.propagation.extract(root, meta, getter);
  // A name no tool has is an agent's input: it names no span (1,202 span names from 1,208 calls).
  const span = tracer.startSpan(
    callSpanName(name),
    {
      kind: api.SpanKind.SERVER,
      attributes: {
        ...callSpanAttributes(name, era),
        // I2: who called (the token's subject, never the token).
        ...(principal === undefined ? {} : { 'enduser.id': principal }),
      },
    },
    parent,
  );
  return { span, context: api.trace.setSpan(parent, span) };
}

/**
 * O2, M2: the span of one tool call a code-mode snippet makes, a child of `parent` (the run's
 * span); the downstream call's span is its child in turn.
 */
export function startSnippetCallSpan(parent: Context, name: string | undefined, era: string): Traced {
  const otel = tracing();
  if (otel === undefined || parent === EMPTY_CONTEXT) return UNTRACED;
  const { api, tracer } = otel;
  // As for the model's calls, a name no tool has names no span (it is the snippet's input).
  const span = tracer.startSpan(
    callSpanName(name),
    { kind: api.SpanKind.INTERNAL, attributes: { ...callSpanAttributes(name, era), 'mcp.code_mode': true } },
    parent,
  );
  return { span, context: api.trace.setSpan(parent, span) };
}

/** O2: the span of one downstream call, a child of `parent` (the upstream call's). */
export function startDownstreamSpan(
  parent: Context | undefined,
  server: string,
  tool: string,
  era: string | undefined,
): Traced {
  const otel = tracing();
  if (otel === undefined) return UNTRACED;
  const { api, tracer } = otel;
  // The upstream span's context, unless it had none (tracing began during the call).
  const base = parent === undefined || parent === EMPTY_CONTEXT ? api.context.active() : parent;
  const span = tracer.startSpan(
    `tools/call ${server}/${tool}`,
    {
      kind: api.SpanKind.CLIENT,
      attributes: {
        'mcp.method.name': 'tools/call',
        'mcp.server': server,
        'mcp.tool.name': tool,
        'mcp.era': era ?? '',
      },
    },
    base,
  );
  return { span, context: api.trace.setSpan(base, span) };
}

/** O2: the trace context of `traced` as `_meta` keys for the downstream request (none when not sampled). */
export function traceMeta(traced: Traced): Record<string, unknown> | undefined {
  const otel = traced.span.isRecording() ? loadedApi() : undefined;
  if (otel === undefined) return undefined;
  const carrier: Record<string, unknown> = {};
  otel.api.propagation.inject(traced.context, carrier, setter);
  return Object.keys(carrier).length > 0 ? carrier : undefined;
}

/** Ends `span` with the call's outcome: `error.type` is the R3 error type of a failure. */
export function endSpan(span: Span, errorType: string | undefined, name?: string): void {
  if (!span.isRecording()) return;
  // O2: a call that came before its tool was known (the catalog was still being built) is named
  // once it is: a name is given here only for a tool that exists.
  if (name !== undefined) {
    span.updateName(callSpanName(name));
    span.setAttribute('mcp.tool.name', name);
  }
  if (errorType !== undefined) {
    span.setAttribute('error.type', errorType);
    // A recording span came from the API, so it is loaded.
    const code = loadedApi()?.api.SpanStatusCode.ERROR;
    if (code !== undefined) span.setStatus({ code, message: errorType });
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
