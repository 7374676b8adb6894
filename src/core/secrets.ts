/**
 * L2 for every output: values interpolated from the environment (`${VAR}`, the config's secrets)
 * never reach a log line, `/healthz`, the CLI's output or an envelope. One scrubber, built once
 * from the secrets, used at each of those edges.
 *
 * A secret is found in the forms it takes on its way out: as it is, JSON-escaped (once and twice:
 * a downstream's error that quotes a JSON body), and URL-encoded (a downstream that echoes the
 * request URL or a header). Secrets shorter than {@link MIN_SECRET_LENGTH} are not replaced:
 * replacing every "1" or "on" would make every output unreadable and protect nothing.
 */

/** What replaces a secret. */
export const REDACTED = '[REDACTED]';

/** Secrets shorter than this are left alone (see the module comment). */
export const MIN_SECRET_LENGTH = 4;

/** Replaces every secret in a text; the identity when there are no secrets to look for. */
export type Scrubber = (text: string) => string;

/**
 * The scrubber for `secrets`, or undefined when none is long enough to look for (callers skip
 * the work entirely then).
 * @example secretScrubber(['s3cr3t-token'])?.('Bearer s3cr3t-token') // 'Bearer [REDACTED]'
 */
export function secretScrubber(secrets: readonly string[]): Scrubber | undefined {
  const forms = new Set<string>();
  for (const secret of secrets) {
    if (secret.length < MIN_SECRET_LENGTH) continue;
    const escaped = JSON.stringify(secret).slice(1, -1);
    forms.add(secret);
    forms.add(escaped);
    forms.add(JSON.stringify(escaped).slice(1, -1));
    forms.add(encodeURIComponent(secret));
  }
  // Longest first, so a form that contains another is replaced whole.
  const ordered = [...forms].sort((a, b) => b.length - a.length);
  if (ordered.length === 0) return undefined;
  return (text) => {
    let out = text;
    for (const form of ordered) if (out.includes(form)) out = out.split(form).join(REDACTED);
    return out;
  };
}

/**
 * `value` with every string in it scrubbed (keys included), as a new value where anything
 * changed; the same object where nothing did. Total: cycles and non-plain values are left as
 * they are.
 */
export function scrubDeep<T>(value: T, scrub: Scrubber): T {
  const seen = new WeakSet<object>();
  const walk = (node: unknown): unknown => {
    if (typeof node === 'string') return scrub(node);
    if (node === null || typeof node !== 'object' || seen.has(node)) return node;
    seen.add(node);
    if (Array.isArray(node)) {
      let changed = false;
      const out = node.map((item) => {
        const next = walk(item);
        if (next !== item) changed = true;
        return next;
      });
      return changed ? out : node;
    }
    const proto: unknown = Object.getPrototypeOf(node);
    if (proto !== Object.prototype && proto !== null) return node;
    let changed = false;
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(node as Record<string, unknown>)) {
      const nextKey = scrub(key);
      const next = walk(item);
      if (next !== item || nextKey !== key) changed = true;
      // defineProperty: a key such as "__proto__" stays a key, never the prototype.
      Object.defineProperty(out, nextKey, {
        value: next,
        enumerable: true,
        writable: true,
        configurable: true,
      });
    }
    return changed ? out : node;
  };
  return walk(value) as T;
}
