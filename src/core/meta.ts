/**
 * A downstream's `_meta`, carried upstream (T13, N12). Pure.
 *
 * `_meta` is how servers talk to hosts beside the protocol: MCP Apps hang a tool's UI on
 * `_meta.ui.resourceUri` and hide app-only tools with `_meta.ui.visibility`; FastMCP marks a
 * wrapped string result with `_meta.fastmcp.wrap_result`. It is kept, with two changes: keys in
 * the protocol's reserved `io.modelcontextprotocol/` namespace are the gateway's own to set on its
 * connection (a downstream's related-task or progress bookkeeping means nothing upstream), as is
 * `progressToken`, a request's key that the hosts' SDKs type strictly even on a result (SDK 1.x
 * rejects a whole answer whose `_meta.progressToken` is `{}` or `1.5`), and a `ui://` URI
 * anywhere inside names one of that server's resources, so it is rewritten to the exposed URI
 * (U6), as the resource itself is.
 */
import { isJsonObject, type JsonObject } from './json.js';
import { canonicalUri } from './uri-canonical.js';
import { isUiUri, namespaceUri } from './uri-namespace.js';

/** The protocol's reserved `_meta` prefix: keys under it are ours, never a downstream's. */
export const RESERVED_META_PREFIX = 'io.modelcontextprotocol/';

/** Keys a request's `_meta` owns: a downstream's value names its own request, never the host's. */
const REQUEST_META_KEYS: ReadonlySet<string> = new Set(['progressToken']);

/** Deeper than this, `_meta` is copied as it is (no real server nests so far; a cycle cannot loop). */
const MAX_DEPTH = 32;

/** U6, U8: a `ui://` URI as the resource lists show it: namespaced, in its canonical form. */
function exposedUi(uriPrefix: string, uri: string): string {
  const canonical = canonicalUri(namespaceUri(uriPrefix, uri));
  return typeof canonical === 'string' ? canonical : uri;
}

function rewrite(value: unknown, uriPrefix: string, depth: number): unknown {
  if (typeof value === 'string') return isUiUri(value) ? exposedUi(uriPrefix, value) : value;
  if (depth >= MAX_DEPTH || typeof value !== 'object' || value === null) return value;
  if (Array.isArray(value)) return value.map((item) => rewrite(item, uriPrefix, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [key, item] of Object.entries(value)) out[key] = rewrite(item, uriPrefix, depth + 1);
  return out;
}

/**
 * The `_meta` to show upstream for a downstream's `_meta`, or `undefined` when nothing is left.
 * @param uriPrefix the server's URI prefix (`uriPrefix()`); `""` leaves URIs as they are
 * @example carriedMeta({ ui: { resourceUri: 'ui://viewer/app.html' } }, 'pdf') // { ui: { resourceUri: 'ui://pdf/viewer/app.html' } }
 * @example carriedMeta({ 'io.modelcontextprotocol/related-task': { taskId: 't' } }, 'pdf') // undefined
 * @example carriedMeta({ progressToken: {} }, '') // undefined
 */
export function carriedMeta(meta: unknown, uriPrefix: string): JsonObject | undefined {
  if (!isJsonObject(meta)) return undefined;
  const out: Record<string, unknown> = {};
  let kept = 0;
  for (const [key, value] of Object.entries(meta)) {
    if (key.startsWith(RESERVED_META_PREFIX) || REQUEST_META_KEYS.has(key)) continue;
    out[key] = uriPrefix === '' ? value : rewrite(value, uriPrefix, 1);
    kept += 1;
  }
  return kept > 0 ? (out as JsonObject) : undefined;
}

/** MCP Apps' view of a tool (ext-apps SEP-1865), read from its `_meta`. */
export interface AppTool {
  /** The UI resource the host renders the tool's results with, as the downstream names it. */
  readonly resourceUri?: string;
  /** Who may call it: `model` (the agent) and/or `app` (the tool's UI). Default: both. */
  readonly visibility: readonly ('model' | 'app')[];
}

/**
 * U6: the tool's MCP Apps metadata, or `undefined` for a tool that has none (`_meta.ui` with a
 * `resourceUri` or a `visibility`, or the deprecated flat `ui/resourceUri`).
 * @example appTool({ ui: { visibility: ['app'] } }) // { visibility: ['app'] }
 */
export function appTool(meta: unknown): AppTool | undefined {
  if (!isJsonObject(meta)) return undefined;
  const ui = isJsonObject(meta['ui']) ? meta['ui'] : undefined;
  const flat = meta['ui/resourceUri'];
  const resourceUri =
    typeof ui?.['resourceUri'] === 'string' ? ui['resourceUri'] : typeof flat === 'string' ? flat : undefined;
  const listed = Array.isArray(ui?.['visibility'])
    ? ui['visibility'].filter((who): who is 'model' | 'app' => who === 'model' || who === 'app')
    : undefined;
  if (resourceUri === undefined && listed === undefined) return undefined;
  return {
    ...(resourceUri !== undefined ? { resourceUri } : {}),
    visibility: listed ?? ['model', 'app'],
  };
}
