/**
 * Prompts, resources, resource templates and completions on the aggregated server (CONTRACT U5).
 * Lists are served from memory (the backend's prebuilt index); gets, reads and completions are
 * routed by the backend. Unlike tools/call these methods have no `isError` convention: an unknown
 * name or URI, or a downstream failure, is a JSON-RPC error (the backend throws an error with a JSON-RPC `code`,
 * e.g. InvalidParams naming close matches).
 */
import type {
  Server,
  CompleteRequestParams,
  CompleteResult,
  GetPromptResult,
  Prompt,
  ReadResourceResult,
  Resource,
  ResourceTemplateType,
  ServerCapabilities,
} from '@modelcontextprotocol/server';

/** Per-request options of the routed {@link FeatureBackend} methods. */
export interface FeatureRequestOptions {
  /** The upstream request's cancellation; its reason is always an AbortError. */
  readonly signal: AbortSignal;
}

/** What the server needs for U5; the composition root wires the index and the pool behind it. */
export interface FeatureBackend {
  /** prompts/list, from memory. May wait for the first connection round, like tools/list. */
  listPrompts(): readonly Prompt[] | Promise<readonly Prompt[]>;
  /** resources/list, from memory. */
  listResources(): readonly Resource[] | Promise<readonly Resource[]>;
  /** resources/templates/list, from memory. */
  listResourceTemplates(): readonly ResourceTemplateType[] | Promise<readonly ResourceTemplateType[]>;
  /** prompts/get by exposed name; throws a JSON-RPC error for an unknown name or a failure. */
  getPrompt(
    name: string,
    args: Record<string, string> | undefined,
    options: FeatureRequestOptions,
  ): Promise<GetPromptResult>;
  /** resources/read by exposed URI; throws a JSON-RPC error for an unknown URI or a failure. */
  readResource(uri: string, options: FeatureRequestOptions): Promise<ReadResourceResult>;
  /** completion/complete by exposed reference; throws a JSON-RPC error for an unknown one. */
  complete(params: CompleteRequestParams, options: FeatureRequestOptions): Promise<CompleteResult>;
}

/**
 * U5: the capabilities the server announces for {@link FeatureBackend}: only what is built (P8's
 * spirit upstream): list_changed for both lists, completions, and no resource `subscribe`.
 */
export const FEATURE_CAPABILITIES: ServerCapabilities = Object.freeze({
  prompts: { listChanged: true },
  resources: { listChanged: true },
  completions: {},
});

/**
 * Registers the six U5 handlers on `server`. `signalOf` turns the SDK's per-request signal into
 * the one handed to the backend (see `cancellationSignal` in server.ts).
 */
export function registerFeatureHandlers(
  server: Server,
  backend: FeatureBackend,
  signalOf: (signal: AbortSignal) => AbortSignal,
): void {
  server.setRequestHandler('prompts/list', async () => ({
    prompts: [...(await backend.listPrompts())],
  }));
  server.setRequestHandler('resources/list', async () => ({
    resources: [...(await backend.listResources())],
  }));
  server.setRequestHandler('resources/templates/list', async () => ({
    resourceTemplates: [...(await backend.listResourceTemplates())],
  }));
  server.setRequestHandler('prompts/get', (request, ctx) =>
    backend.getPrompt(request.params.name, request.params.arguments, { signal: signalOf(ctx.mcpReq.signal) }),
  );
  server.setRequestHandler('resources/read', (request, ctx) =>
    backend.readResource(request.params.uri, { signal: signalOf(ctx.mcpReq.signal) }),
  );
  server.setRequestHandler('completion/complete', (request, ctx) =>
    backend.complete(request.params, { signal: signalOf(ctx.mcpReq.signal) }),
  );
}
