/**
 * U8: the one canonical form of a URI the gateway exposes or accepts. A URI a host sends is put
 * in this form once, at the upstream edge, and the access rules, the routing, the skill digest
 * check, the input-round keys and the caches all use that one value; a URI a downstream lists is
 * put in it before it is exposed, so what a host reads back is what the rules were checked on.
 * Pure.
 *
 * The form, by RFC 3986 §6.2.2 (syntax-based normalization), plus the gateway's own namespacing:
 * - the scheme in lower case (§3.1: schemes are case-insensitive), the U5 prefix included;
 * - percent-encoding normalized (§6.2.2.2): an encoded unreserved character (`%7E`, `%2e`) is
 *   decoded, every other escape written with upper-case hex digits;
 * - the host of an authority in lower case (§6.2.2.1; user information and port as they were);
 *   for `skill://` and `ui://` the authority is the U5 prefix or the downstream's own host;
 * - the prefixed form of a kept scheme (U6, X1) written as that scheme: `s+skill://x/SKILL.md` is
 *   `skill://s/x/SKILL.md`, `p+ui://a` is `ui://p/a`, the one form each is listed and routed in;
 * - dot segments (§5.2.4): a skill URI that has one (`.`, `..`, also encoded), an encoded `/` or a
 *   `\` in its path is refused, as the SDK's own skills extension refuses it; any other
 *   hierarchical URI has them removed, as RFC 3986 resolves them.
 * Anything else (the path's case, reserved escapes such as `%2F`, the query) is left as it is: a
 * server may read them differently, so they are not equal.
 */

/** Why a URI has no canonical form (the host's -32602 says it). */
export interface RefusedUri {
  readonly refused: string;
}

const SCHEME = /^([A-Za-z][A-Za-z0-9+.-]*):/;
const UNRESERVED = /^[A-Za-z0-9._~-]$/;
/** U6, X1: schemes kept when namespaced (the prefix goes in front of their authority). */
const KEPT = ['skill', 'ui'] as const;

/** §6.2.2.2: escapes of unreserved characters decoded, the rest in upper case. */
function normalizeEscapes(text: string): string {
  return text.replace(/%([0-9A-Fa-f]{2})/g, (_escape, hex: string) => {
    const char = String.fromCharCode(parseInt(hex, 16));
    return UNRESERVED.test(char) ? char : `%${hex.toUpperCase()}`;
  });
}

/** §5.2.4: `path` with its `.` and `..` segments resolved. */
export function removeDotSegments(path: string): string {
  const absolute = path.startsWith('/');
  const out: string[] = [];
  const segments = (absolute ? path.slice(1) : path).split('/');
  segments.forEach((segment, i) => {
    const last = i === segments.length - 1;
    if (segment === '.' || segment === '..') {
      if (segment === '..') out.pop();
      // A trailing dot segment leaves the folder: `/a/b/..` is `/a/`.
      if (last) out.push('');
    } else out.push(segment);
  });
  return (absolute ? '/' : '') + out.join('/');
}

/** `authority` with its host in lower case (user information and port kept). */
function lowerHost(authority: string): string {
  const at = authority.lastIndexOf('@');
  const user = at < 0 ? '' : authority.slice(0, at + 1);
  return user + authority.slice(at + 1).toLowerCase();
}

/** The split of `rest` (what follows `scheme:`) into authority, path and the query or fragment. */
function parts(rest: string): { authority?: string; path: string; tail: string } {
  const end = rest.search(/[?#]/);
  const head = end < 0 ? rest : rest.slice(0, end);
  const tail = end < 0 ? '' : rest.slice(end);
  if (!head.startsWith('//')) return { path: head, tail };
  const slash = head.indexOf('/', 2);
  return slash < 0
    ? { authority: head.slice(2), path: '', tail }
    : { authority: head.slice(2, slash), path: head.slice(slash), tail };
}

/** X1: why a skill URI's path is refused (a dot segment, an encoded slash, a backslash). */
function skillPathProblem(path: string): string | undefined {
  if (/%2F|%5C|\\/i.test(path)) return 'an encoded "/" or a "\\" in its path';
  return path.split('/').some((segment) => segment === '.' || segment === '..')
    ? 'a "." or ".." segment in its path'
    : undefined;
}

/**
 * U8: the canonical form of `uri`, or why it has none.
 * @example canonicalUri('SKILL://S/a/SKILL.md') // 'skill://s/a/SKILL.md'
 * @example canonicalUri('s+skill://a/SKILL.md') // 'skill://s/a/SKILL.md'
 * @example canonicalUri('files+file:///notes/../a%7e.md') // 'files+file:///a~.md'
 * @example canonicalUri('skill://s/a/%2e%2e/b') // { refused: 'a "." or ".." segment in its path' }
 */
export function canonicalUri(uri: string): string | RefusedUri {
  const escaped = normalizeEscapes(uri);
  const scheme = SCHEME.exec(escaped)?.[1]?.toLowerCase();
  // Not a URI with a scheme (a relative reference, a bare name): only its escapes change.
  if (scheme === undefined) return escaped;
  const rest = escaped.slice(scheme.length + 1);
  const plus = scheme.indexOf('+');
  if (plus > 0) {
    // U5's prefixed form: the prefix, then the downstream URI in its own canonical form.
    const inner = canonicalUri(`${scheme.slice(plus + 1)}:${rest}`);
    if (typeof inner !== 'string') return inner;
    const prefix = scheme.slice(0, plus);
    const kept = KEPT.find((name) => inner.startsWith(`${name}://`));
    return kept === undefined ? `${prefix}+${inner}` : `${kept}://${prefix}/${inner.slice(kept.length + 3)}`;
  }
  const { authority, path, tail } = parts(rest);
  let canonicalPath = path;
  if (scheme === 'skill') {
    const problem = skillPathProblem(`${authority ?? ''}/${path}`);
    if (problem !== undefined) return { refused: `The skill URI ${uri} has ${problem}` };
  } else if (authority !== undefined || path.startsWith('/')) canonicalPath = removeDotSegments(path);
  return `${scheme}:${authority === undefined ? '' : `//${lowerHost(authority)}`}${canonicalPath}${tail}`;
}

/** Whether {@link canonicalUri} refused a URI. */
export function isRefusedUri(value: string | RefusedUri): value is RefusedUri {
  return typeof value !== 'string';
}
