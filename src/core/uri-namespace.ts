/**
 * Resource URI namespacing (CONTRACT U5): how a downstream's resource and resource-template URIs
 * are shown upstream, and how a URI read upstream is routed back. Pure.
 *
 * The rule: a namespaced URI is `<uri prefix>+<the downstream URI, verbatim>`, e.g.
 * `files+file:///notes/a.md` or `docs+https://example.com/{page}`. The URI prefix becomes part
 * of the URI's scheme, so the result is still a valid RFC 3986 URI (a scheme is
 * `ALPHA *( ALPHA / DIGIT / "+" / "-" / "." )`, as in `git+ssh:`), and everything after the `+` is
 * the downstream's own text: authority, path, query and template variables are untouched.
 *
 * Why this shape (compare FastMCP 3's `Namespace`, which inserts a path segment after `://`:
 * `data://info` → `data://api/info`): it works for every scheme, including those without an
 * authority (`urn:`, `data:`, `mailto:`), it never changes which host a URI names, and a
 * template's variables stay after the prefix, so any expansion of an exposed template still
 * starts with the prefix. A URI prefix contains no `+`, so the reverse rule is: split at the FIRST
 * `+`, look the part before it up in a table of URI prefixes (case-insensitively, since schemes
 * are), forward the rest. Static resources do not even need that: they are a table lookup of the
 * exposed URI.
 *
 * One exception (U6): an MCP App's `ui://` resource keeps its scheme, since hosts render only
 * `ui://` URIs; the prefix becomes its first segment instead (`ui://<prefix>/<rest>`), and the
 * reverse rule splits at the first `/` after `ui://`.
 */

/** Characters of a URI scheme after the first letter, minus `+` (our split mark). */
const SCHEME_CHAR = /^[a-z0-9.-]$/;

/**
 * The URI prefix of a server: global prefix and server prefix (T1's parts) joined by `.`, lower
 * case, every character outside `[a-z0-9.-]` replaced by `-`, and `x` put in front when it would
 * not start with a letter (a scheme must). `""` when both prefixes are empty: that server's URIs
 * are exposed unchanged.
 * @example uriPrefix(undefined, 'my_fs') // 'my-fs'
 * @example uriPrefix('acme', 'fs') // 'acme.fs'
 */

/** F7: the scheme of the gateway's own file links (upstream/file-store.ts), never a downstream's. */
export const FILE_URI_PREFIX = 'mcp-normalizer://files/';

export function uriPrefix(globalPrefix: string | undefined, serverPrefix: string): string {
  const joined = [globalPrefix ?? '', serverPrefix].filter((part) => part.length > 0).join('.');
  if (joined.length === 0) return '';
  let out = '';
  for (const char of joined.toLowerCase()) out += SCHEME_CHAR.test(char) ? char : '-';
  return /^[a-z]/.test(out) ? out : `x${out}`;
}

/**
 * U5: the exposed form of a downstream URI or URI template.
 * @example namespaceUri('files', 'file:///notes/{name}') // 'files+file:///notes/{name}'
 * @example namespaceUri('', 'file:///a') // 'file:///a'
 */
export function namespaceUri(prefix: string, uri: string): string {
  if (prefix === '') return uri;
  // U6: an MCP App's resource must stay a `ui://` URI (hosts render only those): the prefix
  // goes in front of its authority instead, `ui://pdf-viewer/app.html` → `ui://pdf/pdf-viewer/app.html`.
  // X1: a skill's URI stays a `skill://` URI the same way (hosts look for the scheme).
  const kept = keptScheme(uri);
  if (kept !== undefined) return `${kept}${prefix}/${uri.slice(kept.length)}`;
  return `${prefix}+${uri}`;
}

/** The scheme of MCP Apps' UI resources (ext-apps SEP-1865). */
const UI_SCHEME = 'ui://';
/** The scheme of skills (SEP-2640). */
export const SKILL_SCHEME = 'skill://';

/** U6, X1: the scheme `uri` keeps when it is namespaced (`ui://`, `skill://`), in lower case. */
function keptScheme(uri: string): string | undefined {
  if (isUiUri(uri)) return UI_SCHEME;
  const head = uri.slice(0, SKILL_SCHEME.length).toLowerCase();
  return uri.length > SKILL_SCHEME.length && head === SKILL_SCHEME ? SKILL_SCHEME : undefined;
}

/**
 * U6: whether `uri` is an MCP Apps UI resource URI (`ui://…`, the scheme in any case).
 * @example isUiUri('ui://pdf-viewer/mcp-app.html') // true
 */
export function isUiUri(uri: string): boolean {
  return uri.length > UI_SCHEME.length && uri.slice(0, UI_SCHEME.length).toLowerCase() === UI_SCHEME;
}

/**
 * U5, the reverse rule: the URI prefix (lower-cased) and the downstream URI of a namespaced URI,
 * or `undefined` when the URI has no `+` in its scheme. Whether the prefix belongs to a server is
 * the caller's table lookup.
 * @example splitNamespacedUri('files+file:///notes/a.md') // { prefix: 'files', uri: 'file:///notes/a.md' }
 * @example splitNamespacedUri('ui://pdf/viewer/app.html') // { prefix: 'pdf', uri: 'ui://viewer/app.html' }
 */
export function splitNamespacedUri(uri: string): { prefix: string; uri: string } | undefined {
  const kept = keptScheme(uri);
  if (kept !== undefined) {
    // U6, X1: `ui://<prefix>/<the downstream URI after ui://>`, and `skill://` alike.
    const rest = uri.slice(kept.length);
    const slash = rest.indexOf('/');
    if (slash <= 0) return undefined;
    return { prefix: rest.slice(0, slash).toLowerCase(), uri: `${kept}${rest.slice(slash + 1)}` };
  }
  const plus = uri.indexOf('+');
  if (plus <= 0) return undefined;
  const prefix = uri.slice(0, plus);
  // Only a scheme part counts: "a b+c" or "x/y+z" are not namespaced.
  if (!/^[A-Za-z][A-Za-z0-9.-]*$/.test(prefix)) return undefined;
  return { prefix: prefix.toLowerCase(), uri: uri.slice(plus + 1) };
}

/**
 * The literal start of a URI template: everything before its first `{`. Used to route reads of
 * expanded templates of unprefixed servers (see docs/resources.md): the longest literal start that
 * the URI begins with wins.
 * @example templateLiteral('file:///logs/{name}') // 'file:///logs/'
 */
export function templateLiteral(uriTemplate: string): string {
  const brace = uriTemplate.indexOf('{');
  return brace < 0 ? uriTemplate : uriTemplate.slice(0, brace);
}
