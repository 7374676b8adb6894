/**
 * L2 for every output: values interpolated from the environment (`${VAR}`, the config's secrets)
 * never reach a log line, `/healthz`, the CLI's output or an envelope. One scrubber, built once
 * from the secrets, used at each of those edges.
 *
 * A secret is found in the forms it takes on its way out ({@link secretForms}): as it is,
 * JSON-escaped (a downstream's error that quotes a JSON body), URL-encoded in every way a URL
 * or a form body carries it (a downstream that echoes the request URL), HTML-escaped (its error
 * page), and base64 (a Basic `Authorization` header it echoes). Secrets shorter than {@link MIN_SECRET_LENGTH} are not replaced:
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
    for (const form of secretForms(secret)) if (form.length >= MIN_SECRET_LENGTH) forms.add(form);
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

/** Base64 text shorter than this is not looked for (too likely to occur by chance). */
const MIN_BASE64_SECRET = 8;

/**
 * L2: every form `secret` takes on its way out, as a request carries it and a downstream may
 * echo it: as it is; JSON-escaped once and twice, and with `\uXXXX` for every non-ASCII
 * character (Python's `json.dumps`); percent-encoded as `encodeURIComponent` and `encodeURI` do
 * and as the WHATWG URL serializer does in a query, a path, a fragment, a user or password, and
 * a form body (`+` for a space), each with upper- and lower-case hex; HTML-escaped (an error
 * page); and base64 and base64url (a Basic `Authorization` header), at each of the three offsets
 * the secret can start at within the encoded text (only the characters that depend on the secret
 * alone).
 */
export function secretForms(secret: string): string[] {
  const forms = new Set<string>([secret]);
  const json = JSON.stringify(secret).slice(1, -1);
  forms.add(json);
  forms.add(JSON.stringify(json).slice(1, -1));
  forms.add(json.replace(/[^\x20-\x7e]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`));
  const percent = [encodeURIComponent(secret), encodeURI(secret), ...urlForms(secret)];
  for (const form of percent) {
    forms.add(form);
    forms.add(form.replace(/%[0-9A-F]{2}/g, (hex) => hex.toLowerCase()));
  }
  forms.add(htmlEscape(secret, '&#39;'));
  forms.add(htmlEscape(secret, '&#x27;'));
  if (Buffer.byteLength(secret) >= MIN_BASE64_SECRET) for (const form of base64Forms(secret)) forms.add(form);
  return [...forms];
}

/** How the WHATWG URL serializer writes `secret` in each part of a URL, and in a form body. */
function urlForms(secret: string): string[] {
  const forms: string[] = [];
  const url = new URL('http://h.test/');
  url.username = secret;
  url.password = secret;
  forms.push(url.username, url.password);
  forms.push(new URL(`http://h.test/?${secret.replace(/#/g, '%23')}`).search.slice(1));
  forms.push(new URL(`http://h.test/${secret.replace(/[?#]/g, encodeURIComponent)}`).pathname.slice(1));
  forms.push(new URL(`http://h.test/#${secret}`).hash.slice(1));
  forms.push(new URLSearchParams({ s: secret }).toString().slice(2));
  return forms;
}

function htmlEscape(text: string, apostrophe: string): string {
  const entities: Record<string, string> = {
    '&': '&amp;',
    '<': '&lt;',
    '>': '&gt;',
    '"': '&quot;',
    "'": apostrophe,
  };
  return text.replace(/[&<>"']/g, (c) => entities[c] as string);
}

/**
 * The base64 and base64url characters that encode `secret` alone, for each of the three
 * alignments it can have within a longer text (`user:secret` in a Basic header).
 */
function base64Forms(secret: string): string[] {
  const bytes = Buffer.from(secret, 'utf8');
  const forms: string[] = [];
  for (let offset = 0; offset < 3; offset++) {
    const encoded = Buffer.concat([Buffer.alloc(offset), bytes]).toString('base64');
    // Character i holds bits [6i, 6i + 6): keep those within the secret's bits.
    const core = encoded.slice(Math.ceil((8 * offset) / 6), Math.floor((8 * (offset + bytes.length)) / 6));
    forms.push(core, core.replace(/\+/g, '-').replace(/\//g, '_'));
  }
  return forms;
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
