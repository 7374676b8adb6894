/**
 * D4, O4: the browser's secrets of a sign-in: a random value set as a cookie, kept here only as
 * its SHA-256, and compared in constant time when the browser comes back.
 */
import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';

/** The SHA-256 of `value`. */
export const digest = (value: string): Buffer => createHash('sha256').update(value, 'utf8').digest();

/** A random value of 192 bits, base64url. */
export const randomToken = (): string => randomBytes(24).toString('base64url');

/** The cookie named `name` in a Cookie header. */
export function cookieOf(header: string | undefined, name: string): string | undefined {
  for (const part of (header ?? '').split(';')) {
    const at = part.indexOf('=');
    if (at > 0 && part.slice(0, at).trim() === name) return part.slice(at + 1).trim();
  }
  return undefined;
}

/** Whether `presented` is the value whose digest was `kept` (constant time). */
export function sameDigest(presented: string | undefined, kept: Buffer | undefined): boolean {
  return presented !== undefined && kept !== undefined && timingSafeEqual(digest(presented), kept);
}
