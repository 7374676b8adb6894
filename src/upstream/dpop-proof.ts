/**
 * I8: the gateway as a resource server of DPoP-bound tokens (RFC 9449 §4.3, §7): a request with
 * `Authorization: DPoP <token>` carries one `DPoP` proof, a JWT the caller signed with the key
 * its token is bound to. The proof is checked here: its type and algorithm, its public key and
 * signature, the method and URL it is for, its age, the token it goes with (`ath`), and that its
 * `jti` was not seen before in its window (a replayed proof is refused). The key's thumbprint is
 * returned, for the caller to hold against the token's `cnf.jkt`.
 *
 * The `jti`s seen are kept in this process, bounded; a proof replayed to another replica within
 * the window is not caught there (written down in docs/identity.md).
 */
import { createHash } from 'node:crypto';
import { calculateJwkThumbprint, decodeProtectedHeader, importJWK, jwtVerify, type JWK } from 'jose';

/** The asymmetric JWS algorithms a proof may use (RFC 9449 §11.6: none, no MAC). */
export const DPOP_ALGS = [
  'ES256',
  'ES384',
  'ES512',
  'RS256',
  'RS384',
  'RS512',
  'PS256',
  'PS384',
  'PS512',
  'EdDSA',
];

/** How far a proof's `iat` may be from now, either way, in seconds. */
const WINDOW_SECONDS = 300;
/** The most `jti`s held; past it the oldest go (a proof older than its window is refused anyway). */
const MAX_JTIS = 100_000;

/** What a proof must match: the request, and the token it came with. */
export interface ProofRequest {
  /** The DPoP header(s) as received. */
  readonly proof: string | readonly string[] | undefined;
  readonly method: string;
  /** The request's URL as the caller addressed it, without query or fragment. */
  readonly url: string;
  readonly token: string;
}

/** The key's RFC 7638 thumbprint, or why the proof is refused. */
export type ProofVerdict =
  { readonly ok: true; readonly jkt: string } | { readonly ok: false; readonly why: string };

/** `url` without its query and fragment, as RFC 9449 compares `htu`. */
function withoutQuery(url: string): string | undefined {
  try {
    const parsed = new URL(url);
    return `${parsed.origin}${parsed.pathname}`;
  } catch {
    return undefined;
  }
}

/**
 * @example
 * const proofs = createProofChecker(() => Date.now());
 * const verdict = await proofs.check({ proof: req.headers.dpop, method: 'POST', url, token });
 */
export function createProofChecker(nowMs: () => number) {
  /** jti → when it may be forgotten (ms). */
  const seen = new Map<string, number>();

  function remember(jti: string, now: number): boolean {
    for (const [old, until] of seen) {
      if (until > now && seen.size < MAX_JTIS) break;
      seen.delete(old);
    }
    if (seen.has(jti)) return false;
    seen.set(jti, now + 2 * WINDOW_SECONDS * 1000);
    return true;
  }

  async function check(request: ProofRequest): Promise<ProofVerdict> {
    const { proof } = request;
    if (proof === undefined || proof.length === 0) return { ok: false, why: 'no DPoP proof' };
    if (typeof proof !== 'string' || proof.includes(','))
      return { ok: false, why: 'more than one DPoP proof' };
    let header;
    try {
      header = decodeProtectedHeader(proof);
    } catch {
      return { ok: false, why: 'the DPoP proof is not a JWT' };
    }
    if (header.typ !== 'dpop+jwt') return { ok: false, why: 'the DPoP proof’s typ is not dpop+jwt' };
    if (typeof header.alg !== 'string' || !DPOP_ALGS.includes(header.alg))
      return { ok: false, why: 'the DPoP proof’s alg is not an asymmetric one' };
    const jwk = header.jwk as JWK | undefined;
    if (jwk === undefined || typeof jwk !== 'object') return { ok: false, why: 'the DPoP proof has no jwk' };
    if ('d' in jwk || 'k' in jwk) return { ok: false, why: 'the DPoP proof’s jwk is not a public key' };
    let payload;
    try {
      ({ payload } = await jwtVerify(proof, await importJWK(jwk, header.alg), { algorithms: DPOP_ALGS }));
    } catch {
      return { ok: false, why: 'the DPoP proof’s signature does not verify' };
    }
    const now = nowMs();
    if (typeof payload.jti !== 'string' || payload.jti === '')
      return { ok: false, why: 'the DPoP proof has no jti' };
    if (payload['htm'] !== request.method.toUpperCase())
      return { ok: false, why: 'the DPoP proof is for another method' };
    const htu = typeof payload['htu'] === 'string' ? withoutQuery(payload['htu']) : undefined;
    if (htu === undefined || htu !== withoutQuery(request.url))
      return { ok: false, why: 'the DPoP proof is for another URL' };
    if (typeof payload.iat !== 'number' || Math.abs(now / 1000 - payload.iat) > WINDOW_SECONDS)
      return { ok: false, why: 'the DPoP proof is too old or from the future' };
    const ath = createHash('sha256').update(request.token).digest('base64url');
    if (payload['ath'] !== ath) return { ok: false, why: 'the DPoP proof is not for this token (ath)' };
    if (!remember(`${payload.jti}`, now)) return { ok: false, why: 'the DPoP proof was used before' };
    return { ok: true, jkt: await calculateJwkThumbprint(jwk) };
  }

  return { check };
}

/** A DPoP request refused: the RFC 9449 error code and why. */
export class DpopRefused extends Error {
  constructor(
    readonly code: 'invalid_token' | 'invalid_dpop_proof',
    message: string,
  ) {
    super(message);
  }

  /** Its 401 answer: the `WWW-Authenticate` challenge of RFC 9449 §7.1, with the algorithms a proof may use. */
  response(): { ok: false; status: 401; headers: Record<string, string>; body: string } {
    const description = this.message.replace(/["\\]/g, '');
    const challenge = `DPoP error="${this.code}", error_description="${description}", algs="${DPOP_ALGS.join(' ')}"`;
    return {
      ok: false,
      status: 401,
      headers: { 'content-type': 'application/json', 'www-authenticate': challenge },
      body: JSON.stringify({ error: this.code, error_description: this.message }),
    };
  }
}

/** I8: what a DPoP proof is checked against: its header(s), the method and the path asked for. */
export interface DpopRequest {
  readonly proof: string | readonly string[] | undefined;
  readonly method: string;
  readonly path: string;
}

/** A verified token as far as DPoP reads it: its end and its `cnf.jkt` (in `extra.jkt`). */
type Verified = { readonly expiresAt?: number; readonly extra?: Record<string, unknown> };

/** What a DPoP request is checked with: its token's verification and the proof checker. */
export interface DpopCheck<T extends Verified> {
  readonly verify: (token: string) => Promise<T>;
  readonly proofs: ReturnType<typeof createProofChecker>;
  readonly nowMs: () => number;
}

/**
 * I8: `Authorization: DPoP <token>` with its proof: the token verified as a Bearer one is, bound
 * to a key (`cnf.jkt`), and the proof signed by that very key; throws {@link DpopRefused}.
 */
export async function verifyDpopRequest<T extends Verified>(
  token: string,
  request: Omit<ProofRequest, 'token'>,
  check: DpopCheck<T>,
): Promise<T> {
  const auth = await check.verify(token);
  if (auth.expiresAt !== undefined && auth.expiresAt * 1000 < check.nowMs())
    throw new DpopRefused('invalid_token', 'the token has expired');
  const bound = auth.extra?.['jkt'];
  if (typeof bound !== 'string')
    throw new DpopRefused('invalid_token', 'the token is not bound to a DPoP key');
  const verdict = await check.proofs.check({ ...request, token });
  if (!verdict.ok) throw new DpopRefused('invalid_dpop_proof', verdict.why);
  if (verdict.jkt !== bound) throw new DpopRefused('invalid_token', 'the token is bound to another key');
  return auth;
}
