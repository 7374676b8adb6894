/**
 * The checks every HTTP request passes before it reaches MCP (CONTRACT U2): Host and Origin
 * against an allow-list (DNS-rebinding protection), then the optional bearer token. Pure
 * functions over header values, so the rules are table-tested without a socket.
 */
import { createHash, timingSafeEqual } from 'node:crypto';

/**
 * Lower-cased host name of a `Host` header value or allow-list entry, without port and without
 * IPv6 brackets: `127.0.0.1:3333` → `127.0.0.1`, `[::1]:3333` → `::1`, `LocalHost` → `localhost`.
 * Returns `undefined` for an empty or malformed value.
 */
export function hostName(value: string | undefined): string | undefined {
  if (value === undefined) return undefined;
  const trimmed = value.trim().toLowerCase();
  if (trimmed === '') return undefined;
  if (trimmed.startsWith('[')) {
    const end = trimmed.indexOf(']');
    if (end < 0) return undefined;
    const rest = trimmed.slice(end + 1);
    // After the bracket only a port may follow: `[::1]:3333`.
    if (rest !== '' && !/^:\d*$/.test(rest)) return undefined;
    return trimmed.slice(1, end);
  }
  const colons = trimmed.split(':').length - 1;
  // A bare IPv6 address (allowed in an allow-list entry, never valid in a Host header with a port).
  if (colons > 1) return trimmed;
  const name = colons === 1 ? trimmed.slice(0, trimmed.indexOf(':')) : trimmed;
  return name === '' ? undefined : name;
}

/** Host name of an `Origin` header value (`http://localhost:5173` → `localhost`); `null` → undefined. */
export function originHostName(origin: string): string | undefined {
  try {
    const url = new URL(origin);
    return hostName(url.hostname);
  } catch {
    return undefined;
  }
}

/** What {@link checkRequestHeaders} decided. */
export type GuardVerdict =
  { readonly ok: true } | { readonly ok: false; readonly status: 401 | 403; readonly message: string };

/** Options of {@link createRequestGuard}. */
export interface GuardOptions {
  /**
   * Host names accepted in `Host` and `Origin`, compared without the port (U2).
   * @example ['localhost', '127.0.0.1']
   */
  readonly allowedHosts: readonly string[];
  /** The bearer token every request must carry; undefined or empty: none required. */
  readonly token?: string;
}

/** The subset of request headers the guard reads (node lower-cases header names). */
export interface GuardHeaders {
  /** O1: check the token only, not Host and Origin (a scraper sends a pod address as Host). */
  readonly tokenOnly?: boolean;
  readonly host?: string | undefined;
  readonly origin?: string | undefined;
  readonly authorization?: string | undefined;
}

/**
 * Builds the U2 check: Host first (a missing or foreign one → 403), then Origin (absent is fine:
 * non-browser clients send none; a foreign or unparsable one, `null` included → 403), then the
 * token when one is configured (401).
 */
export function createRequestGuard(options: GuardOptions): (headers: GuardHeaders) => GuardVerdict {
  const allowed = new Set<string>();
  for (const entry of options.allowedHosts) {
    const name = hostName(entry);
    if (name !== undefined) allowed.add(name);
  }
  const expected = options.token !== undefined && options.token !== '' ? digest(options.token) : undefined;
  return (headers) => {
    const host = hostName(headers.host);
    if (headers.tokenOnly !== true && (host === undefined || !allowed.has(host))) {
      return {
        ok: false,
        status: 403,
        message: `Forbidden: Host ${JSON.stringify(headers.host ?? '')} is not allowed`,
      };
    }
    if (headers.tokenOnly !== true && headers.origin !== undefined) {
      const origin = originHostName(headers.origin);
      if (origin === undefined || !allowed.has(origin)) {
        return {
          ok: false,
          status: 403,
          message: `Forbidden: Origin ${JSON.stringify(headers.origin)} is not allowed`,
        };
      }
    }
    if (expected !== undefined) {
      const presented = bearerToken(headers.authorization);
      // Compare digests of equal length, so neither the length nor the content leaks by timing.
      if (presented === undefined || !timingSafeEqual(digest(presented), expected)) {
        return { ok: false, status: 401, message: 'Unauthorized: a valid bearer token is required' };
      }
    }
    return { ok: true };
  };
}

/** The token of an `Authorization: Bearer <token>` header (scheme case-insensitive). */
export function bearerToken(authorization: string | undefined): string | undefined {
  if (authorization === undefined) return undefined;
  const match = /^Bearer[ \t]+(\S+)\s*$/i.exec(authorization);
  return match?.[1];
}

function digest(value: string): Buffer {
  return createHash('sha256').update(value, 'utf8').digest();
}
