/**
 * D7: the DPoP (RFC 9449) signing keys of the gateway's downstream clients. The SDK signs the
 * proofs (`DpopSession`); this file decides where a session's key comes from:
 *
 * - a machine grant (`client_credentials`, `jwt_bearer`, `id_jag`) keeps its tokens in memory
 *   only, so its key lives as long as the process does: made once, never exported;
 * - a person's login (`oauth`) keeps its tokens in the token store, and a DPoP-bound token is
 *   only good with its key: the key is kept there beside them (the same 0600 file, or the shared
 *   store the logins go to), as a private JWK, and never logged.
 *
 * A stored key is data from a file: its shape is checked and a key that does not import is
 * replaced by a new one (its tokens then fail at the server, which asks for a new login).
 */
import { DpopSession, generateDpopKeyPair, type DpopKeyPair } from '@modelcontextprotocol/client';
import { calculateJwkThumbprint, type JWK } from 'jose';
import { isRecord } from '../core/json.js';

/** The algorithm of every key made here: ES256, which every DPoP server accepts. */
const ALG = 'ES256';
const CURVE = { name: 'ECDSA', namedCurve: 'P-256' } as const;

/** An EC P-256 private JWK as stored: `kty`, `crv`, `x`, `y`, `d`, each a short base64url string. */
export type StoredDpopKey = { readonly kty: 'EC'; readonly crv: 'P-256' } & Readonly<
  Record<'x' | 'y' | 'd', string>
>;

const B64URL = /^[A-Za-z0-9_-]{20,100}$/;

/** Whether `value` has the shape of a stored key (its fields checked, nothing else kept). */
export function isStoredDpopKey(value: unknown): value is StoredDpopKey {
  return (
    isRecord(value) &&
    value['kty'] === 'EC' &&
    value['crv'] === 'P-256' &&
    ['x', 'y', 'd'].every((field) => typeof value[field] === 'string' && B64URL.test(value[field]))
  );
}

/** A session whose key lives as long as this process (machine grants). */
export function processSession(): () => Promise<DpopSession> {
  let session: Promise<DpopSession> | undefined;
  return () => (session ??= DpopSession.create({ alg: ALG }));
}

async function keyPairOf(stored: StoredDpopKey): Promise<DpopKeyPair> {
  const { kty, crv, x, y, d } = stored;
  const publicJwk: JWK = { kty, crv, x, y };
  const privateKey = await crypto.subtle.importKey('jwk', { kty, crv, x, y, d }, CURVE, false, ['sign']);
  const publicKey = await crypto.subtle.importKey('jwk', publicJwk, CURVE, true, ['verify']);
  return { privateKey, publicKey, publicJwk, thumbprint: await calculateJwkThumbprint(publicJwk), alg: ALG };
}

/**
 * A session for a stored login: the key `load` finds when it imports, else a new one given to
 * `save` first (so the tokens the session's first token request brings are bound to a kept key).
 */
export async function storedSession(
  load: () => unknown,
  save: (key: StoredDpopKey) => void,
): Promise<DpopSession> {
  const found = load();
  if (isStoredDpopKey(found)) {
    try {
      return await DpopSession.create({ keyPair: await keyPairOf(found) });
    } catch {
      // A key that does not import is replaced below.
    }
  }
  const made = await generateDpopKeyPair({ alg: ALG, extractable: true });
  const jwk = (await crypto.subtle.exportKey('jwk', made.privateKey)) as Record<string, string>;
  const stored = { kty: 'EC', crv: 'P-256', x: jwk['x'], y: jwk['y'], d: jwk['d'] };
  if (!isStoredDpopKey(stored)) throw new Error('DPoP: the key made could not be exported');
  save(stored);
  return DpopSession.create({ keyPair: await keyPairOf(stored) });
}
